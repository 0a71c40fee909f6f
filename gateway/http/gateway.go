// Package http is msgbench's HTTP publish/subscribe gateway (mode "http"): HTTP clients publish
// with `POST /topics/<topic>` and subscribe with a streaming `GET /topics/<topic>`, and the gateway
// bridges both to the MQTT broker. It serves HTTP/1.1 and HTTP/2 on TCP — cleartext (h2c with
// prior knowledge) without a certificate, TLS with ALPN h2/http/1.1 with one — and HTTP/3 on the
// UDP port of the same number when it has a certificate. docs/http-api.md describes the API.
package http

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/gateway"
	"github.com/msgbench/msgbench/plan"
)

func init() {
	gateway.Register("http", func(ctx context.Context, o gateway.Options) (gateway.Gateway, error) {
		return Start(ctx, o, Limits{})
	})
}

// Limits bound what the gateway accepts; zero fields take the defaults below.
type Limits struct {
	// MaxBodyBytes is the largest publish body (413 above it). Default: 1 MiB, or the groups'
	// largest payload plus 64 KiB when that is larger.
	MaxBodyBytes int64
	// MaxPublishes is how many publish requests may wait for the broker at once (429 above it).
	// Default 4096, or the groups' publishers × their Inflight when that is larger.
	MaxPublishes int
	// MaxSubscriptions is how many subscription streams may be open at once (503 above it).
	// Default 10000, or the groups' subscribers when that is larger.
	MaxSubscriptions int
	// PoolSize is how many MQTT connections publishers with the same credentials share.
	// Default 4.
	PoolSize int
	// MaxCredentials is how many distinct credentials may have a publish pool at once (503 for
	// a new one above it). Default 1024.
	MaxCredentials int
	// IdleTimeout closes keep-alive connections without a request for this long (HTTP/1.1 and
	// HTTP/2 connections, HTTP/3 and its QUIC connection). Default 2 minutes.
	IdleTimeout time.Duration
}

// WithDefaults fills in the zero fields with the defaults listed on Limits, some of which grow
// with the plan's groups the gateway serves (none: the defaults alone). Start calls it; it
// starts nothing.
func (l Limits) WithDefaults(groups []plan.Group) Limits {
	var payload int64
	var publishes, subscribers int
	for i := range groups {
		g := &groups[i]
		payload = max(payload, int64(g.PayloadBytes))
		publishes += int(g.Publishers) * max(1, g.Inflight)
		subscribers += int(g.Subscribers)
	}
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = max(1<<20, payload+64<<10)
	}
	// The benchmark's own load is never refused: every publisher may have its group's Inflight
	// publishes waiting and every subscriber a stream open.
	if l.MaxPublishes <= 0 {
		l.MaxPublishes = max(4096, publishes)
	}
	if l.MaxSubscriptions <= 0 {
		l.MaxSubscriptions = max(10000, subscribers)
	}
	if l.PoolSize <= 0 {
		l.PoolSize = 4
	}
	if l.MaxCredentials <= 0 {
		l.MaxCredentials = 1024
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = 2 * time.Minute
	}
	return l
}

// Gateway is a running HTTP gateway.
type Gateway struct {
	api    *api
	ln     net.Listener
	srv    *http.Server
	h3     *http3.Server
	udp    net.PacketConn
	tls    bool
	done   chan struct{}
	mu     sync.Mutex
	err    error
	closed bool
}

// Start serves on o.Listen until Close. Without o.TLS it serves cleartext HTTP/1.1 and h2c on
// TCP; with o.TLS it serves HTTPS (h2 and http/1.1 by ALPN) on TCP and HTTP/3 on UDP, on the same
// port number. A group of HTTP/3 clients (spec.http.version "3") needs o.TLS: QUIC always
// encrypts.
func Start(ctx context.Context, o gateway.Options, l Limits) (*Gateway, error) {
	for i := range o.Groups {
		if h := o.Groups[i].HTTP; h != nil && h.Version == v1alpha1.HTTP3 && o.TLS == nil {
			return nil, errors.New("http gateway: spec.http.version 3 runs over QUIC, which always encrypts: give the gateway a server certificate (--tls-cert/--tls-key, or Options.TLS)")
		}
	}
	a, err := newAPI(o, l.WithDefaults(o.Groups))
	if err != nil {
		return nil, err
	}
	g := &Gateway{api: a, tls: o.TLS != nil, done: make(chan struct{})}
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	if o.TLS == nil {
		protocols.SetUnencryptedHTTP2(true)
	} else {
		protocols.SetHTTP2(true)
	}
	g.srv = &http.Server{
		Handler:           a,
		Protocols:         &protocols,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       a.limits.IdleTimeout,
		MaxHeaderBytes:    16 << 10,
		HTTP2:             &http.HTTP2Config{MaxConcurrentStreams: 1000},
		ErrorLog:          log.New(probeFilter{os.Stderr}, "", log.LstdFlags),
	}
	for attempt := 0; ; attempt++ {
		if err = g.listen(ctx, o); err == nil || attempt == 4 {
			break
		}
	}
	if err != nil {
		a.close()
		return nil, err
	}
	go g.serve(func() error { return g.srv.Serve(g.ln) })
	if g.h3 != nil {
		go g.serve(func() error { return g.h3.Serve(g.udp) })
	}
	return g, nil
}

