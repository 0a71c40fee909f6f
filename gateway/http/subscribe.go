package http

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msgbench/msgbench/gateway/http/stream"
	"github.com/msgbench/msgbench/internal/mqtt"
)

// subscribe handles GET /topics/<topic>: one MQTT connection for this stream, SUBSCRIBE at the
// QoS, then 200 with the stream headers once the broker granted it (SUBACK), then one frame per
// delivered message until the client or the broker leaves. The gateway acknowledges a QoS 1/2
// message to the broker once its frame is written and flushed to the client.
func (a *api) subscribe(w http.ResponseWriter, r *http.Request, topic string, qos byte, user, pass string) {
	if !acquire(a.streams) {
		w.Header().Set("Retry-After", "1")
		fail(w, http.StatusServiceUnavailable, "too many subscription streams open at the gateway")
		return
	}
	a.subs.Add(1)
	defer func() { <-a.streams; a.subs.Done() }()

	s := &subStream{w: w, rc: http.NewResponseController(w), failed: make(chan struct{}), delivered: &a.out}
	h := w.Header()
	h["Date"] = noDate
	h.Set("Content-Type", stream.ContentType)
	h.Set("Cache-Control", "no-store")
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	conn, err := a.pools.connect(ctx, user, pass, mqtt.Options{
		Inflight:      a.settings.inflight,
		MaxPacketSize: int(a.limits.MaxBodyBytes) + len(topic) + 1024,
		OnPublish:     s.deliver,
	})
	if err != nil {
		cancel()
		brokerFailure(w, err)
		return
	}
	defer func() { _ = conn.Disconnect() }()
	codes, err := conn.Subscribe(ctx, mqtt.Subscription{Filter: topic, QoS: qos})
	cancel()
	if err != nil {
		fail(w, http.StatusBadGateway, "subscribe: "+err.Error())
		return
	}
	if len(codes) != 1 || codes[0] >= 0x80 {
		fail(w, http.StatusForbidden, "broker refused the subscription to "+topic)
		return
	}
	h.Set(QoSHeader, strconv.Itoa(int(codes[0]))) // the granted QoS
	s.start()
	select {
	case <-r.Context().Done():
	case <-conn.Done():
	case <-s.failed:
	case <-a.closing:
	}
	s.stop()
}

// subStream writes delivered messages to one response. deliver runs on the MQTT connection's
// reader goroutine; the mutex orders it with the handler's own writes and its return.
type subStream struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	mu     sync.Mutex
	sent   bool // headers written
	done   bool // handler returning: w must not be touched
	failed chan struct{}
	hdr    [stream.HeaderSize]byte
	// delivered counts messages written to any stream (the gateway's metrics)
	delivered *atomic.Uint64
}

func (s *subStream) start() {
	s.mu.Lock()
	if !s.sent && !s.done {
		s.sent = true
		s.w.WriteHeader(http.StatusOK)
		if err := s.rc.Flush(); err != nil {
			s.failLocked()
		}
	}
	s.mu.Unlock()
}

func (s *subStream) stop() {
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
}

func (s *subStream) deliver(p *mqtt.Publish) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return
	}
	if !s.sent { // a message overtook the handler between SUBACK and its WriteHeader
		s.sent = true
		s.w.WriteHeader(http.StatusOK)
	}
	stream.PutHeader(s.hdr[:], len(p.Payload))
	if _, err := s.w.Write(s.hdr[:]); err != nil {
		s.failLocked()
		return
	}
	if _, err := s.w.Write(p.Payload); err != nil {
		s.failLocked()
		return
	}
	if err := s.rc.Flush(); err != nil {
		s.failLocked()
		return
	}
	s.delivered.Add(1)
}

func (s *subStream) failLocked() {
	if !s.done {
		s.done = true
		close(s.failed)
	}
}
