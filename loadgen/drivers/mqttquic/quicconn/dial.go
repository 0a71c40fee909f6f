package quicconn

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"

	"github.com/quic-go/quic-go"

	"github.com/msgbench/msgbench/internal/wire"
	"github.com/msgbench/msgbench/loadgen/drivers"
)

// Conn is a client QUIC connection on its own UDP socket.
type Conn struct {
	*quic.Conn
	tr *quic.Transport
	pc *PacketConn
}

// Dial opens a UDP socket to address with dial (drivers.Config.Dial semantics: "udp" gives a
// connected socket) and performs the QUIC handshake on it. With early set it returns as soon as
// 0-RTT data may be sent (a session ticket for the server is in tlsConf.ClientSessionCache),
// otherwise once the 1-RTT handshake completed.
func Dial(ctx context.Context, dial drivers.DialFunc, address string, tlsConf *tls.Config, conf *quic.Config, early bool) (*Conn, error) {
	udp, err := dial(ctx, "udp", address)
	if err != nil {
		return nil, err
	}
	pc := NewPacketConn(udp)
	tr := &quic.Transport{Conn: pc.forQUIC()}
	remote := udp.RemoteAddr()
	if remote == nil {
		_ = udp.Close()
		return nil, fmt.Errorf("QUIC to %s: the UDP socket has no peer address", address)
	}
	var qc *quic.Conn
	if early {
		qc, err = tr.DialEarly(ctx, remote, tlsConf, conf)
	} else {
		qc, err = tr.Dial(ctx, remote, tlsConf, conf)
	}
	if err != nil {
		_ = tr.Close()
		_ = udp.Close()
		return nil, fmt.Errorf("QUIC handshake with %s: %w", address, ExplainRefused(err))
	}
	return &Conn{Conn: qc, tr: tr, pc: pc}, nil
}

// ExplainRefused adds what a QUIC CONNECTION_REFUSED from the server usually means to err. A
// quic-go server refuses a connection whose handshake completed while 32 others wait to be
// accepted, or while it shuts down: at a benchmark's rates, the first means the server takes
// new connections faster than its CPU lets it serve them (for example a new connection per
// message, http.keepAlive false, on a busy node).
func ExplainRefused(err error) error {
	var te *quic.TransportError
	if errors.As(err, &te) && te.Remote && te.ErrorCode == quic.ConnectionRefused {
		return fmt.Errorf("%w (the QUIC server refused the connection: its queue of handshaken connections waiting to be accepted was full, or it was shutting down)", err)
	}
	return err
}

// Counters returns the UDP bytes and datagrams of the connection so far.
func (c *Conn) Counters() wire.Counters { return c.pc.Counters() }

// Close closes the QUIC connection (CONNECTION_CLOSE with no error), its transport and socket.
func (c *Conn) Close() error {
	err := c.CloseWithError(0, "")
	_ = c.tr.Close()
	_ = c.pc.Close()
	return err
}

// StreamConn is a QUIC stream seen as a net.Conn, so a stream protocol (MQTT) runs on it
// unchanged. Closing it closes the whole QUIC connection: msgbench runs one session per
// connection.
type StreamConn struct {
	*quic.Stream
	conn *Conn
}

// NewStreamConn wraps s, a stream of c.
func NewStreamConn(c *Conn, s *quic.Stream) *StreamConn { return &StreamConn{Stream: s, conn: c} }

// LocalAddr implements net.Conn.
func (s *StreamConn) LocalAddr() net.Addr { return s.conn.LocalAddr() }

// RemoteAddr implements net.Conn.
func (s *StreamConn) RemoteAddr() net.Addr { return s.conn.RemoteAddr() }

// Close closes the stream's sending side, then the connection.
func (s *StreamConn) Close() error {
	_ = s.Stream.Close()
	return s.conn.Close()
}

// ConnectionState is the TLS state of the stream's QUIC connection.
func (s *StreamConn) ConnectionState() tls.ConnectionState { return s.conn.ConnectionState().TLS }

// Used0RTT reports whether the connection was resumed with 0-RTT data the server accepted.
func (s *StreamConn) Used0RTT() bool { return s.conn.ConnectionState().Used0RTT }
