package loadgen

import "testing"

func TestScheduledIn(t *testing.T) {
	for _, c := range []struct {
		start           int64
		interval        float64
		from, to, quota int64
		want            int64
	}{
		{0, 10, 0, 100, 0, 10},       // 0,10,…,90
		{0, 10, 5, 100, 0, 9},        // 10…90
		{0, 10, 10, 100, 0, 9},       // 10 is in
		{0, 10, 0, 101, 0, 11},       // 100 is in
		{3, 10, 0, 100, 0, 10},       // 3…93
		{0, 10, 0, 100, 4, 4},        // quota
		{0, 10, 50, 100, 4, 0},       // quota spent before the window
		{0, 10, 100, 100, 0, 0},      // empty window
		{0, 2.5e6, 0, 1e9, 0, 400},   // 400/s for 1 s
		{7, 1e9 / 3.0, 0, 1e9, 0, 3}, // fractional interval
	} {
		if got := scheduledIn(c.start, c.interval, c.from, c.to, c.quota); got != c.want {
			t.Errorf("scheduledIn(%d, %g, %d, %d, %d) = %d, want %d", c.start, c.interval, c.from, c.to, c.quota, got, c.want)
		}
	}
}

// A publisher's schedule: the publishers share the rate, each starts at its phase of one
// interval after the run's start, a quota stops it, and a closed loop has no due times.
func TestSchedule(t *testing.T) {
	// 4 publishers at 400 msg/s: one message every 10 ms each; the second of them (phase 1/4)
	// starts 2.5 ms after t0 = 1000 ns.
	s := newSchedule(400, 4, 1000, 0.25, 0)
	if !s.openLoop || s.interval != 10e6 || s.at(0) != 1000+2_500_000 || s.at(3) != 1000+2_500_000+30_000_000 {
		t.Errorf("open loop %+v: at(0) %d, at(3) %d", s, s.at(0), s.at(3))
	}
	if got := s.in(0, 1e9); got != 100 { // 1 s of 100 msg/s
		t.Errorf("%d due in the first second, want 100", got)
	}
	q := newSchedule(400, 4, 0, 0, 5)
	if q.done(4) || !q.done(5) || q.in(0, 1e9) != 5 {
		t.Errorf("quota 5: done(4) %v done(5) %v, %d due", q.done(4), q.done(5), q.in(0, 1e9))
	}
	c := newSchedule(0, 4, 1000, 0.5, 0)
	if c.openLoop || c.in(0, 1e9) != 0 || c.done(1<<40) {
		t.Errorf("closed loop %+v: %d due", c, c.in(0, 1e9))
	}
}
