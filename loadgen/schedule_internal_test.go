package loadgen

import (
	"testing"
	"time"
)

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

// The schedule's three answers agree: in(from, to) is the number of messages k, not past the
// quota (done), whose due time at(k) falls in [from, to). The engine counts a window's unsent
// messages with in and sends by at and done, so a disagreement would show as messages neither
// sent nor counted unsent (TestOpenLoopStopsWithTheWindow and TestSlowRampOffersTheWholeSchedule
// check the same sum on real runs).
func TestScheduleCountsWhatItSends(t *testing.T) {
	for _, c := range []struct {
		rate       float64
		publishers int
		phase      float64
		quota      int64
	}{
		{400, 4, 0.25, 0}, {120, 60, 0.5, 0}, {3, 1, 0, 0}, {1000, 7, 0.9, 0}, {200, 2, 0.3, 150}, {0.5, 1, 0.1, 0},
	} {
		const t0 = 12_345
		s := newSchedule(c.rate, c.publishers, t0, c.phase, c.quota)
		for _, w := range [][2]int64{{t0, t0 + 2e9}, {t0 + 333e6, t0 + 1_500e6}, {0, t0}, {t0 + 1e9, t0 + 1e9}} {
			var want int64
			for k := int64(0); !s.done(k) && s.at(k) < w[1]; k++ {
				if s.at(k) >= w[0] {
					want++
				}
				if k > 0 && s.at(k) <= s.at(k-1) {
					t.Fatalf("%+v: at(%d) %d not after at(%d) %d", c, k, s.at(k), k-1, s.at(k-1))
				}
			}
			if got := s.in(w[0], w[1]); got != want {
				t.Errorf("rate %g, %d publishers, phase %g, quota %d: in(%d, %d) = %d, at and done give %d",
					c.rate, c.publishers, c.phase, c.quota, w[0], w[1], got, want)
			}
		}
	}
}

// The window's count of an open loop is rate × duration whatever the warm-up before it and however
// the publishers' phases spread them: the pure side of TestWarmupIsExcluded (which checks it on
// one real run) and of the open-loop counts the real runs assert (TestPausedBroker…: 1,200 of
// 400/s × 3 s; TestReconnectStormAllBack: 1,000).
func TestWindowOffersRateTimesDuration(t *testing.T) {
	for _, c := range []struct {
		rate       float64
		publishers int
		window     time.Duration
		want       int64
	}{
		{200, 2, 2 * time.Second, 400}, {400, 1, 3 * time.Second, 1200}, {500, 10, 2 * time.Second, 1000}, {120, 60, 2 * time.Second, 240},
	} {
		for _, warmup := range []time.Duration{0, 500 * time.Millisecond, time.Second, 3 * time.Second} {
			const t0 = 1_000_000
			from := t0 + int64(warmup)
			to := from + int64(c.window)
			var total int64
			for i := range c.publishers {
				total += newSchedule(c.rate, c.publishers, t0, float64(i)/float64(c.publishers), 0).in(from, to)
			}
			if total != c.want {
				t.Errorf("%g msg/s over %d publishers, warm-up %s, window %s: %d due in the window, want %d", c.rate, c.publishers, warmup, c.window, total, c.want)
			}
		}
	}
}

// A publisher's meter counts an acknowledgement only for a message sent from its first measured
// publish on (nothing before begin: the warm-up's acknowledgements arriving in the window are not
// the window's), and its uplink bytes from the socket's count at that first publish; a session
// whose bytes are not counted (-1: a duty cycle's) has none. TestWireBytesPerMessageExcludeWarmup
// and TestUnfinishedWindowHasNoUplinkFigure check the same on real runs.
func TestMeterCountsOnlyTheWindow(t *testing.T) {
	var m meter
	m.reset()
	if m.counts(0) || m.counts(5e9) || m.measuring {
		t.Fatalf("reset meter counts acknowledgements: %v %v, measuring %v", m.counts(0), m.counts(5e9), m.measuring)
	}
	m.recount(1000)
	if m.bytes != 0 {
		t.Errorf("bytes %d before the first measured message, want 0", m.bytes)
	}
	m.begin(2e9, 700) // 700 bytes of connect and warm-up written before the window
	if m.counts(2e9-1) || !m.counts(2e9) || !m.counts(3e9) {
		t.Errorf("after begin at 2 s: counts(2 s - 1 ns) %v, counts(2 s) %v, counts(3 s) %v; want false, true, true", m.counts(2e9-1), m.counts(2e9), m.counts(3e9))
	}
	m.recount(1900)
	if m.bytes != 1200 {
		t.Errorf("bytes %d, want 1200 (1900 written, 700 of them before the window)", m.bytes)
	}
	var d meter
	d.reset()
	d.begin(1e9, -1)
	d.recount(5000)
	if d.bytes != 0 || !d.counts(1e9) {
		t.Errorf("uncounted session: bytes %d (want 0), counts %v", d.bytes, d.counts(1e9))
	}
}
