package localrun

import (
	"context"
	"fmt"
	"time"

	"github.com/msgbench/msgbench/netem"
	"github.com/msgbench/msgbench/results"
)

// playTimeline applies each step's link through set at windowStart + the step's at, until stop
// closes or ctx ends, and returns the steps as they took effect: at is measured after set
// returned, since then every packet the forwarder reads gets the new link. An error from set
// ends the timeline: the run would otherwise measure a link it did not ask for.
func playTimeline(ctx context.Context, stop <-chan struct{}, windowStart time.Time, steps []netem.Step,
	set func(netem.Link) error, logf func(string, ...any)) ([]results.NetworkStepMark, error) {
	var marks []results.NetworkStepMark
	for _, s := range steps {
		t := time.NewTimer(time.Until(windowStart.Add(s.At)))
		select {
		case <-t.C:
		case <-stop:
			t.Stop()
			return marks, nil
		case <-ctx.Done():
			t.Stop()
			return marks, nil
		}
		if err := set(s.Link); err != nil {
			return marks, fmt.Errorf("%s: applying the step at %v: %w", s.Path(), s.At, err)
		}
		at := time.Since(windowStart)
		mark := results.NetworkStepMark{At: at.Seconds(), Planned: s.At.Seconds(), Description: s.Description}
		if s.Index >= 0 {
			mark.Step = &s.Index
		}
		marks = append(marks, mark)
		logf("network: %s at %.3fs (planned %v): %s", s.Path(), at.Seconds(), s.At, s.Description)
	}
	return marks, nil
}

// startTimeline plays spec.network.timeline from the measured window's start — the workers'
// agreed start plus the warm-up, the result timeline's t = 0 — while the workers run. The
// returned function stops it and waits for it (call it once the workers are done); then marks
// holds the steps as they took effect.
func (r *runner) startTimeline(ctx context.Context, gate *startGate) (marks *[]results.NetworkStepMark, stop func() error) {
	marks = new([]results.NetworkStepMark)
	if len(r.net.timeline) == 0 {
		return marks, func() error { return nil }
	}
	quit, done := make(chan struct{}), make(chan struct{})
	var err error
	go func() {
		defer close(done)
		at, werr := gate.wait(ctx)
		if werr != nil {
			return // the workers report why they did not start
		}
		*marks, err = playTimeline(ctx, quit, at.Add(r.plan.Timing.Warmup), r.net.timeline, r.net.setLink, r.logf)
	}()
	return marks, func() error {
		close(quit)
		<-done
		return err
	}
}
