package loadgen

import (
	"context"
	"testing"
	"time"

	"github.com/msgbench/msgbench/plan"
)

// All workers together stay below Mosquitto's listen backlog of 100.
func TestConcurrentConnects(t *testing.T) {
	for _, tc := range []struct {
		workers int
		rtt     time.Duration
		want    int
	}{
		{0, 0, 64}, {1, 0, 64}, {2, 0, 32}, {4, 0, 16}, {8, 0, 8}, {50, 0, 8},
		{1, time.Millisecond, 64}, // loopback-like: the backlog bounds it
		{2, 5 * time.Millisecond, 160}, {1, 600 * time.Millisecond, 256}, {50, 100 * time.Millisecond, 256},
	} {
		got := concurrentConnects(tc.workers, tc.rtt)
		if got != tc.want {
			t.Errorf("concurrentConnects(%d, %v) = %d, want %d", tc.workers, tc.rtt, got, tc.want)
		}
		if tc.rtt == 0 && tc.workers >= 1 && tc.workers <= 8 && tc.workers*got >= 100 {
			t.Errorf("%d workers may have %d connects in flight, above the backlog of 100", tc.workers, tc.workers*got)
		}
	}
}

// The achieved rate counts each phase from its start to its last connect, not the pause between
// the subscribers' ramp and the publishers'.
func TestRampStatsLeaveOutPauses(t *testing.T) {
	r := &run{compiled: &plan.Plan{Groups: []plan.Group{{}}}, o: Options{Workers: 1}}
	r.group().Load.ConnectRate = 1000
	rp := r.newRamp()
	ctx := context.Background()
	for i := range 20 { // 19 ms at 1000/s
		if err := rp.wait(ctx, i); err != nil {
			t.Fatal(err)
		}
		rp.done()
	}
	time.Sleep(100 * time.Millisecond) // the start, the warm-up
	rp.restart()
	for i := range 20 {
		if err := rp.wait(ctx, i); err != nil {
			t.Fatal(err)
		}
		rp.done()
	}
	s := r.ramp.summary()
	if s.Connections != 40 {
		t.Fatalf("connections = %d, want 40", s.Connections)
	}
	if s.Seconds < 0.038 || s.Seconds > 0.09 {
		t.Fatalf("seconds = %.3f, want about 0.038 (two ramps of 19 ms, the 100 ms pause left out)", s.Seconds)
	}
	if s.TargetPerSecond != 1000 || s.PerSecond < 400 || s.PerSecond > 1100 {
		t.Fatalf("rate %.0f/s of target %d, want near 1000", s.PerSecond, s.TargetPerSecond)
	}
}
