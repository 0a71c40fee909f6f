package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/msgbench/msgbench/internal/wire"
	"github.com/msgbench/msgbench/loadgen/drivers"
)

// consumerOpts tune a subscriber's fetches for latency and for the benchmark's record size.
func consumerOpts(payloadBytes int32) []kgo.Opt {
	part := max(int32(1<<20), payloadBytes+recordOverhead)
	return []kgo.Opt{
		// The broker answers a fetch as soon as one byte is there (fetch.min.bytes 1); this only
		// bounds an idle fetch, as the Java consumer's fetch.max.wait.ms does.
		kgo.FetchMaxWait(500 * time.Millisecond),
		kgo.FetchMaxPartitionBytes(part),
		kgo.FetchMaxBytes(max(part, 50<<20)),
	}
}

// subscriber consumes every partition of its topic directly, without a consumer group: every
// subscriber of a topic sees every message, and no group rebalance stands between subscribing
// and receiving. One goroutine polls and calls the handler, so the handler is never concurrent.
type subscriber struct {
	d            *driver
	cl           *kgo.Client
	conns        *conns
	h            drivers.Handler
	topic        string
	connectBytes int64

	ctx     context.Context
	cancel  context.CancelFunc
	polled  chan struct{} // closed when the poll loop ended
	polling atomic.Bool
	done    chan struct{}
	err     atomic.Pointer[error]
	once    sync.Once
}

func newSubscriber(d *driver, cl *kgo.Client, cs *conns, c drivers.Client, h drivers.Handler) *subscriber {
	cb := cs.counters()
	ctx, cancel := context.WithCancel(context.Background())
	return &subscriber{d: d, cl: cl, conns: cs, h: h, topic: c.Topic, connectBytes: cb.BytesSent + cb.BytesReceived,
		ctx: ctx, cancel: cancel, polled: make(chan struct{}), done: make(chan struct{})}
}

// Subscribe creates the topic if needed, reads every partition's end offset and starts
// consuming exactly there. It returns once the positions are fixed: a record published after
// it returned has an offset at or past them, so it cannot be missed (consuming "from the end"
// would resolve the end later, on the first fetch, and could skip records).
func (s *subscriber) Subscribe(ctx context.Context) error {
	ends, err := endOffsets(ctx, s.cl, s.topic, s.d.o.Partitions, s.d.o.Replicas)
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", s.topic, err)
	}
	s.d.ensured.Store(s.topic, struct{}{})
	at := make(map[int32]kgo.Offset, len(ends))
	for p, o := range ends {
		at[p] = kgo.NewOffset().At(o)
	}
	s.cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{s.topic: at})
	s.polling.Store(true)
	go s.poll()
	return nil
}

func (s *subscriber) poll() {
	defer close(s.polled)
	deliver := func(r *kgo.Record) { s.h.Message(r.Value) }
	for {
		fs := s.cl.PollFetches(s.ctx)
		if s.ctx.Err() != nil || fs.IsClientClosed() {
			return
		}
		fs.EachError(func(topic string, p int32, err error) {
			if errors.Is(err, context.Canceled) {
				return
			}
			e := fmt.Errorf("fetch %s[%d]: %w", topic, p, err)
			s.err.CompareAndSwap(nil, &e)
		})
		fs.EachRecord(deliver)
	}
}

func (s *subscriber) Publish([]byte, bool) error {
	return errors.New("kafka: a subscriber does not publish")
}
func (s *subscriber) Flush() error                { return nil }
func (s *subscriber) Drain(context.Context) error { return nil }
func (s *subscriber) ConnectBytes() int64         { return s.connectBytes }
func (s *subscriber) Counters() wire.Counters     { return s.conns.counters() }
func (s *subscriber) Done() <-chan struct{}       { return s.done }
func (s *subscriber) Err() error {
	if e := s.err.Load(); e != nil {
		return *e
	}
	return nil
}

func (s *subscriber) Close() error {
	s.once.Do(func() {
		s.cancel()
		s.cl.Close()
		if s.polling.Load() {
			<-s.polled
		}
		close(s.done)
	})
	return nil
}
