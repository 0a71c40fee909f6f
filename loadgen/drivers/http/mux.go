package http

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"

	"github.com/msgbench/msgbench/internal/wire"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/loadgen/drivers/mqttquic/quicconn"
)

// muxPublisher publishes over HTTP/2 or HTTP/3, which multiplex requests on one connection: up
// to spec.mqtt.inflight POSTs are in flight at once, each on its own stream. The connection's
// RoundTrip blocks until the response, so a fixed set of inflight sender goroutines (not one per
// message) takes messages from a bounded queue; with inflight 1, Publish sends directly.
type muxPublisher struct {
	d   *driver
	h   drivers.Handler
	tls *tls.Config // the client's
	t   totals
	url *url.URL
	hdr http.Header // read-only, shared by every request

	cc     clientConn // the keep-alive connection (nil without keep-alive after the first message)
	retire func()
	ccMu   sync.Mutex

	window chan struct{} // a slot per message in flight
	jobs   chan job
	// unwritten counts queued messages whose body the connection has not yet taken; Flush
	// waits for it to reach 0, so the engine's measured-window byte count includes them.
	unwritten atomic.Int64
	written   chan struct{} // a token after each body taken
	free      chan []byte   // payload copies, one per slot
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	connB     int64

	errMu sync.Mutex
	err   error
	done  chan struct{}
	// gate lets Close wait for a Completed in progress and stop later ones.
	gate drivers.Gate
}

type job struct {
	payload []byte
	sentAt  int64
}

func (d *driver) newMuxPublisher(ctx context.Context, c drivers.Client, h drivers.Handler) (*muxPublisher, error) {
	tlsConf := d.clientTLS.For(c.ID)
	cc, counters, err := d.open(ctx, tlsConf, false) // a POST never rides in 0-RTT (docs/tls.md)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(d.scheme + "://" + d.host + d.path(c.Topic))
	if err != nil {
		_ = cc.Close()
		return nil, err
	}
	p := &muxPublisher{d: d, h: h, tls: tlsConf, url: u, cc: cc, done: make(chan struct{}),
		hdr: http.Header{"Content-Type": {"application/octet-stream"}}}
	if d.auth != "" {
		p.hdr.Set("Authorization", d.auth)
	}
	p.retire = p.t.add(counters)
	cs := p.t.counters()
	p.connB = cs.BytesSent + cs.BytesReceived
	p.ctx, p.cancel = context.WithCancel(context.Background())
	n := max(1, int(d.cfg.Spec.MQTT.Inflight))
	p.window = make(chan struct{}, n)
	if n > 1 {
		p.jobs = make(chan job, n)
		p.written = make(chan struct{}, 1)
		p.free = make(chan []byte, n)
		for range n {
			p.free <- nil
		}
		p.wg.Add(n)
		for range n {
			go p.sender()
		}
	}
	return p, nil
}

// Publish takes a window slot (blocking while inflight messages are outstanding) and sends the
// message, itself (inflight 1) or through a sender.
func (p *muxPublisher) Publish(payload []byte, _ bool) error {
	if err := p.Err(); err != nil {
		return err
	}
	if p.ctx.Err() != nil {
		return errClosed
	}
	sentAt := p.d.cfg.Now()
	select {
	case p.window <- struct{}{}:
	case <-p.ctx.Done():
		return p.closedErr()
	}
	if p.ctx.Err() != nil { // Close ran meanwhile, the slot free
		<-p.window
		return p.closedErr()
	}
	if p.jobs == nil {
		err := p.send(payload, sentAt, nil)
		<-p.window
		return err
	}
	buf := <-p.free
	buf = append(buf[:0], payload...) // a copy: the caller reuses payload
	p.unwritten.Add(1)
	p.jobs <- job{payload: buf, sentAt: sentAt}
	return nil
}

// Flush waits until the connection has taken the body of every queued message (it is in the
// stream's send buffer, on its way to the socket), the session ends, or Close.
func (p *muxPublisher) Flush() error {
	if p.ctx.Err() != nil {
		return p.closedErr()
	}
	for p.unwritten.Load() > 0 {
		select {
		case <-p.written:
		case <-p.done:
			return p.closedErr()
		case <-p.ctx.Done():
			return p.closedErr()
		}
	}
	return nil
}

// bodyWritten is called once per queued message, when its body was read or its request ended.
func (p *muxPublisher) bodyWritten() {
	p.unwritten.Add(-1)
	select {
	case p.written <- struct{}{}:
	default:
	}
}

// watchedBody is a request body that reports when the transport has read all of it.
type watchedBody struct {
	bytes.Reader
	once   sync.Once
	onDone func()
}

func (b *watchedBody) Read(buf []byte) (int, error) {
	n, err := b.Reader.Read(buf)
	if b.Len() == 0 {
		b.done()
	}
	return n, err
}

func (b *watchedBody) Close() error { b.done(); return nil }

func (b *watchedBody) done() {
	if b.onDone != nil {
		b.once.Do(b.onDone)
	}
}

