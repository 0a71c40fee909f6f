package driverstest

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
)

// proxy relays one loopback address to the server side, over TCP or UDP, and can stop
// relaying: the driver then sees a peer that accepts and never answers (a broker under
// SIGSTOP, a gateway behind a dead link), with no process to pause.
type proxy struct {
	target string
	mu     sync.Mutex
	cond   *sync.Cond
	paused bool
	closed bool
	tcp    net.Listener
	udp    net.PacketConn
	conns  []io.Closer
}

// startProxy listens on 127.0.0.1 for network ("tcp" or "udp") and relays to target.
func startProxy(t *testing.T, network, target string) *proxy {
	t.Helper()
	p := &proxy{target: target}
	p.cond = sync.NewCond(&p.mu)
	var err error
	if network == "udp" {
		p.udp, err = net.ListenPacket("udp", "127.0.0.1:0")
		if err == nil {
			go p.serveUDP()
		}
	} else {
		p.tcp, err = net.Listen("tcp", "127.0.0.1:0")
		if err == nil {
			go p.serveTCP()
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.close)
	return p
}

// Addr is the address drivers dial.
func (p *proxy) Addr() string {
	if p.udp != nil {
		return p.udp.LocalAddr().String()
	}
	return p.tcp.Addr().String()
}

// Stall stops relaying in both directions until the returned function is called: TCP bytes
// stay in the socket buffers, datagrams are dropped.
func (p *proxy) Stall(*testing.T) (resume func()) {
	p.mu.Lock()
	p.paused = true
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		p.paused = false
		p.cond.Broadcast()
		p.mu.Unlock()
	}
}

// wait blocks while the proxy is paused; false once it is closed.
func (p *proxy) wait() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.paused && !p.closed {
		p.cond.Wait()
	}
	return !p.closed
}

func (p *proxy) track(c io.Closer) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = c.Close()
		return false
	}
	p.conns = append(p.conns, c)
	return true
}

func (p *proxy) close() {
	p.mu.Lock()
	p.closed = true
	conns := p.conns
	p.cond.Broadcast()
	p.mu.Unlock()
	if p.tcp != nil {
		_ = p.tcp.Close()
	}
	if p.udp != nil {
		_ = p.udp.Close()
	}
	for _, c := range conns {
		_ = c.Close()
	}
}

func (p *proxy) serveTCP() {
	for {
		c, err := p.tcp.Accept()
		if err != nil {
			return
		}
		go func() {
			up, err := (&net.Dialer{}).DialContext(context.Background(), "tcp", p.target)
			if err != nil {
				_ = c.Close()
				return
			}
			if !p.track(c) || !p.track(up) {
				_ = c.Close()
				_ = up.Close()
				return
			}
			go p.relay(up, c)
			p.relay(c, up)
		}()
	}
}

// relay copies src to dst, holding each chunk while the proxy is paused.
func (p *proxy) relay(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.wait() {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				_ = src.Close()
				return
			}
		}
		if err != nil {
			if tc, ok := dst.(*net.TCPConn); ok && errors.Is(err, io.EOF) {
				_ = tc.CloseWrite()
			} else {
				_ = dst.Close()
			}
			return
		}
	}
}

func (p *proxy) paused0() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paused
}

// serveUDP gives each client address its own socket towards the target.
func (p *proxy) serveUDP() {
	ups := map[string]net.Conn{}
	buf := make([]byte, 65536)
	for {
		n, from, err := p.udp.ReadFrom(buf)
		if err != nil {
			return
		}
		if p.paused0() {
			continue
		}
		up, ok := ups[from.String()]
		if !ok {
			up, err = (&net.Dialer{}).DialContext(context.Background(), "udp", p.target)
			if err != nil || !p.track(up) {
				continue
			}
			ups[from.String()] = up
			go func() {
				b := make([]byte, 65536)
				for {
					n, err := up.Read(b)
					if err != nil {
						if errors.Is(err, net.ErrClosed) {
							return
						}
						continue // ICMP port unreachable and the like
					}
					if !p.paused0() {
						_, _ = p.udp.WriteTo(b[:n], from)
					}
				}
			}()
		}
		_, _ = up.Write(buf[:n])
	}
}
