package http

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/quic-go/quic-go/http3"

	gwhttp "github.com/msgbench/msgbench/gateway/http"
	"github.com/msgbench/msgbench/gateway/http/stream"
	"github.com/msgbench/msgbench/internal/wire"
	"github.com/msgbench/msgbench/loadgen/drivers"
)

// subscriber holds one streaming GET; its reader goroutine hands each frame to the handler.
type subscriber struct {
	t      totals
	cc     clientConn
	body   io.ReadCloser
	retire func()
	cancel context.CancelFunc
	connB  int64

	mu     sync.Mutex
	err    error
	closed bool
	done   chan struct{}
	// stopped is closed when the reader goroutine returned: no Message call runs any more.
	stopped chan struct{}
}

// subscribe connects and sends the GET; it returns once the response headers arrived, that is
// once the gateway holds the broker's SUBACK.
func (d *driver) subscribe(ctx context.Context, c drivers.Client, h drivers.Handler) (*subscriber, error) {
	cc, counters, err := d.open(ctx, d.clientTLS.For(c.ID), d.zeroRTT)
	if err != nil {
		return nil, err
	}
	s := &subscriber{cc: cc, done: make(chan struct{}), stopped: make(chan struct{})}
	s.retire = s.t.add(counters)
	// The stream outlives Connect's ctx: it ends with Close.
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	stop := context.AfterFunc(ctx, cancel) // but a connect abandoned by ctx ends it too
	method := http.MethodGet
	if d.zeroRTT {
		method = http3.MethodGet0RTT // a GET is safe to replay: quic-go's http3 sends it in 0-RTT
	}
	get := func(method string) (*http.Request, *http.Response, error) {
		req, err := http.NewRequestWithContext(sctx, method, d.scheme+"://"+d.host+d.path(c.Topic), nil)
		if err != nil {
			return nil, nil, err
		}
		if auth := d.authFor(c); auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := cc.RoundTrip(req)
		if err != nil {
			return nil, nil, fmt.Errorf("GET %s: %w", req.URL.Path, err)
		}
		return req, resp, nil
	}
	req, resp, err := get(method)
	if hc, ok := cc.(h3Conn); ok && err == nil && resp.StatusCode == http.StatusTooEarly && method == http3.MethodGet0RTT {
		// RFC 8470 §5.2: a server unwilling to act on early data answers 425, and a client that
		// sent the request in early data retries it, not in early data, once the handshake is
		// complete (quic-go's client does not). Once: a second 425 is the server's final word.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		_ = resp.Body.Close()
		if err = hc.handshake(sctx); err == nil {
			req, resp, err = get(http.MethodGet)
		}
	}
	stop()
	if err != nil {
		s.abort()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		_ = resp.Body.Close()
		s.abort()
		return nil, fmt.Errorf("GET %s: %s: %s", req.URL.Path, resp.Status, msg)
	}
	if ct := resp.Header.Get("Content-Type"); ct != stream.ContentType {
		_ = resp.Body.Close()
		s.abort()
		return nil, fmt.Errorf("GET %s: content type %q, want %q", req.URL.Path, ct, stream.ContentType)
	}
	if g, err := strconv.Atoi(resp.Header.Get(gwhttp.QoSHeader)); err != nil || int32(g) < d.qos {
		_ = resp.Body.Close()
		s.abort()
		return nil, fmt.Errorf("GET %s: the gateway granted QoS %q, the benchmark asks for %d", req.URL.Path, resp.Header.Get(gwhttp.QoSHeader), d.qos)
	}
	s.body = resp.Body
	cs := s.t.counters()
	s.connB = cs.BytesSent + cs.BytesReceived
	go s.read(stream.NewReader(resp.Body, d.maxFrame), h)
	return s, nil
}

func (s *subscriber) read(frames *stream.Reader, h drivers.Handler) {
	defer close(s.stopped)
	for {
		p, err := frames.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the gateway ended the subscription stream")
			}
			s.finish(err)
			return
		}
		h.Message(p)
	}
}

func (s *subscriber) finish(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.done:
		return
	default:
	}
	if !s.closed {
		s.err = err
	}
	close(s.done)
}

func (s *subscriber) abort() {
	s.cancel()
	s.retire()
	_ = s.cc.Close()
}

// Subscribe returns at once: the GET of Connect already holds the subscription.
func (s *subscriber) Subscribe(context.Context) error { return nil }

func (s *subscriber) Publish([]byte, bool) error  { return errors.New("a subscriber does not publish") }
func (s *subscriber) Flush() error                { return nil }
func (s *subscriber) Drain(context.Context) error { return nil }
func (s *subscriber) ConnectBytes() int64         { return s.connB }
func (s *subscriber) Counters() wire.Counters     { return s.t.counters() }
func (s *subscriber) Done() <-chan struct{}       { return s.done }

func (s *subscriber) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *subscriber) Close() error {
	s.mu.Lock()
	already := s.closed
	s.closed = true
	s.mu.Unlock()
	if already {
		return nil
	}
	s.cancel()
	_ = s.body.Close()
	s.retire()
	_ = s.cc.Close()
	s.finish(nil)
	<-s.stopped // no Message after Close returned
	return nil
}
