package http

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/wire"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/loadgen/drivers/mqttquic/quicconn"
)

// muxPublisher publishes over HTTP/2 or HTTP/3, which multiplex requests on one connection: up
// to spec.mqtt.inflight POSTs are in flight at once, each on its own stream. Publish writes the
// request itself through the connection's exchanger and returns; the exchanger's reader reports
// the response (Completed) and frees the window slot — no goroutine per message and no hop
// between goroutines on the way out, as with the MQTT driver.
type muxPublisher struct {
	d    *driver
	h    drivers.Handler
	tls  *tls.Config // the client's
	head requestHead
	t    totals

	mu     sync.Mutex
	ex     exchanger               // the connection the next message takes
	live   map[exchanger]*liveConn // every connection not yet retired
	closed bool

	window chan struct{}  // a slot per message in flight
	wg     sync.WaitGroup // messages dialing their own connection (without keep-alive)
	ctx    context.Context
	cancel context.CancelFunc
	connB  int64

	errMu sync.Mutex
	err   error
	done  chan struct{}
	// gate lets Close wait for a Completed in progress and stop later ones.
	gate drivers.Gate
}

func (d *driver) newMuxPublisher(ctx context.Context, c drivers.Client, h drivers.Handler) (*muxPublisher, error) {
	p := &muxPublisher{d: d, h: h, tls: d.clientTLS.For(c.ID), done: make(chan struct{}),
		head: requestHead{scheme: d.scheme, authority: d.host, path: d.path(c.Topic), auth: d.authFor(c)},
		live: map[exchanger]*liveConn{},
		// A slot per message in flight; a connection without keep-alive carries one.
		window: make(chan struct{}, d.window)}
	p.ctx, p.cancel = context.WithCancel(context.WithoutCancel(ctx)) // Connect's values (drivers.WithClient), not its deadline
	ex, err := p.dial(ctx)                                           // a POST never rides in 0-RTT (docs/tls.md)
	if err != nil {
		p.cancel()
		return nil, err
	}
	p.ex = ex // without keep-alive too: the first message takes the connection Connect opened
	cs := p.t.counters()
	p.connB = cs.BytesSent + cs.BytesReceived
	return p, nil
}

// liveConn is a connection's bookkeeping: its counters' retire and its requests in flight.
type liveConn struct {
	retire func()
	open   int
}

// dial opens a connection of the run's version whose responses complete messages. A connection
// is closed and retired once it takes no more requests and its last response is in: without
// keep-alive after its one message, with keep-alive after the gateway closed it (idle timeout,
// GOAWAY) and a new one replaced it — a long run does not pile up dead connections.
func (p *muxPublisher) dial(ctx context.Context) (exchanger, error) {
	var ex exchanger
	onResponse := func(sentAt int64, status int, err error) {
		p.response(sentAt, status, err)
		p.mu.Lock()
		done := false
		if lc := p.live[ex]; lc != nil {
			lc.open--
			done = lc.open == 0 && ex != p.ex && (!p.d.keepAlive || ex.Err() != nil)
		}
		p.mu.Unlock()
		if done {
			p.forget(ex)
		}
	}
	var err error
	if p.d.version == v1alpha1.HTTP3 {
		ex, err = p.d.openH3(ctx, p.tls, p.head, onResponse)
	} else {
		ex, err = p.d.openH2(ctx, p.tls, p.head, onResponse)
	}
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.live[ex] = &liveConn{retire: p.t.add(ex.Counters)}
	p.mu.Unlock()
	return ex, nil
}

// forget closes a connection and moves its counters to the session's closed total.
func (p *muxPublisher) forget(ex exchanger) {
	_ = ex.Close()
	p.mu.Lock()
	lc := p.live[ex]
	delete(p.live, ex)
	p.mu.Unlock()
	if lc != nil {
		lc.retire()
	}
}

// response completes one message: Completed (unless Close came first) and its window slot back.
func (p *muxPublisher) response(sentAt int64, status int, err error) {
	defer func() { <-p.window }()
	if err != nil {
		if p.ctx.Err() == nil {
			_ = p.fail(fmt.Errorf("POST %s: %w", p.head.path, quicconn.ExplainRefused(err)))
		}
		return
	}
	if !p.gate.Enter() {
		return
	}
	p.h.Completed(sentAt, status >= 200 && status < 300)
	p.gate.Leave()
}

