package report

import (
	"math"
	"strconv"
	"testing"
)

// TestLogTicksWithinADecade: a log axis spanning less than two decades is labelled at 1, 2 and
// 5 times the powers of ten, not at 1 alone; a wider one at the powers of ten.
func TestLogTicksWithinADecade(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var out []string
		for _, tk := range (logTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	if got := labels(0.15, 6); len(got) != 5 || got[0] != "0.2" || got[1] != "0.5" || got[2] != "1" || got[3] != "2" || got[4] != "5" {
		t.Errorf("0.15 to 6: labels %q, want 0.2 0.5 1 2 5", got)
	}
	for _, l := range labels(0.05, 20) {
		if v, err := strconv.ParseFloat(l, 64); err != nil || math.Abs(math.Log10(v)-math.Round(math.Log10(v))) > 1e-9 {
			t.Errorf("0.05 to 20: label %q, want powers of ten only", l)
		}
	}
}
