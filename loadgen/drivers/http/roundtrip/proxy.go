// Package roundtrip checks msgbench's connect and first-message latencies against the number of
// network round trips each protocol needs (docs/round-trips.md). It has a delay-injecting TCP and
// UDP proxy for tests — a fixed one-way delay per segment or datagram in each direction, and an
// optional serialisation rate — a harness that measures a driver the way the engine does, and
// the table of expected round-trip counts with its tolerance, so the same assertions can run over
// any link emulator.
package roundtrip

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/msgbench/msgbench/loadgen/drivers"
)

// Link is an emulated link: one-way delays and optional rates (bits per second, 0: unlimited)
// per direction. Up is client → server.
type Link struct {
	Up, Down         time.Duration
	UpRate, DownRate int64
}

// RTT is the link's round-trip time without serialisation.
func (l Link) RTT() time.Duration { return l.Up + l.Down }

// pipe delivers packets in order after the direction's delay, serialised at its rate. Bounded:
// a full queue blocks the reader, which back-pressures the sender like a full link buffer.
type pipe struct {
	delay time.Duration
	rate  int64
	free  time.Time // when the emulated transmitter is next idle
	q     chan packet
}

type packet struct {
	data []byte
	due  time.Time
}

const queueLen = 1024

func newPipe(delay time.Duration, rate int64) *pipe {
	return &pipe{delay: delay, rate: rate, q: make(chan packet, queueLen)}
}

// push schedules b (copied) for delivery; called by one reader goroutine.
func (p *pipe) push(b []byte) {
	now := time.Now()
	tx := now
	if p.rate > 0 {
		if p.free.After(tx) {
			tx = p.free
		}
		tx = tx.Add(time.Duration(int64(len(b)) * 8 * int64(time.Second) / p.rate))
		p.free = tx
	}
	p.q <- packet{data: append([]byte(nil), b...), due: tx.Add(p.delay)}
}

// run delivers packets until the queue is closed.
func (p *pipe) run(deliver func([]byte) error) {
	for pk := range p.q {
		if d := time.Until(pk.due); d > 0 {
			time.Sleep(d)
		}
		if deliver(pk.data) != nil {
			for range p.q { // drain so the reader never blocks forever
			}
			return
		}
	}
}

// TCPProxy forwards TCP connections to a target, delaying each segment the reads return.
// A user-space proxy cannot delay the kernel's SYN/SYN-ACK: Dialer adds that round trip.
type TCPProxy struct {
	ln     net.Listener
	target string
	link   Link
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

// NewTCPProxy listens on a free loopback port and forwards to target.
func NewTCPProxy(target string, link Link) (*TCPProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &TCPProxy{ln: ln, target: target, link: link, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is where clients connect.
func (p *TCPProxy) Addr() string { return p.ln.Addr().String() }

func (p *TCPProxy) track(c net.Conn, add bool) {
	p.mu.Lock()
	if add {
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
	p.mu.Unlock()
}

func (p *TCPProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		u, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.track(c, true)
		p.track(u, true)
		p.wg.Add(2)
		go p.forward(c, u, newPipe(p.link.Up, p.link.UpRate))
		go p.forward(u, c, newPipe(p.link.Down, p.link.DownRate))
	}
}

func (p *TCPProxy) forward(src, dst net.Conn, pp *pipe) {
	defer p.wg.Done()
	done := make(chan struct{})
	go func() {
		pp.run(func(b []byte) error { _, err := dst.Write(b); return err })
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite() // pass the EOF on, after the delayed data
		}
		close(done)
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			pp.push(buf[:n])
		}
		if err != nil {
			break
		}
	}
	close(pp.q)
	<-done
	p.track(src, false)
	_ = src.Close()
}

// Close stops the proxy and cuts every connection.
func (p *TCPProxy) Close() error {
	err := p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

// UDPProxy forwards datagrams to a target, one upstream socket per client address, delaying
// each datagram by its direction's delay.
type UDPProxy struct {
	pc     net.PacketConn
	target *net.UDPAddr
	link   Link
	mu     sync.Mutex
	flows  map[string]*flow
	wg     sync.WaitGroup
	served chan struct{} // closed when serve, the only writer of the upward pipes, returned
}

type flow struct {
	up     *net.UDPConn
	toUp   *pipe
	toDown *pipe
}

// NewUDPProxy listens on a free loopback UDP port and forwards to target.
func NewUDPProxy(target string, link Link) (*UDPProxy, error) {
	t, err := net.ResolveUDPAddr("udp", target)
	if err != nil {
		return nil, err
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &UDPProxy{pc: pc, target: t, link: link, flows: map[string]*flow{}, served: make(chan struct{})}
	go p.serve()
	return p, nil
}

// Addr is where clients send.
func (p *UDPProxy) Addr() string { return p.pc.LocalAddr().String() }

func (p *UDPProxy) serve() {
	defer close(p.served)
	buf := make([]byte, 65536)
	for {
		n, addr, err := p.pc.ReadFrom(buf)
		if err != nil {
			return
		}
		f, err := p.flow(addr)
		if err != nil {
			continue
		}
		f.toUp.push(buf[:n])
	}
}

func (p *UDPProxy) flow(client net.Addr) (*flow, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f := p.flows[client.String()]; f != nil {
		return f, nil
	}
	up, err := net.DialUDP("udp", nil, p.target)
	if err != nil {
		return nil, err
	}
	f := &flow{up: up, toUp: newPipe(p.link.Up, p.link.UpRate), toDown: newPipe(p.link.Down, p.link.DownRate)}
	p.flows[client.String()] = f
	p.wg.Add(3)
	go func() { defer p.wg.Done(); f.toUp.run(func(b []byte) error { _, err := up.Write(b); return err }) }()
	go func() {
		defer p.wg.Done()
		f.toDown.run(func(b []byte) error { _, err := p.pc.WriteTo(b, client); return err })
	}()
	go func() {
		defer p.wg.Done()
		buf := make([]byte, 65536)
		for {
			n, err := up.Read(buf)
			if err != nil {
				close(f.toDown.q)
				return
			}
			f.toDown.push(buf[:n])
		}
	}()
	return f, nil
}

// Close stops the proxy.
func (p *UDPProxy) Close() error {
	err := p.pc.Close()
	<-p.served
	p.mu.Lock()
	for _, f := range p.flows {
		_ = f.up.Close()
		close(f.toUp.q)
	}
	p.flows = map[string]*flow{}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

// Dialer dials like net.Dialer and, for TCP, waits one round trip after connecting: the
// SYN/SYN-ACK exchange a user-space proxy answers at once but a real link delays. A link
// emulator that delays every packet (netem, a TUN device) needs no such help: use a plain dialer.
func Dialer(link Link) drivers.DialFunc {
	var d net.Dialer
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, address)
		if err != nil || network != "tcp" {
			return c, err
		}
		t := time.NewTimer(link.RTT())
		defer t.Stop()
		select {
		case <-t.C:
			return c, nil
		case <-ctx.Done():
			_ = c.Close()
			return nil, errors.Join(ctx.Err(), c.Close())
		}
	}
}
