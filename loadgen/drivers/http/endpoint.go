package http

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/refusal"
	"github.com/msgbench/msgbench/internal/wire"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/loadgen/drivers/mqttquic/quicconn"
	"github.com/msgbench/msgbench/plan"
)

// endpointPublisher sends each message as the request spec.http.endpoint describes, to an
// endpoint of the user's own, with Go's HTTP client (HTTP/1.1, HTTP/2 — h2c on http:// — or
// HTTP/3): its connections dialled with the run's dial and counted below TLS. Up to the window's
// requests are in flight (one over HTTP/1.1, as one connection carries one at a time); a
// response whose status the endpoint accepts completes its message.
type endpointPublisher struct {
	d      *driver
	h      drivers.Handler
	c      drivers.Client
	e      *plan.HTTPEndpoint
	group  string
	client *http.Client
	close  func()
	t      totals
	connB  int64

	ctx    context.Context // ends the requests in flight at Close
	cancel context.CancelFunc
	window chan struct{}
	wg     sync.WaitGroup
	seq    int64
	gate   drivers.Gate

	// refused is the first answer the endpoint does not accept, explained; Drain returns it once
	// every answer came, as the MQTT driver does a PUBACK's reason code.
	refused atomic.Pointer[refusal.Error]

	mu     sync.Mutex
	err    error
	done   chan struct{}
	closed bool
}

func (d *driver) newEndpointPublisher(ctx context.Context, c drivers.Client, h drivers.Handler) *endpointPublisher {
	e := d.cfg.Group.HTTP.Endpoint
	p := &endpointPublisher{d: d, h: h, c: c, e: e, group: d.cfg.Group.Name, done: make(chan struct{})}
	p.ctx, p.cancel = context.WithCancel(context.WithoutCancel(ctx))
	inflight := 1
	if d.version != v1alpha1.HTTP11 {
		inflight = max(1, d.window)
	}
	p.window = make(chan struct{}, inflight)
	tlsConf := &tls.Config{ServerName: e.Host}
	if d.cfg.TLS != nil && d.cfg.TLS.RootCAs != nil { // the run's CA, for an endpoint it trusts
		tlsConf.RootCAs = d.cfg.TLS.RootCAs
	}
	redial := drivers.ForClient(d.cfg.Dialer(), c.ID)
	if d.version == v1alpha1.HTTP3 {
		tlsConf.NextProtos = []string{"h3"}
		tr := &http3.Transport{TLSClientConfig: tlsConf, QUICConfig: &quic.Config{MaxIdleTimeout: d.quic.MaxIdleTimeout, HandshakeIdleTimeout: d.quic.HandshakeIdleTimeout},
			Dial: func(ctx context.Context, _ string, tc *tls.Config, qc *quic.Config) (*quic.Conn, error) {
				c, err := quicconn.Dial(ctx, redial, e.Address, tc, qc, false)
				if err != nil {
					return nil, err
				}
				p.t.add(c.Counters)
				return c.Conn, nil
			}}
		p.client, p.close = &http.Client{Transport: tr}, func() { _ = tr.Close() }
	} else {
		tr := &http.Transport{TLSClientConfig: tlsConf, DisableKeepAlives: !d.keepAlive, MaxConnsPerHost: 1, ForceAttemptHTTP2: d.version == v1alpha1.HTTP2,
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				raw, err := redial(ctx, network, e.Address)
				if err != nil {
					return nil, err
				}
				counted := wire.NewConn(raw)
				p.t.add(counted.Counters)
				return counted, nil
			}}
		if d.version == v1alpha1.HTTP2 {
			tr.Protocols = new(http.Protocols)
			tr.Protocols.SetHTTP2(true)
			tr.Protocols.SetUnencryptedHTTP2(!e.Secure) // h2c on an http:// URL
		}
		p.client, p.close = &http.Client{Transport: tr}, tr.CloseIdleConnections
	}
	return p
}

// request is message k's request.
func (p *endpointPublisher) request(payload []byte, k int64) (*http.Request, error) {
	u := p.render(nil, p.e.URL, payload, k, true)
	req, err := http.NewRequestWithContext(p.ctx, p.e.Method, string(u), bytes.NewReader(p.render(nil, p.e.Body, payload, k, false)))
	if err != nil {
		return nil, fmt.Errorf("spec.http.endpoint.url: %w", err)
	}
	for name, v := range p.e.Headers {
		req.Header.Set(name, string(p.render(nil, v, payload, k, false)))
	}
	return req, nil
}