// listen opens the TCP listener and, with TLS, the UDP socket of the same port number.
func (g *Gateway) listen(ctx context.Context, o gateway.Options) error {
	ln, err := o.ListenTCPOrDefault(ctx, o.Listen)
	if err != nil {
		return fmt.Errorf("http gateway: listen on %s: %w", o.Listen, err)
	}
	if o.TLS == nil {
		g.ln = ln
		return nil
	}
	udp, err := o.ListenUDPOrDefault(ctx, ln.Addr().String())
	if err != nil {
		_ = ln.Close()
		return fmt.Errorf("http gateway: HTTP/3 on UDP %s: %w", ln.Addr(), err)
	}
	tcpTLS := o.TLS.Clone()
	tcpTLS.NextProtos = []string{"h2", "http/1.1"}
	g.ln = tls.NewListener(ln, tcpTLS)
	g.udp = udp
	g.h3 = &http3.Server{
		Handler:        g.api,
		TLSConfig:      http3.ConfigureTLSConfig(o.TLS.Clone()),
		MaxHeaderBytes: 16 << 10,
		IdleTimeout:    g.api.limits.IdleTimeout,
		ConnContext:    withQUICConn, // a request learns whether it came before the handshake completed (early.go)
		QUICConfig: &quic.Config{
			MaxIdleTimeout:       g.api.limits.IdleTimeout,
			MaxIncomingStreams:   1000,
			HandshakeIdleTimeout: gateway.QUICHandshakeTimeout,
			Allow0RTT:            true, // a client with spec.quic.zeroRTT sends its GET in 0-RTT; a POST gets 425 (early.go)
		},
	}
	return nil
}

func (g *Gateway) serve(run func() error) {
	err := run()
	if errors.Is(err, http.ErrServerClosed) || errors.Is(err, quic.ErrServerClosed) || errors.Is(err, net.ErrClosed) {
		err = nil
	}
	g.finish(err)
}

func (g *Gateway) finish(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return
	}
	g.closed = true
	g.err = err
	close(g.done)
}

// Addr is the TCP address; HTTP/3 listens on UDP at the same port when the gateway has TLS.
func (g *Gateway) Addr() net.Addr { return g.ln.Addr() }

// Totals implements gateway.Gateway: subscription streams open are the clients (a publisher's
// requests come and go).
func (g *Gateway) Totals() gateway.Totals {
	a := g.api
	return gateway.Totals{Clients: int64(len(a.streams)), MessagesIn: a.in.Load(), MessagesOut: a.out.Load(), Dropped: a.failed.Load()}
}

// TooEarly counts the requests answered 425 Too Early: sent in early data, not acted on.
func (g *Gateway) TooEarly() uint64 { return g.api.tooEarly.Load() }

// HTTP3Addr is the UDP address of HTTP/3, or nil without TLS.
func (g *Gateway) HTTP3Addr() net.Addr {
	if g.udp == nil {
		return nil
	}
	return g.udp.LocalAddr()
}

// Close stops serving, ends the subscription streams and disconnects from the broker.
func (g *Gateway) Close() error {
	err := g.srv.Close()
	if g.h3 != nil {
		_ = g.h3.Close()
		_ = g.udp.Close()
	}
	g.api.close()
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

// probeFilter drops net/http's "TLS handshake error … EOF" lines: a TCP readiness probe (the
// operator's gateway pods have one) opens and closes a connection every few seconds, and those
// lines buried the gateway's real messages.
type probeFilter struct{ w io.Writer }

func (f probeFilter) Write(p []byte) (int, error) {
	line := string(p)
	if strings.Contains(line, "TLS handshake error") && strings.HasSuffix(strings.TrimSpace(line), ": EOF") {
		return len(p), nil
	}
	return f.w.Write(p)
}