func (p *muxPublisher) sender() {
	defer p.wg.Done()
	for {
		select {
		case j := <-p.jobs:
			_ = p.send(j.payload, j.sentAt, p.bodyWritten)
			p.free <- j.payload
			<-p.window
		case <-p.ctx.Done():
			return
		}
	}
}

// conn returns the connection for one message: the shared one, or a new one without keep-alive
// (the first message uses the one Connect opened).
func (p *muxPublisher) conn() (clientConn, func(), error) {
	p.ccMu.Lock()
	if p.d.cfg.Spec.HTTP.KeepAliveOrDefault() && p.cc != nil && p.cc.Err() != nil {
		// The gateway closed the connection (idle timeout, GOAWAY): open the next one, as a
		// browser or device would. Requests in flight on the old one have failed already.
		p.retire()
		_ = p.cc.Close()
		cc, counters, err := p.d.open(p.ctx, p.tls, false)
		if err != nil {
			p.cc = nil
			p.ccMu.Unlock()
			return nil, nil, err
		}
		p.cc, p.retire = cc, p.t.add(counters)
	}
	cc, retire := p.cc, p.retire
	if !p.d.cfg.Spec.HTTP.KeepAliveOrDefault() {
		p.cc, p.retire = nil, nil
	}
	p.ccMu.Unlock()
	if p.d.cfg.Spec.HTTP.KeepAliveOrDefault() {
		if cc == nil {
			return nil, nil, errClosed
		}
		return cc, nil, nil
	}
	if cc == nil {
		var counters func() wire.Counters
		var err error
		if cc, counters, err = p.d.open(p.ctx, p.tls, false); err != nil {
			return nil, nil, err
		}
		retire = p.t.add(counters)
	}
	return cc, func() { retire(); _ = cc.Close() }, nil
}

// send POSTs one message and waits for the response; written, when set, is called once the
// body was taken or the request ended without it.
func (p *muxPublisher) send(payload []byte, sentAt int64, written func()) error {
	body := &watchedBody{onDone: written}
	body.Reset(payload)
	defer body.done()
	cc, hangUp, err := p.conn()
	if err != nil {
		return p.fail(err)
	}
	if hangUp != nil {
		defer hangUp()
	}
	req := (&http.Request{
		Method: http.MethodPost, URL: p.url, Host: p.d.host, Header: p.hdr,
		Body: body, ContentLength: int64(len(payload)),
	}).WithContext(p.ctx)
	resp, err := cc.RoundTrip(req)
	if err != nil {
		return p.fail(fmt.Errorf("POST %s: %w", p.url.Path, quicconn.ExplainRefused(err)))
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if !p.gate.Enter() {
		return errClosed
	}
	p.h.Completed(sentAt, resp.StatusCode >= 200 && resp.StatusCode < 300)
	p.gate.Leave()
	return nil
}

func (p *muxPublisher) fail(err error) error {
	p.errMu.Lock()
	defer p.errMu.Unlock()
	if p.ctx.Err() != nil { // Close interrupted the request
		if p.err != nil {
			return p.err
		}
		return errClosed
	}
	if p.err == nil {
		p.err = err
		close(p.done)
	}
	return err
}

func (p *muxPublisher) closedErr() error {
	if err := p.Err(); err != nil {
		return err
	}
	return errClosed
}

// Drain waits until every message in flight has its response.
func (p *muxPublisher) Drain(ctx context.Context) error {
	if p.ctx.Err() != nil {
		return p.closedErr()
	}
	for i := 0; i < cap(p.window); i++ {
		select {
		case p.window <- struct{}{}:
		case <-ctx.Done():
			outstanding := len(p.window) - i
			for ; i > 0; i-- {
				<-p.window
			}
			return &drivers.DrainError{Unacknowledged: outstanding, Err: ctx.Err()}
		case <-p.done:
			for ; i > 0; i-- {
				<-p.window
			}
			return p.closedErr()
		}
	}
	for range cap(p.window) {
		<-p.window
	}
	return nil
}

func (p *muxPublisher) Err() error {
	p.errMu.Lock()
	defer p.errMu.Unlock()
	return p.err
}

func (p *muxPublisher) Subscribe(context.Context) error {
	return errors.New("a publisher does not subscribe")
}
func (p *muxPublisher) ConnectBytes() int64     { return p.connB }
func (p *muxPublisher) Counters() wire.Counters { return p.t.counters() }
func (p *muxPublisher) Done() <-chan struct{}   { return p.done }

// Close cancels every request (a Publish blocked on the window or waiting for its response
// returns ErrClosed), waits for the senders and for a Completed in progress, and closes the
// connection. A second call returns nil.
func (p *muxPublisher) Close() error {
	p.cancel()
	p.gate.Close()
	p.wg.Wait()
	p.ccMu.Lock()
	if p.cc != nil {
		p.retire()
		_ = p.cc.Close()
		p.cc = nil
	}
	p.ccMu.Unlock()
	p.errMu.Lock()
	if p.err == nil {
		select {
		case <-p.done:
		default:
			close(p.done)
		}
	}
	p.errMu.Unlock()
	return nil
}
