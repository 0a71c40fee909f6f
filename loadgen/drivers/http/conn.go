package http

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"

	"github.com/quic-go/quic-go/http3"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/wire"
	"github.com/msgbench/msgbench/loadgen/drivers/mqttquic/quicconn"
)

// clientConn is one HTTP connection that carries requests: net/http's for HTTP/1.1 and HTTP/2,
// quic-go's for HTTP/3.
type clientConn interface {
	RoundTrip(*http.Request) (*http.Response, error)
	Close() error
	// Err is non-nil once the connection can take no more requests (closed by either side,
	// or told to go away).
	Err() error
}

// open connects one HTTP connection of the run's version with the client's TLS configuration
// and returns once it is usable (TCP and TLS, or the QUIC handshake, done; with early, as soon
// as 0-RTT requests may be sent), with its wire counters. Every completed handshake is counted.
func (d *driver) open(ctx context.Context, tlsConf *tls.Config, early bool) (clientConn, func() wire.Counters, error) {
	if d.version == v1alpha1.HTTP3 {
		qc, err := quicconn.Dial(ctx, d.cfg.Dialer(), d.cfg.Address, tlsConf, d.quic, early)
		if err != nil {
			return nil, nil, err
		}
		go func() { // a 0-RTT connection completes its handshake later
			select {
			case <-qc.HandshakeComplete():
				cs := qc.ConnectionState()
				d.Note(cs.TLS)
				if cs.Used0RTT {
					d.NoteZeroRTT()
				}
			case <-qc.Context().Done():
			}
		}()
		return h3Conn{(&http3.Transport{}).NewClientConn(qc.Conn), qc}, qc.Counters, nil
	}
	var p http.Protocols
	switch {
	case d.version == v1alpha1.HTTP11:
		p.SetHTTP1(true)
	case d.tls == nil:
		p.SetUnencryptedHTTP2(true) // h2c with prior knowledge
	default:
		p.SetHTTP2(true)
	}
	var counted *wire.Conn
	if tlsConf != nil {
		tlsConf = tlsConf.Clone() // net/http edits its Transport's NextProtos: never share one
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{TLSHandshakeDone: func(cs tls.ConnectionState, err error) {
			if err == nil {
				d.Note(cs)
			}
		}})
	}
	tr := &http.Transport{
		Protocols:       &p,
		TLSClientConfig: tlsConf,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			raw, err := d.cfg.Dialer()(ctx, "tcp", d.cfg.Address)
			if err != nil {
				return nil, err
			}
			counted = wire.NewConn(raw)
			return counted, nil
		},
		DisableCompression: true,
	}
	cc, err := tr.NewClientConn(ctx, d.scheme, d.cfg.Address)
	if err != nil {
		return nil, nil, err
	}
	return stdConn{cc}, counted.Counters, nil
}

// stdConn is net/http's connection; Err also reports one the server told to go away (HTTP/2
// GOAWAY after its idle timeout), which takes no new request but has no fatal error.
type stdConn struct{ *http.ClientConn }

var errGone = errors.New("the server closed the connection to new requests")

func (c stdConn) Err() error {
	if err := c.ClientConn.Err(); err != nil {
		return err
	}
	if c.Available() == 0 && c.InFlight() == 0 {
		return errGone
	}
	return nil
}

// h3Conn closes the QUIC connection and its socket with the HTTP/3 connection.
type h3Conn struct {
	*http3.ClientConn
	qc *quicconn.Conn
}

func (c h3Conn) Close() error { return c.qc.Close() }

func (c h3Conn) Err() error { return context.Cause(c.Context()) }

// handshake waits until the QUIC handshake is complete (a 0-RTT connection's completes after
// its first requests were sent).
func (c h3Conn) handshake(ctx context.Context) error {
	select {
	case <-c.qc.HandshakeComplete():
		return nil
	case <-c.qc.Context().Done():
		return fmt.Errorf("the QUIC handshake did not complete: %w", context.Cause(c.qc.Context()))
	case <-ctx.Done():
		return ctx.Err()
	}
}
