package http

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/msgbench/msgbench/internal/wire"
	"github.com/msgbench/msgbench/loadgen/drivers"
)

// h1Publisher publishes over HTTP/1.1 with msgbench's own minimal client: one request in flight
// per connection (no pipelining, as real devices and wrk do), the request written with one
// system call from a reused buffer, the response parsed in place. net/http's client costs
// several allocations and a goroutine per connection; on the benchmark's hot path that would
// measure the client instead of the gateway.
type h1Publisher struct {
	d   *driver
	h   drivers.Handler
	tls *tls.Config // the client's
	t   totals
	mu  sync.Mutex // Publish vs Close

	ncMu   sync.Mutex // guards nc for Close, which must not wait for a response
	nc     net.Conn
	served int // responses read on nc
	// idleSince is when nc last carried a response, or was dialled: a server may close a
	// connection that sat idle (Go's ReadHeaderTimeout closes a new one that sends no request
	// for 10 s; nginx's client_header_timeout does the same after 60 s).
	idleSince time.Time
	retire    func()
	br        *bufio.Reader
	head      []byte // request head up to and including "Content-Length: "
	wbuf      []byte
	connB     int64
	// redial is the context later connections are dialled with: Connect's values (the
	// client's id, drivers.WithClient) without its deadline.
	redial context.Context
	done   chan struct{}
	err    error
	closed atomic.Bool
}

func (d *driver) newH1Publisher(ctx context.Context, c drivers.Client, h drivers.Handler) (*h1Publisher, error) {
	p := &h1Publisher{d: d, h: h, tls: d.clientTLS.For(c.ID), done: make(chan struct{}),
		redial: context.WithoutCancel(ctx)}
	var b bytes.Buffer
	b.WriteString("POST " + d.path(c.Topic) + " HTTP/1.1\r\nHost: " + d.host + "\r\n")
	if auth := d.authFor(c); auth != "" {
		b.WriteString("Authorization: " + auth + "\r\n")
	}
	if !d.keepAlive {
		b.WriteString("Connection: close\r\n")
	}
	b.WriteString("Content-Type: application/octet-stream\r\nContent-Length: ")
	p.head = b.Bytes()
	if err := p.dial(ctx); err != nil {
		return nil, err
	}
	cs := p.t.counters()
	p.connB = cs.BytesSent + cs.BytesReceived
	return p, nil
}

func (p *h1Publisher) dial(ctx context.Context) error {
	nc, counted, err := p.d.dialTCP(ctx, p.tls)
	if err != nil {
		return err
	}
	p.ncMu.Lock()
	p.nc, p.served, p.idleSince = nc, 0, time.Now()
	p.ncMu.Unlock()
	p.retire = p.t.add(counted.Counters)
	if p.br == nil {
		p.br = bufio.NewReaderSize(nc, 4096)
	} else {
		p.br.Reset(nc)
	}
	return nil
}

func (p *h1Publisher) hangUp() {
	if p.nc != nil {
		p.retire()
		_ = p.nc.Close()
		p.ncMu.Lock()
		p.nc = nil
		p.ncMu.Unlock()
	}
}

// Publish sends one POST and waits for its response (HTTP/1.1 keeps one request in flight per
// connection). Without keep-alive it first opens a new connection.
func (p *h1Publisher) Publish(payload []byte, _ bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed.Load() {
		return errClosed
	}
	sentAt := p.d.cfg.Now()
	if p.nc == nil {
		if err := p.dial(p.redial); err != nil {
			return p.fail(err)
		}
		if p.closed.Load() { // Close ran while we dialled: it could not close this connection
			p.hangUp()
			return errClosed
		}
	}
	p.wbuf = append(p.wbuf[:0], p.head...)
	p.wbuf = strconv.AppendInt(p.wbuf, int64(len(payload)), 10)
	p.wbuf = append(p.wbuf, "\r\n\r\n"...)
	p.wbuf = append(p.wbuf, payload...)
	status, keep, err := p.roundTrip()
	if errors.Is(err, errStale) {
		// The gateway closed the idle connection as the request left: it never read it, so
		// sending it again on a new connection cannot duplicate the message.
		p.hangUp()
		if err = p.dial(p.redial); err == nil {
			status, keep, err = p.roundTrip()
		}
	}
	if err != nil {
		return p.fail(err)
	}
	p.served++
	p.idleSince = time.Now()
	if !keep || !p.d.keepAlive {
		p.hangUp()
	}
	p.h.Completed(sentAt, status >= 200 && status < 300)
	return nil
}

