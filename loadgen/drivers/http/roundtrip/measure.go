package roundtrip

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/msgbench/msgbench/loadgen/drivers"
)

// Measurement is one subscriber and one publisher of a driver, timed as the engine times them.
type Measurement struct {
	// SubscriberConnect and PublisherConnect: start of Driver.Connect → it returned.
	SubscriberConnect, PublisherConnect time.Duration
	// FirstMessage: start of the publisher's Connect → its first message delivered to the
	// subscriber (the subscriber was connected and subscribed before).
	FirstMessage time.Duration
	// Acks are publish → acknowledgement (Completed) of each message, in order.
	Acks []time.Duration
}

// Factory makes the driver under test from a config whose clock Measure owns.
type Factory func(cfg drivers.Config) (drivers.Driver, error)

// Measure connects a subscriber, subscribes, connects a publisher and publishes messages
// (at least 1) one after the other, each once the previous one was acknowledged; topic names
// the topic. cfg.Now is replaced.
func Measure(ctx context.Context, newDriver Factory, cfg drivers.Config, topic string, messages int) (Measurement, error) {
	var m Measurement
	epoch := time.Now()
	cfg.Now = func() int64 { return int64(time.Since(epoch)) }
	drv, err := newDriver(cfg)
	if err != nil {
		return m, err
	}
	h := &handler{now: cfg.Now, got: make(chan int64, 16), acked: make(chan int64, 16)}
	t0 := cfg.Now()
	sub, err := drv.Connect(ctx, drivers.Client{ID: "rt-sub", Role: drivers.Subscriber, Topic: topic}, h)
	if err != nil {
		return m, fmt.Errorf("subscriber: %w", err)
	}
	defer sub.Close()
	m.SubscriberConnect = time.Duration(cfg.Now() - t0)
	if err := sub.Subscribe(ctx); err != nil {
		return m, err
	}
	t1 := cfg.Now()
	pub, err := drv.Connect(ctx, drivers.Client{ID: "rt-pub", Role: drivers.Publisher, Topic: topic}, h)
	if err != nil {
		return m, fmt.Errorf("publisher: %w", err)
	}
	defer pub.Close()
	m.PublisherConnect = time.Duration(cfg.Now() - t1)
	payload := make([]byte, 16)
	for i := range max(1, messages) {
		binary.BigEndian.PutUint32(payload, uint32(i))
		if err := pub.Publish(payload, true); err != nil {
			return m, err
		}
		select {
		case at := <-h.got:
			if i == 0 {
				m.FirstMessage = time.Duration(at - t1)
			}
		case <-ctx.Done():
			return m, fmt.Errorf("message %d not delivered: %w", i, ctx.Err())
		}
		select {
		case d := <-h.acked:
			m.Acks = append(m.Acks, time.Duration(d))
		case <-ctx.Done():
			return m, fmt.Errorf("message %d not acknowledged: %w", i, ctx.Err())
		}
	}
	return m, nil
}

type handler struct {
	now        func() int64
	got, acked chan int64
}

func (h *handler) Message([]byte) {
	select {
	case h.got <- h.now():
	default:
	}
}

func (h *handler) Completed(sentAt int64, _ bool) {
	select {
	case h.acked <- h.now() - sentAt:
	default:
	}
}

// Min is the smallest of each field over repetitions (Acks by position). Use it to check
// round-trip counts: scheduling and processing noise only ever adds time (an emulated link never
// delivers early), so the minimum of a few repetitions is the protocol's own latency even on a
// busy machine, while a round trip the protocol always pays still shows.
func Min(ms []Measurement) Measurement {
	return reduce(ms, func(v []time.Duration) time.Duration { return v[0] })
}

// Median is the median of each field over repetitions (Acks by position): the typical figure.
func Median(ms []Measurement) Measurement {
	return reduce(ms, func(v []time.Duration) time.Duration { return v[len(v)/2] })
}

func reduce(ms []Measurement, pick func(sorted []time.Duration) time.Duration) Measurement {
	med := func(f func(Measurement) time.Duration) time.Duration {
		v := make([]time.Duration, 0, len(ms))
		for _, m := range ms {
			v = append(v, f(m))
		}
		slices.Sort(v)
		return pick(v)
	}
	out := Measurement{
		SubscriberConnect: med(func(m Measurement) time.Duration { return m.SubscriberConnect }),
		PublisherConnect:  med(func(m Measurement) time.Duration { return m.PublisherConnect }),
		FirstMessage:      med(func(m Measurement) time.Duration { return m.FirstMessage }),
	}
	for i := range ms[0].Acks {
		out.Acks = append(out.Acks, med(func(m Measurement) time.Duration {
			if i < len(m.Acks) {
				return m.Acks[i]
			}
			return 0
		}))
	}
	return out
}
