// Package quic is msgbench's MQTT-over-QUIC gateway (mode "quic"): it serves MQTT over QUIC the
// way EMQX does — TLS 1.3 with ALPN "mqtt", the whole MQTT session on the first bidirectional
// stream a client opens — and bridges each session byte for byte to the MQTT broker's TCP
// listener, so the broker sees an ordinary MQTT client. 0-RTT resumption is accepted: a client
// holding a session ticket sends CONNECT in its first flight.
package quic

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/msgbench/msgbench/gateway"
	"github.com/msgbench/msgbench/plan"
)

// ALPN is the TLS application protocol of MQTT over QUIC.
const ALPN = "mqtt"

// MaxSessions bounds concurrent sessions (SessionLimit raises it to a benchmark's client count);
// connections beyond it are refused with CONNECTION_CLOSE (application error 0x1, "gateway full").
const MaxSessions = 100_000

// SessionLimit is how many sessions the gateway of the plan's groups admits at once:
// MaxSessions, or every client of the groups when they have more.
func SessionLimit(groups []plan.Group) int {
	return max(MaxSessions, gateway.Clients(groups))
}

func init() { gateway.Register("quic", Start) }

// Gateway is a running MQTT-over-QUIC gateway.
type Gateway struct {
	o    gateway.Options
	pc   net.PacketConn
	tr   *quic.Transport
	ln   *quic.EarlyListener
	ctx  context.Context
	stop context.CancelFunc

	slots   chan struct{}
	refused atomic.Uint64
	wg      sync.WaitGroup

	done chan struct{}
	mu   sync.Mutex
	err  error
}

// Start listens on o.Listen (UDP) and serves until Close. o.TLS is required: QUIC always
// encrypts.
func Start(ctx context.Context, o gateway.Options) (gateway.Gateway, error) {
	if o.TLS == nil {
		return nil, errors.New("quic gateway: QUIC always encrypts with TLS 1.3; give the gateway a server certificate (--tls-cert/--tls-key, or Options.TLS)")
	}
	pc, err := o.ListenUDPOrDefault(ctx, o.Listen)
	if err != nil {
		return nil, fmt.Errorf("quic gateway: listen on %s: %w", o.Listen, err)
	}
	tlsConf := o.TLS.Clone()
	tlsConf.MinVersion = tls.VersionTLS13
	tlsConf.NextProtos = []string{ALPN}
	tr := &quic.Transport{Conn: pc}
	ln, err := tr.ListenEarly(tlsConf, ServerConfig(o))
	if err != nil {
		_ = pc.Close()
		return nil, fmt.Errorf("quic gateway: %w", err)
	}
	g := &Gateway{o: o, pc: pc, tr: tr, ln: ln, slots: make(chan struct{}, SessionLimit(o.Groups)), done: make(chan struct{})}
	g.ctx, g.stop = context.WithCancel(context.WithoutCancel(ctx))
	go g.serve()
	return g, nil
}

// ServerConfig is the gateway's QUIC configuration: one bidirectional stream per connection (the
// MQTT session), no unidirectional ones, 0-RTT accepted, an idle timeout beyond the MQTT
// keep-alive of its groups' clients (the longest, twice over).
func ServerConfig(o gateway.Options) *quic.Config {
	idle := 90 * time.Second
	for i := range o.Groups {
		if m := o.Groups[i].MQTT; m != nil && 2*m.KeepAlive > idle {
			idle = 2 * m.KeepAlive
		}
	}
	return &quic.Config{
		MaxIncomingStreams:    1,
		MaxIncomingUniStreams: -1,
		Allow0RTT:             true,
		MaxIdleTimeout:        idle,
		HandshakeIdleTimeout:  gateway.QUICHandshakeTimeout,
	}
}

func (g *Gateway) serve() {
	var err error
	for {
		var c *quic.Conn
		c, err = g.ln.Accept(g.ctx)
		if err != nil {
			break
		}
		select {
		case g.slots <- struct{}{}:
		default:
			g.refused.Add(1)
			_ = c.CloseWithError(1, "gateway full")
			continue
		}
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			defer func() { <-g.slots }()
			if err := bridge(g.ctx, g.o, c); err != nil {
				g.o.Log("quic gateway: %s: %v", c.RemoteAddr(), err)
			}
		}()
	}
	g.finish(err)
}

func (g *Gateway) finish(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.done:
		return
	default:
	}
	if g.ctx.Err() != nil {
		err = nil // closed on purpose
	}
	g.err = err
	close(g.done)
}

// Addr is the UDP address clients connect to.
func (g *Gateway) Addr() net.Addr { return g.pc.LocalAddr() }

// Totals implements gateway.Gateway. The bridge copies bytes, so it counts connections only:
// open ones, and those refused because the gateway was full.
func (g *Gateway) Totals() gateway.Totals {
	return gateway.Totals{Clients: int64(len(g.slots)), Dropped: g.refused.Load()}
}

// Close stops accepting, ends every session and closes the socket.
func (g *Gateway) Close() error {
	g.stop()
	_ = g.ln.Close()
	g.wg.Wait()
	_ = g.tr.Close()
	err := g.pc.Close()
	g.finish(nil)
	return err
}

// Done is closed when the gateway stopped.
func (g *Gateway) Done() <-chan struct{} { return g.done }

// Err says why the gateway stopped (nil after Close).
func (g *Gateway) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}