// staleAfter is how long a new connection waits for its first request before a close by the
// server counts as an idle connection's (errStale) rather than a refusal.
const staleAfter = time.Second

// errStale marks a failure on a reused connection before any byte of the response arrived:
// what a server closing an idle keep-alive connection looks like.
var errStale = errors.New("idle connection closed by the server")

// roundTrip writes p.wbuf and reads the response.
func (p *h1Publisher) roundTrip() (status int, keep bool, err error) {
	// A reused connection, or a new one that waited for its first request (an open-loop device
	// whose first message is due a minute after it connected), may have been closed by the
	// server as idle: the request then goes again on a new connection.
	reused := p.served > 0 || time.Since(p.idleSince) >= staleAfter
	if _, err := p.nc.Write(p.wbuf); err != nil {
		if reused {
			return 0, false, fmt.Errorf("%w: send POST: %w", errStale, err)
		}
		return 0, false, fmt.Errorf("send POST: %w", err)
	}
	if _, err := p.br.Peek(1); err != nil { // nothing of a response arrived
		if reused && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) {
			return 0, false, fmt.Errorf("%w: read response: %w", errStale, err)
		}
		return 0, false, fmt.Errorf("read response: %w", err)
	}
	status, keep, err = readResponse(p.br)
	if err != nil {
		return 0, false, fmt.Errorf("read response: %w", err)
	}
	return status, keep, nil
}

// errClosed is the one closed error of every driver.
var errClosed = drivers.ErrClosed

func (p *h1Publisher) fail(err error) error {
	p.hangUp()
	if p.closed.Load() {
		return errClosed // Close interrupted the request: not a failure of the run
	}
	if p.err == nil {
		p.err = err
		close(p.done)
	}
	return err
}

func (p *h1Publisher) Subscribe(context.Context) error {
	return errors.New("a publisher does not subscribe")
}
func (p *h1Publisher) Flush() error { return p.closedErr() }

// Drain has nothing to wait for: Publish waits for each response.
func (p *h1Publisher) Drain(context.Context) error { return p.closedErr() }

func (p *h1Publisher) closedErr() error {
	if p.closed.Load() {
		return errClosed
	}
	return nil
}
func (p *h1Publisher) ConnectBytes() int64     { return p.connB }
func (p *h1Publisher) Counters() wire.Counters { return p.t.counters() }
func (p *h1Publisher) Done() <-chan struct{}   { return p.done }

func (p *h1Publisher) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Close first closes the connection, which ends a Publish waiting for its response, then waits
// for that Publish to return.
func (p *h1Publisher) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	p.ncMu.Lock()
	if p.nc != nil {
		_ = p.nc.Close()
	}
	p.ncMu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hangUp()
	if p.err == nil {
		close(p.done)
	}
	return nil
}

// readResponse reads one HTTP/1.1 response and discards its body. keep is false when the server
// will close the connection.
func readResponse(br *bufio.Reader) (status int, keep bool, err error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return 0, false, err
	}
	// "HTTP/1.1 204 No Content\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, false, fmt.Errorf("malformed status line %q", line)
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, false, fmt.Errorf("malformed status line %q", line)
	}
	keep = line[7] == '1'
	length, chunked := int64(0), false
	for {
		line, err = br.ReadSlice('\n')
		if err != nil {
			return 0, false, err
		}
		if len(line) <= 2 { // "\r\n": end of the head
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, false, fmt.Errorf("malformed header line %q", line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.ParseInt(string(value), 10, 64); err != nil || length < 0 {
				return 0, false, fmt.Errorf("malformed Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			keep = !bytes.EqualFold(value, []byte("close"))
		}
	}
	if chunked {
		return status, keep, discardChunked(br)
	}
	_, err = br.Discard(int(length))
	return status, keep, err
}

// discardChunked skips a chunked body and its trailer.
func discardChunked(br *bufio.Reader) error {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		sizeHex, _, _ := bytes.Cut(bytes.TrimSpace(line), []byte(";"))
		size, err := strconv.ParseInt(string(sizeHex), 16, 64)
		if err != nil || size < 0 {
			return fmt.Errorf("malformed chunk size %q", line)
		}
		if size == 0 {
			for { // trailer lines until the blank one
				line, err = br.ReadSlice('\n')
				if err != nil {
					return err
				}
				if len(line) <= 2 {
					return nil
				}
			}
		}
		if _, err := br.Discard(int(size)); err != nil {
			return err
		}
		if _, err := io.ReadFull(br, make([]byte, 2)); err != nil {
			return err
		}
	}
}
