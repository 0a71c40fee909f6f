// Package quicconn opens QUIC client connections for msgbench's drivers (mqtt-quic, HTTP/3) on a
// UDP socket made by drivers.Config.Dial, and counts what crosses that socket below QUIC's
// encryption: bytes and datagrams, each direction.
package quicconn

import (
	"net"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/msgbench/msgbench/internal/wire"
)

// PacketConn adapts a connected UDP socket (what Dial("udp", …) returns) to the net.PacketConn
// quic-go wants, counting every datagram. It deliberately does not offer ReadMsgUDP/WriteMsgUDP:
// quic-go then writes one datagram per call (no GSO batching), so each WriteTo is exactly one
// datagram on the wire and the counts are exact.
type PacketConn struct {
	c      net.Conn
	remote net.Addr

	bytesSent, bytesReceived, sent, received atomic.Int64
}

// NewPacketConn wraps a connected datagram socket.
func NewPacketConn(c net.Conn) *PacketConn { return &PacketConn{c: c, remote: c.RemoteAddr()} }

// sysPacketConn is a PacketConn whose socket is a real one: quic-go may then set the Don't
// Fragment bit (path MTU discovery) and check buffer sizes through SyscallConn.
type sysPacketConn struct{ *PacketConn }

// SyscallConn exposes the socket.
func (p sysPacketConn) SyscallConn() (syscall.RawConn, error) {
	return p.c.(syscall.Conn).SyscallConn()
}

// forQUIC is p as quic-go should see it: with SyscallConn only when the socket has one (a
// user-space link emulator may hand over a socket that has none).
func (p *PacketConn) forQUIC() net.PacketConn {
	if _, ok := p.c.(syscall.Conn); ok {
		return sysPacketConn{p}
	}
	return p
}

// ReadFrom implements net.PacketConn; every datagram comes from the connected peer.
func (p *PacketConn) ReadFrom(b []byte) (int, net.Addr, error) {
	n, err := p.c.Read(b)
	if n > 0 || err == nil {
		p.received.Add(1)
		p.bytesReceived.Add(int64(n))
	}
	return n, p.remote, err
}

// WriteTo implements net.PacketConn; addr is always the connected peer.
func (p *PacketConn) WriteTo(b []byte, _ net.Addr) (int, error) {
	n, err := p.c.Write(b)
	if err == nil {
		p.sent.Add(1)
		p.bytesSent.Add(int64(n))
	}
	return n, err
}

// Counters returns the bytes and datagrams so far, IP and UDP headers excluded.
func (p *PacketConn) Counters() wire.Counters {
	return wire.Counters{
		BytesSent: p.bytesSent.Load(), BytesReceived: p.bytesReceived.Load(),
		DatagramsSent: p.sent.Load(), DatagramsReceived: p.received.Load(),
	}
}

// Close implements net.PacketConn.
func (p *PacketConn) Close() error { return p.c.Close() }

// LocalAddr implements net.PacketConn.
func (p *PacketConn) LocalAddr() net.Addr { return p.c.LocalAddr() }

// SetDeadline implements net.PacketConn.
func (p *PacketConn) SetDeadline(t time.Time) error { return p.c.SetDeadline(t) }

// SetReadDeadline implements net.PacketConn.
func (p *PacketConn) SetReadDeadline(t time.Time) error { return p.c.SetReadDeadline(t) }

// SetWriteDeadline implements net.PacketConn.
func (p *PacketConn) SetWriteDeadline(t time.Time) error { return p.c.SetWriteDeadline(t) }

// SetReadBuffer lets quic-go size the socket's receive buffer when the socket allows it.
func (p *PacketConn) SetReadBuffer(n int) error {
	if s, ok := p.c.(interface{ SetReadBuffer(int) error }); ok {
		return s.SetReadBuffer(n)
	}
	return nil
}

// SetWriteBuffer lets quic-go size the socket's send buffer when the socket allows it.
func (p *PacketConn) SetWriteBuffer(n int) error {
	if s, ok := p.c.(interface{ SetWriteBuffer(int) error }); ok {
		return s.SetWriteBuffer(n)
	}
	return nil
}
