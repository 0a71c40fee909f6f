// Package wire counts what crosses a client's socket: bytes below TLS, TCP segments and
// retransmissions from the kernel's TCP_INFO, UDP datagrams.
package wire

import (
	"net"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// Counters are the totals of one socket.
type Counters struct {
	BytesSent         int64
	BytesReceived     int64
	SegmentsSent      int64 // TCP only
	SegmentsReceived  int64 // TCP only
	Retransmits       int64 // TCP only
	DatagramsSent     int64 // UDP only
	DatagramsReceived int64 // UDP only
}

// Add adds o to c.
func (c *Counters) Add(o Counters) {
	c.BytesSent += o.BytesSent
	c.BytesReceived += o.BytesReceived
	c.SegmentsSent += o.SegmentsSent
	c.SegmentsReceived += o.SegmentsReceived
	c.Retransmits += o.Retransmits
	c.DatagramsSent += o.DatagramsSent
	c.DatagramsReceived += o.DatagramsReceived
}

// Conn wraps a stream connection and counts the bytes read and written through it. Wrap the
// raw TCP connection and put TLS on top, so TLS records and handshakes are counted.
type Conn struct {
	net.Conn
	sent, received atomic.Int64
}

// NewConn wraps c.
func NewConn(c net.Conn) *Conn { return &Conn{Conn: c} }

// Read implements net.Conn.
func (c *Conn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.received.Add(int64(n))
	return n, err
}

// Write implements net.Conn.
func (c *Conn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.sent.Add(int64(n))
	return n, err
}

// Bytes returns the bytes written and read so far.
func (c *Conn) Bytes() (sent, received int64) { return c.sent.Load(), c.received.Load() }

// Counters returns the byte counts and, for TCP, the kernel's segment and retransmission
// counts. Call it before closing the connection.
func (c *Conn) Counters() Counters {
	out := Counters{BytesSent: c.sent.Load(), BytesReceived: c.received.Load()}
	if info, ok := TCPInfo(c.Conn); ok {
		out.SegmentsSent = int64(info.Segs_out)
		out.SegmentsReceived = int64(info.Segs_in)
		out.Retransmits = int64(info.Total_retrans)
	}
	return out
}

// TCPInfo reads TCP_INFO of a TCP connection.
func TCPInfo(c net.Conn) (*unix.TCPInfo, bool) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil, false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil, false
	}
	var info *unix.TCPInfo
	var gerr error
	if err := raw.Control(func(fd uintptr) {
		info, gerr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	}); err != nil || gerr != nil {
		return nil, false
	}
	return info, true
}
