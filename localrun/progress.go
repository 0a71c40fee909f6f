package localrun

import (
	"context"
	"time"

	"github.com/msgbench/msgbench/loadgen"
)

// progress reports the workers' combined progress, from their snapshots, to o.Progress until
// the returned stop is called.
func (r *runner) progress(ctx context.Context, snapshots func() []loadgen.Snapshot) (stop func()) {
	if r.o.Progress == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	t := r.plan.Timing
	total := t.Warmup + t.Duration
	if r.plan.Messages() > 0 {
		total = 0
	}
	go func() {
		defer close(done)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		var lastReceived int64
		last := time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				p := Progress{Total: total}
				for _, s := range snapshots() {
					p.Phase = s.Phase
					p.Elapsed = max(p.Elapsed, s.Elapsed)
					p.Sent += s.Sent
					p.Received += s.Received
					p.Errors += s.Errors
				}
				if dt := now.Sub(last).Seconds(); dt > 0 {
					p.RecentPerSecond = float64(p.Received-lastReceived) / dt
				}
				lastReceived, last = p.Received, now
				r.o.Progress(p)
			}
		}
	}()
	return func() { cancel(); <-done }
}
