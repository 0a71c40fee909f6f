package http

import (
	"github.com/msgbench/msgbench/internal/wire"
)

// exchanger is one multiplexed connection (HTTP/2 or HTTP/3) that publishes POSTs with
// msgbench's own framing, as h2load and real clients do: a request's HEADERS and its DATA leave
// in one write (one TCP segment, or one QUIC packet, when they fit), nothing is allocated per
// request in the steady state, and each response comes back through the responseFunc the
// connection was opened with, called from the connection's own reader. net/http's and quic-go's
// clients cost a goroutine hop, an http.Request and an http.Response per message and wrote
// HEADERS and DATA separately (docs/benchmarks-http.md).
type exchanger interface {
	// Post sends one POST with payload as its body and returns once the connection has taken it
	// (written, or buffered with flush false): the caller may reuse payload then. It may block
	// on the peer's stream limit or flow control. An error means the request was not sent and
	// no responseFunc call follows for it.
	Post(payload []byte, sentAt int64, flush bool) error
	// Flush writes whatever Post buffered.
	Flush() error
	// Err is non-nil once the connection takes no new request: closed by either side, failed,
	// or told to go away (GOAWAY) — requests already sent may still get their responses.
	Err() error
	// Close closes the connection at once. It may be called from within a responseFunc.
	// Every request Post accepted gets exactly one responseFunc call, before or during Close
	// (with an error for those left without a response); none starts after Close returns, but
	// one a reader had begun may still be running (the publisher's drivers.Gate covers that).
	// A connection that failed on its own keeps its readers until Close.
	Close() error
	// Counters are the connection's wire counters; they stay valid after Close (a snapshot
	// taken before the socket closed).
	Counters() wire.Counters
}

// responseFunc receives one request's outcome: its sentAt, the response's status, or err when
// the request ended without a response (stream reset, connection lost or closed). HTTP/2 calls
// it from its one reader; HTTP/3 from up to inflight readers at once (a stream each).
type responseFunc func(sentAt int64, status int, err error)

// requestHead is what every request of a publisher carries besides its body.
type requestHead struct {
	scheme, authority, path string
	auth                    string // "Basic …" or ""
}
