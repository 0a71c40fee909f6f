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