// render appends template t filled in for message k to b; in a URL, the topic is one escaped
// path segment.
func (p *endpointPublisher) render(b []byte, t plan.RequestTemplate, payload []byte, k int64, inURL bool) []byte {
	for _, part := range t {
		switch part.Field {
		case "":
			b = append(b, part.Text...)
		case plan.RequestDevice:
			b = append(b, p.c.ID...)
		case plan.RequestTopic:
			if inURL {
				b = append(b, url.PathEscape(p.c.Topic)...)
			} else {
				b = append(b, p.c.Topic...)
			}
		case plan.RequestSeq:
			b = strconv.AppendInt(b, k, 10)
		case plan.RequestGroup:
			b = append(b, p.group...)
		case plan.RequestPayload:
			b = append(b, payload...)
		case plan.RequestPayloadBase64:
			b = base64.StdEncoding.AppendEncode(b, payload)
		case plan.RequestPayloadHex:
			b = hex.AppendEncode(b, payload)
		}
	}
	return b
}

// Publish takes a window slot and sends the message's request; its response completes it.
func (p *endpointPublisher) Publish(payload []byte, _ bool) error {
	if err := p.Err(); err != nil {
		return err
	}
	select {
	case p.window <- struct{}{}:
	case <-p.done:
		return p.closedErr()
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.window
		return errClosed
	}
	k := p.seq
	p.seq++
	p.wg.Add(1)
	p.mu.Unlock()
	req, err := p.request(payload, k)
	if err != nil {
		p.wg.Done()
		<-p.window
		return p.fail(err)
	}
	sentAt := p.d.cfg.Now()
	go func() {
		defer p.wg.Done()
		defer func() { <-p.window }()
		resp, err := p.client.Do(req)
		if err != nil {
			if p.Err() == nil && !p.isClosed() {
				_ = p.fail(fmt.Errorf("%s %s: %w", req.Method, req.URL.Redacted(), err))
			}
			return
		}
		accepted := p.e.Accepted(resp.StatusCode)
		if !accepted && p.refused.Load() == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			p.refused.CompareAndSwap(nil, refusal.HTTPStatus(resp.StatusCode, p.e.AcceptedStatuses, body,
				fmt.Sprintf("client %s, %s %s", p.c.ID, req.Method, req.URL.Redacted())))
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if p.gate.Enter() {
			p.h.Completed(sentAt, accepted)
			p.gate.Leave()
		}
	}()
	return nil
}

func (p *endpointPublisher) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

func (p *endpointPublisher) fail(err error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errClosed
	}
	if p.err == nil {
		p.err = err
		close(p.done)
	}
	return err
}

func (p *endpointPublisher) closedErr() error {
	if err := p.Err(); err != nil {
		return err
	}
	return errClosed
}

func (p *endpointPublisher) Subscribe(context.Context) error {
	return errors.New("a publisher does not subscribe")
}

func (p *endpointPublisher) Flush() error { return nil }

// Drain waits for every request in flight to be answered.
func (p *endpointPublisher) Drain(ctx context.Context) error {
	for i := range cap(p.window) {
		select {
		case p.window <- struct{}{}:
		case <-ctx.Done():
			for range i {
				<-p.window
			}
			return &drivers.DrainError{Unacknowledged: cap(p.window) - i, Err: ctx.Err()}
		case <-p.done:
			for range i {
				<-p.window
			}
			return p.closedErr()
		}
	}
	for range cap(p.window) {
		<-p.window
	}
	if err := p.Err(); err != nil {
		return err
	}
	if re := p.refused.Load(); re != nil { // every answer came, some said no
		return re
	}
	return nil
}

func (p *endpointPublisher) ConnectBytes() int64     { return p.connB }
func (p *endpointPublisher) Counters() wire.Counters { return p.t.counters() }
func (p *endpointPublisher) Done() <-chan struct{}   { return p.done }

func (p *endpointPublisher) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Close stops new requests, ends those in flight and waits for them.
func (p *endpointPublisher) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	if p.err == nil {
		close(p.done)
	}
	p.mu.Unlock()
	p.gate.Close()
	p.cancel()
	p.wg.Wait()
	p.close()
	return nil
}
