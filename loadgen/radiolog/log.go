package radiolog

import (
	"context"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/msgbench/msgbench/energy"
	"github.com/msgbench/msgbench/loadgen/drivers"
)

// coalesce is how close two reads (or two writes) of one connection must be to be recorded as
// one event: a burst of publishes is one stretch on the air either way (the meter puts packets
// back to back), and a fast run's log stays small.
const coalesce = time.Millisecond

// Log records, per device, every read and write of the connections it dials: a device is a
// client (drivers.ClientOf on the dial's context), with all its connections. Safe for
// concurrent use.
type Log struct {
	now     func() time.Duration
	mu      sync.Mutex
	devices map[string]*device
}

type device struct {
	mu    sync.Mutex
	conns []*conn
}

// New is an empty log whose events are stamped by now (the engine's clock).
func New(now func() time.Duration) *Log {
	return &Log{now: now, devices: map[string]*device{}}
}

// Wrap is dial with each connection's reads and writes recorded for its client. A connection
// dialled for no client is not recorded.
func (l *Log) Wrap(dial drivers.DialFunc) drivers.DialFunc {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		nc, err := dial(ctx, network, address)
		id := drivers.ClientOf(ctx)
		if err != nil || id == "" {
			return nc, err
		}
		l.mu.Lock()
		d := l.devices[id]
		if d == nil {
			d = &device{}
			l.devices[id] = d
		}
		l.mu.Unlock()
		c := &conn{log: l, dev: d, udp: strings.HasPrefix(network, "udp")}
		d.mu.Lock()
		d.conns = append(d.conns, c)
		if !c.udp {
			c.events = append(c.events, Event{At: l.now(), Kind: Open})
		}
		d.mu.Unlock()
		rc := &recorded{Conn: nc, c: c}
		if _, ok := nc.(syscall.Conn); ok {
			return &recordedSys{rc}, nil
		}
		return rc, nil
	}
}

// Timelines is every device's radio timeline by the rules.
func (l *Log) Timelines(r Rules) [][]energy.Packet {
	l.mu.Lock()
	devices := make([]*device, 0, len(l.devices))
	for _, d := range l.devices {
		devices = append(devices, d)
	}
	l.mu.Unlock()
	out := make([][]energy.Packet, 0, len(devices))
	for _, d := range devices {
		d.mu.Lock()
		conns := make([]Conn, len(d.conns))
		for i, c := range d.conns {
			conns[i] = Conn{UDP: c.udp, Events: append([]Event(nil), c.events...)}
		}
		d.mu.Unlock()
		out = append(out, Packets(conns, r))
	}
	return out
}

// conn is one connection's events; its device's mutex guards them.
type conn struct {
	log    *Log
	dev    *device
	udp    bool
	closed bool
	events []Event
}

func (c *conn) record(up bool, n int) {
	if n <= 0 {
		return
	}
	at := c.log.now()
	c.dev.mu.Lock()
	defer c.dev.mu.Unlock()
	if k := len(c.events) - 1; !c.udp && k >= 0 {
		if last := &c.events[k]; last.Kind == Data && last.Up == up && at-last.At < coalesce {
			last.Bytes += n
			return
		}
	}
	c.events = append(c.events, Event{At: at, Up: up, Bytes: n})
}

func (c *conn) close() {
	at := c.log.now()
	c.dev.mu.Lock()
	defer c.dev.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	if !c.udp {
		c.events = append(c.events, Event{At: at, Kind: Close})
	}
}

// recorded is a connection whose reads and writes are recorded.
type recorded struct {
	net.Conn
	c *conn
}

func (r *recorded) Read(b []byte) (int, error) {
	n, err := r.Conn.Read(b)
	r.c.record(false, n)
	return n, err
}

func (r *recorded) Write(b []byte) (int, error) {
	n, err := r.Conn.Write(b)
	r.c.record(true, n)
	return n, err
}

func (r *recorded) Close() error {
	r.c.close()
	return r.Conn.Close()
}

// SetReadBuffer and SetWriteBuffer reach the socket's, when it has them (a UDP client sizes its
// buffers).
func (r *recorded) SetReadBuffer(n int) error {
	if s, ok := r.Conn.(interface{ SetReadBuffer(int) error }); ok {
		return s.SetReadBuffer(n)
	}
	return nil
}

func (r *recorded) SetWriteBuffer(n int) error {
	if s, ok := r.Conn.(interface{ SetWriteBuffer(int) error }); ok {
		return s.SetWriteBuffer(n)
	}
	return nil
}

// recordedSys is a recorded socket that exposes its file descriptor (syscall.Conn), for the
// clients that wait on it (MQTT's idle reader) or set its options (QUIC's path MTU discovery).
// Reads and writes still go through the recorded connection.
type recordedSys struct{ *recorded }

func (r *recordedSys) SyscallConn() (syscall.RawConn, error) {
	return r.Conn.(syscall.Conn).SyscallConn()
}
