package policy

import (
	"testing"
	"time"
)

func TestStartLead(t *testing.T) {
	for _, c := range []struct {
		workers int
		want    time.Duration
	}{
		{1, 2 * time.Second},
		{ControlConcurrency, 2 * time.Second},               // one wave: the base covers it
		{ControlConcurrency + 1, 2*time.Second + StartWave}, // a second wave
		{50, 2*time.Second + StartWave},                     // the envtest's 50 workers
		{1000, 2*time.Second + 31*StartWave},                // 32 waves
		{20, 2 * time.Second},                               // 20 × 50,000: one wave
		{ControlConcurrency * 10, 2*time.Second + 9*StartWave},
	} {
		if got := StartLead(2*time.Second, c.workers); got != c.want {
			t.Errorf("StartLead(2s, %d) = %s, want %s", c.workers, got, c.want)
		}
	}
}

func TestStartAt(t *testing.T) {
	now := time.Date(2026, 11, 25, 7, 0, 10, 900_000_000, time.UTC) // 10.9 s
	for _, c := range []struct {
		now     time.Time
		workers int
		want    time.Time
	}{
		// 10.9 + 1 s = 11.9: kept as 11 by the status it would leave 0.1 s; rounded up it leaves 1.1 s.
		{now, 2, now.Truncate(time.Second).Add(2 * time.Second)},
		{now.Truncate(time.Second), 2, now.Truncate(time.Second).Add(time.Second)}, // already whole
		{now, 50, now.Truncate(time.Second).Add(3 * time.Second)},                  // 10.9 + 1.25 = 12.15 → 13
	} {
		got := StartAt(c.now, time.Second, c.workers)
		if !got.Equal(c.want) {
			t.Errorf("StartAt(%s, 1s, %d) = %s, want %s", c.now.Format("05.000"), c.workers, got.Format("05.000"), c.want.Format("05.000"))
		}
		if lead := got.Sub(c.now); lead < StartLead(time.Second, c.workers) || got.Truncate(time.Second) != got {
			t.Errorf("StartAt(%s, 1s, %d): lead %s, want a whole second at least StartLead ahead", c.now.Format("05.000"), c.workers, lead)
		}
	}
}

func TestFew(t *testing.T) {
	for _, c := range []struct {
		items []string
		n     int
		want  string
	}{
		{nil, 3, ""},
		{[]string{"0", "1"}, 3, "0, 1"},
		{[]string{"0", "1", "2"}, 3, "0, 1, 2"},
		{[]string{"0", "1", "2", "3", "4"}, 3, "0, 1, 2 and 2 more"},
	} {
		if got := Few(c.items, c.n); got != c.want {
			t.Errorf("Few(%v, %d) = %q, want %q", c.items, c.n, got, c.want)
		}
	}
}
