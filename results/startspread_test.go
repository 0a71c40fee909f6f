package results

import "testing"

func TestStartSpreadOf(t *testing.T) {
	for _, c := range []struct {
		name string
		ws   []WorkerSummary
		want *StartSpread
	}{
		{"one worker has no spread", []WorkerSummary{{StartSkewMicros: 900}}, nil},
		{"early and late workers: the spread is max − min", []WorkerSummary{
			{Index: 0, StartSkewMicros: 1200, ControlRTTMicros: 300},
			{Index: 1, StartSkewMicros: -400, ControlRTTMicros: 800},
			{Index: 2, StartSkewMicros: 150, ControlRTTMicros: 100},
		}, &StartSpread{Workers: 3, SpreadMicros: 1600, EarliestMicros: -400, LatestMicros: 1200, MaxControlRTTMicros: 800}},
		{"all late by the same amount: no spread", []WorkerSummary{{StartSkewMicros: 5000}, {StartSkewMicros: 5000}},
			&StartSpread{Workers: 2, EarliestMicros: 5000, LatestMicros: 5000}},
	} {
		got := StartSpreadOf(c.ws)
		if (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestMergeReportsStartSpread: the merged result of several workers says how closely they started.
func TestMergeReportsStartSpread(t *testing.T) {
	parts := []*Result{
		{Phase: "Succeeded", Workers: []WorkerSummary{{Index: 1, StartSkewMicros: 700, ControlRTTMicros: 90}}},
		{Phase: "Succeeded", Workers: []WorkerSummary{{Index: 0, StartSkewMicros: 200, ControlRTTMicros: 40}}},
	}
	m, err := Merge(parts)
	if err != nil {
		t.Fatal(err)
	}
	if s := m.WorkersStart; s == nil || s.SpreadMicros != 500 || s.LatestMicros != 700 || s.MaxControlRTTMicros != 90 {
		t.Errorf("workersStart %+v, want spread 500 µs, latest 700 µs, max round trip 90 µs", s)
	}
}
