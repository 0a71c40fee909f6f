package loadgen

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/msgbench/msgbench/loadgen/drivers"
)

// ramp paces new connections: with connectRate > 0 connection i starts at i/connectRate seconds
// after the ramp began; with 0 they start at once, at most maxConcurrentConnects at a time so
// that ten thousand SYNs do not overflow the broker's accept queue.
type ramp struct {
	rate  int32
	start time.Time
	slots chan struct{}
}

const maxConcurrentConnects = 256

func newRamp(rate int32) *ramp {
	return &ramp{rate: rate, start: time.Now(), slots: make(chan struct{}, maxConcurrentConnects)}
}

func (r *ramp) restart() { r.start = time.Now() }

// wait blocks until connection i may start; call done when its connect finished.
func (r *ramp) wait(ctx context.Context, i int) error {
	if r.rate > 0 {
		if err := sleepUntil(ctx, r.start.Add(time.Duration(i)*time.Second/time.Duration(r.rate))); err != nil {
			return err
		}
	}
	select {
	case r.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *ramp) done() { <-r.slots }

// connectTimeout bounds one client's connection set-up (dial, handshakes, CONNACK): a peer that
// accepts TCP but never answers must not hang the run. Long enough for satellite links.
const connectTimeout = 60 * time.Second

func (r *run) clientID(role string, index int) string {
	return fmt.Sprintf("mb%s-%s%d", r.o.RunID, role, index)
}

// connect opens a session, recording connect latency.
func (r *run) connect(ctx context.Context, c drivers.Client, h drivers.Handler, dialStart *atomic.Int64) (drivers.Session, error) {
	start := r.now()
	dialStart.Store(start)
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	sess, err := r.drv.Connect(ctx, c, h)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", r.o.Address, err) // the caller names the client
	}
	r.rec.recordConnect((r.now() - start) / 1000)
	return sess, nil
}
