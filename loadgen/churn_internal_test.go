package loadgen

import (
	"testing"
	"time"
)

func TestChurnSchedule(t *testing.T) {
	s := int64(time.Second)
	for _, tc := range []struct {
		name                 string
		i, n                 int
		period, from, to     int64
		wantPhase, wantWakes int64
	}{
		{"first device wakes at 0", 0, 20, s, 0, 4 * s, 0, 4},
		{"last device's phase", 19, 20, s, 0, 4 * s, 950 * int64(time.Millisecond), 4},
		{"a warm-up leaves out the first wakes", 10, 20, s, 2 * s, 4 * s, s / 2, 2},
		{"a window shorter than a period", 3, 4, 10 * s, 0, 5 * s, 7500 * int64(time.Millisecond), 0},
		{"the end is exclusive", 0, 2, s, 0, 3 * s, 0, 3},
	} {
		ph := dutyPhase(tc.i, tc.n, tc.period)
		if ph != tc.wantPhase {
			t.Errorf("%s: phase %d, want %d", tc.name, ph, tc.wantPhase)
		}
		if got := wakesIn(0, ph, tc.period, tc.from, tc.to); got != tc.wantWakes {
			t.Errorf("%s: %d wakes, want %d", tc.name, got, tc.wantWakes)
		}
	}
	for _, tc := range []struct {
		name                      string
		phase, period, awake, end int64
		want                      bool
	}{
		{"asleep at the end", 0, s, s / 5, 2 * s, true},
		{"awake through the end", 0, s, s / 2, 1400 * int64(time.Millisecond), false},
		{"never woke", 3 * s, 4 * s, s, 2 * s, true},
	} {
		if got := collects(0, tc.phase, tc.period, tc.awake, tc.end); got != tc.want {
			t.Errorf("%s: collects %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := sleeperPhase(0, 4, s); got != s/8 {
		t.Errorf("sleeper 0 of 4: phase %d, want an eighth of the period", got)
	}
}