// Publish takes a window slot (blocking while inflight messages are outstanding, after writing
// what is buffered) and sends the message on the connection.
func (p *muxPublisher) Publish(payload []byte, flush bool) error {
	if err := p.Err(); err != nil {
		return err
	}
	if p.ctx.Err() != nil {
		return errClosed
	}
	select {
	case p.window <- struct{}{}:
	default:
		if err := p.Flush(); err != nil { // what waits in the buffer holds the slots
			return err
		}
		select {
		case p.window <- struct{}{}:
		case <-p.ctx.Done():
			return p.closedErr()
		case <-p.done:
			return p.closedErr()
		}
	}
	// Publish-ack latency starts when the request is handed over, not while it waited for a
	// window slot (docs/measurement.md); without keep-alive it includes the connection's dial.
	sentAt := p.d.cfg.Now()
	if !p.d.keepAlive && p.firstUsed() {
		// A connection per message: its handshake must not hold up the next message, so each
		// dials on its own goroutine (at most inflight at once), as separate devices would.
		body := append([]byte(nil), payload...)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			_ = p.send(body, sentAt, true)
		}()
		return nil
	}
	return p.send(payload, sentAt, flush)
}

// firstUsed reports, without keep-alive, whether the connection Connect opened is taken.
func (p *muxPublisher) firstUsed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ex == nil
}

// send posts a message whose window slot is taken, and gives the slot back when it fails.
func (p *muxPublisher) send(payload []byte, sentAt int64, flush bool) error {
	ex, err := p.conn()
	if err == nil {
		p.opened(ex, 1) // before Post: its response may come before Post returns
		if err = ex.Post(payload, sentAt, flush || !p.d.keepAlive); err != nil {
			p.opened(ex, -1)
		}
	}
	if err != nil {
		<-p.window
		if p.ctx.Err() != nil {
			return p.closedErr()
		}
		return p.fail(fmt.Errorf("POST %s: %w", p.head.path, quicconn.ExplainRefused(err)))
	}
	return nil
}

// opened counts requests in flight on a connection.
func (p *muxPublisher) opened(ex exchanger, n int) {
	p.mu.Lock()
	if lc := p.live[ex]; lc != nil {
		lc.open += n
	}
	p.mu.Unlock()
}

// conn returns the connection for the next message: the keep-alive one, a new one when the
// gateway closed it (idle timeout, GOAWAY — as a browser or device would), or without keep-alive
// a new one per message (the first message uses the one Connect opened).
func (p *muxPublisher) conn() (exchanger, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errClosed
	}
	ex := p.ex
	if !p.d.keepAlive {
		p.ex = nil
	}
	if ex != nil && ex.Err() == nil {
		return ex, nil
	}
	p.ex = nil                                                    // the old one, if any, is retired by its last response from now on
	if lc := p.live[ex]; ex != nil && lc != nil && lc.open == 0 { // closed by the gateway, idle
		p.mu.Unlock()
		p.forget(ex)
		p.mu.Lock()
	}
	p.mu.Unlock()
	ex, err := p.dial(p.ctx)
	p.mu.Lock()
	if err != nil {
		return nil, err
	}
	if p.closed {
		p.mu.Unlock()
		p.forget(ex)
		p.mu.Lock()
		return nil, errClosed
	}
	if p.d.keepAlive {
		p.ex = ex
	}
	return ex, nil
}

// Flush writes what the connection buffered.
func (p *muxPublisher) Flush() error {
	if p.ctx.Err() != nil {
		return p.closedErr()
	}
	p.mu.Lock()
	ex := p.ex
	p.mu.Unlock()
	if ex == nil {
		return nil
	}
	if err := ex.Flush(); err != nil {
		return p.fail(err)
	}
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

// Drain writes what is buffered and waits until every message in flight has its response.
func (p *muxPublisher) Drain(ctx context.Context) error {
	if p.ctx.Err() != nil {
		return p.closedErr()
	}
	if err := p.Flush(); err != nil {
		return err
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

// Close ends the session: a Publish blocked on the window returns ErrClosed, Completed calls in
// progress finish and no other follows, every connection closes (answering its open requests
// with errors the closed session ignores). A second call returns nil.
func (p *muxPublisher) Close() error {
	p.cancel()
	p.wg.Wait() // their dials end with the context
	p.gate.Close()
	p.mu.Lock()
	p.closed = true
	p.ex = nil
	live := make([]exchanger, 0, len(p.live))
	for ex := range p.live {
		live = append(live, ex)
	}
	p.mu.Unlock()
	for _, ex := range live {
		p.forget(ex)
	}
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
