package kafka

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/msgbench/msgbench/internal/wire"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/plan"
)

// publisher is a producing session. Publish hands a record to franz-go's asynchronous Produce;
// the promise reports the acknowledgement. Records and their payload copies are reused through
// a free list, so the hot path allocates nothing once warm, and no goroutine runs per message.
type publisher struct {
	cl           *kgo.Client
	conns        *conns
	h            drivers.Handler
	now          func() int64
	topic        string
	key          []byte
	acked        bool // the broker acknowledges (acks ≥ 1): report Completed
	connectBytes int64

	mu   sync.Mutex
	free []*pending

	err       atomic.Pointer[error]
	done      chan struct{}
	closeOnce sync.Once
	closed    atomic.Bool
	// gate keeps franz-go's promises (its goroutines, or Produce failing a record at once) from
	// calling the handler once Close began.
	gate drivers.Gate
}

// pending is one record on its way; it owns a copy of the payload, because the engine reuses
// its buffer as soon as Publish returns.
type pending struct {
	rec     kgo.Record
	buf     []byte
	sentAt  int64
	promise func(*kgo.Record, error) // bound once to this pending, so Produce allocates no closure
}

func newPublisher(d *driver, cl *kgo.Client, cs *conns, c drivers.Client, h drivers.Handler) *publisher {
	cb := cs.counters()
	return &publisher{
		cl: cl, conns: cs, h: h, now: d.cfg.Now, topic: c.Topic,
		// Keyed by publisher: the key picks the partition, so a publisher's messages stay in order.
		key:          []byte(c.ID),
		acked:        d.o.Acks != plan.AcksNone,
		connectBytes: cb.BytesSent + cb.BytesReceived,
		done:         make(chan struct{}),
	}
}

func (s *publisher) get() *pending {
	s.mu.Lock()
	if n := len(s.free); n > 0 {
		p := s.free[n-1]
		s.free = s.free[:n-1]
		s.mu.Unlock()
		return p
	}
	s.mu.Unlock()
	p := &pending{}
	p.promise = func(_ *kgo.Record, err error) { s.completed(p, err) }
	return p
}

// completed runs on franz-go's promise goroutine.
func (s *publisher) completed(p *pending, err error) {
	// Records failed because Close closed the client are neither the session's error nor
	// reported: they were not acknowledged, and Close has begun.
	if s.gate.Enter() {
		if err != nil {
			s.err.CompareAndSwap(nil, &err)
		}
		if s.acked || err != nil {
			s.h.Completed(p.sentAt, err == nil)
		}
		s.gate.Leave()
	}
	s.mu.Lock()
	s.free = append(s.free, p)
	s.mu.Unlock()
}

func (s *publisher) Subscribe(context.Context) error { return nil }

// Publish produces one record. It blocks while the client holds BufferedRecords or
// BufferedBytes unacknowledged. flush is ignored: franz-go sends as soon as a connection is
// free (spec.kafka.lingerMs 0) and batches what accumulates meanwhile, in both loops.
func (s *publisher) Publish(payload []byte, _ bool) error {
	if s.closed.Load() {
		return drivers.ErrClosed
	}
	if e := s.err.Load(); e != nil {
		return *e
	}
	p := s.get()
	p.buf = append(p.buf[:0], payload...)
	p.rec = kgo.Record{Topic: s.topic, Key: s.key, Value: p.buf}
	p.sentAt = s.now()
	s.cl.Produce(context.Background(), &p.rec, p.promise)
	if s.closed.Load() { // Close ended a Produce blocked on the full buffer
		return drivers.ErrClosed
	}
	return nil
}

// Flush waits until every record produced so far is sent and acknowledged (franz-go has no
// send-without-waiting flush), so that byte counters read afterwards cover exactly those records.
func (s *publisher) Flush() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return s.flush(ctx)
}

// Drain waits for every record's promise (franz-go runs it before Flush returns).
func (s *publisher) Drain(ctx context.Context) error { return s.flush(ctx) }

func (s *publisher) flush(ctx context.Context) error {
	if s.closed.Load() {
		return drivers.ErrClosed
	}
	err := s.cl.Flush(ctx)
	switch {
	case s.closed.Load():
		return drivers.ErrClosed
	case err != nil && ctx.Err() != nil:
		return &drivers.DrainError{Unacknowledged: int(s.cl.BufferedProduceRecords()), Err: ctx.Err()}
	}
	return err
}

func (s *publisher) ConnectBytes() int64     { return s.connectBytes }
func (s *publisher) Counters() wire.Counters { return s.conns.counters() }
func (s *publisher) Done() <-chan struct{}   { return s.done }

func (s *publisher) Err() error {
	if e := s.err.Load(); e != nil {
		return *e
	}
	return nil
}

// Close closes the client, which fails a blocked Produce and the records still buffered; the
// gate, closed first, keeps their promises from reaching the handler. A second call returns nil.
func (s *publisher) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.gate.Close()
		s.cl.Close()
		close(s.done)
	})
	return nil
}
