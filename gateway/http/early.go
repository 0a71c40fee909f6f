package http

import (
	"context"
	"net/http"
	"strings"

	"github.com/quic-go/quic-go"
)

// Early data (RFC 8470). A client resuming a TLS session may send its first requests in 0-RTT,
// before the handshake completes. Those packets carry no proof that the client sent them just now:
// an attacker who captured them can send them again, on a new connection, and the server would
// act on each copy — one message published several times. The copy's connection never completes
// its handshake (that takes the client's keys), so a request is safe to act on once the
// handshake of its connection is complete. The gateway serves GET and HEAD (a subscription, safe
// to repeat) at once and answers any other method that arrives before then 425 Too Early, unless
// the benchmark opts in (spec.http.acceptEarlyPublishes); the client retries after the handshake.
//
// Only HTTP/3 takes early data here (crypto/tls has no server-side 0-RTT over TCP); a request
// that a proxy received in early data and forwarded carries "Early-Data: 1" on any version.

// quicConnKey is the context key of the QUIC connection a request came on (http3.Server.ConnContext).
type quicConnKey struct{}

// withQUICConn is http3.Server.ConnContext: requests of conn carry it in their context.
func withQUICConn(ctx context.Context, conn *quic.Conn) context.Context {
	return context.WithValue(ctx, quicConnKey{}, conn)
}

// EarlyDataHeader marks a request that an intermediary received in TLS early data (RFC 8470 §5.1).
const EarlyDataHeader = "Early-Data"

// earlyData reports whether r may be a replay: it came on a QUIC connection whose handshake was
// not complete when the handler started (its request was in 0-RTT packets), or it carries
// Early-Data: 1.
func earlyData(r *http.Request) bool {
	if c, ok := r.Context().Value(quicConnKey{}).(*quic.Conn); ok {
		select {
		case <-c.HandshakeComplete():
		default:
			return true
		}
	}
	for _, v := range r.Header[EarlyDataHeader] {
		// RFC 8470 §5.1: the only value is "1"; several instances (or a list) count as one.
		for part := range strings.SplitSeq(v, ",") {
			if strings.TrimSpace(part) == "1" {
				return true
			}
		}
	}
	return false
}
