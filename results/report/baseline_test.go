package report

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/msgbench/msgbench/results"
)

// TestWelchMatchesScipy: the p-value is scipy.stats.ttest_ind(a, b, equal_var=False)'s.
func TestWelchMatchesScipy(t *testing.T) {
	// a = [1 2 3 4 5], b = [2 4 6 8 10]: mean 3 and 6, sd √2.5 and √10.
	if p := welchP(3, math.Sqrt(2.5), 5, 6, math.Sqrt(10), 5); math.Abs(p-0.10753119493062728) > 1e-9 {
		t.Errorf("p = %v, scipy 0.10753119493062728", p)
	}
	if p := welchP(5, 0, 3, 5, 0, 3); p != 1 {
		t.Errorf("identical constant samples: p = %v", p)
	}
}

// TestCompare: a drop in throughput beyond the threshold is a regression when significant, an
// improvement never is, a change within the threshold is not, and one repetition decides by the
// threshold alone and says so.
func TestCompare(t *testing.T) {
	suiteOf := func(reps int, rate, connectMicros float64) *Dataset {
		return FromSuite(synthetic([]axis{{[]string{"qos"}, []string{"0", "1"}}}, reps, func(v map[string]string, rep int) *results.Result {
			// ±10 around the rate: a spread the test must see through.
			return measured(rate+float64((rep%3)-1)*10, 0, int64(connectMicros), 1000, 100)
		}))
	}
	base := suiteOf(5, 1000, 2000)
	cases := []struct {
		name        string
		cur         *Dataset
		threshold   float64
		regressions int
		test        string
	}{
		{"throughput down 20%, connect 50% faster", suiteOf(5, 800, 1000), 10, 2, "Welch"},
		{"throughput down 20% within a 25% threshold", suiteOf(5, 800, 2000), 25, 0, "Welch"},
		{"the same", suiteOf(5, 1000, 2000), 1, 0, "Welch"},
		{"throughput up 20%", suiteOf(5, 1200, 2000), 10, 0, "Welch"},
		{"one repetition: the threshold decides", suiteOf(1, 800, 2000), 10, 2, "no test (5 and 1 runs)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Compare(base, tc.cur, CompareOptions{Figures: []string{"throughput.receivedPerSecond", "latency.connect.p50"}, ThresholdPercent: tc.threshold, Alpha: 0.05})
			if err != nil {
				t.Fatal(err)
			}
			if c.Regressions() != tc.regressions {
				t.Errorf("%d regressions, want %d: %+v", c.Regressions(), tc.regressions, c.Changes)
			}
			for _, ch := range c.Changes {
				if !strings.Contains(ch.Test, tc.test) {
					t.Errorf("test %q, want %q", ch.Test, tc.test)
				}
				if ch.Figure == "latency.connect.p50" && ch.Regression {
					t.Error("lower connect latency counted as a regression")
				}
			}
		})
	}
	if _, err := Compare(base, base, CompareOptions{Figures: []string{"throughput.recievedPerSecond"}, ThresholdPercent: 10, Alpha: 0.05}); err == nil || !strings.Contains(err.Error(), "throughput.receivedPerSecond") {
		t.Errorf("a misspelt figure: %v, want the error to suggest the right name", err)
	}
	// Loss from 0 % to 0.5 %: no percentage of zero, but a regression beyond any threshold.
	lossy := func(lost int64) *Dataset {
		return FromSuite(synthetic([]axis{{[]string{"qos"}, []string{"1"}}}, 1, func(map[string]string, int) *results.Result {
			r := measured(100, 0, 1, 1, 1)
			r.Expected, r.Lost = 1000, &lost
			return r
		}))
	}
	c0, err := Compare(lossy(0), lossy(5), CompareOptions{Figures: []string{"lostPercent"}, ThresholdPercent: 50, Alpha: 0.05})
	if err != nil || c0.Regressions() != 1 || !c0.Changes[0].FromZero {
		t.Errorf("loss from 0: %+v (%v)", c0, err)
	}
	if _, err := json.Marshal(c0); err != nil {
		t.Errorf("comparison.json: %v", err)
	}
	other := FromSuite(synthetic([]axis{{[]string{"qos"}, []string{"2", "1"}}}, 1, func(map[string]string, int) *results.Result { return measured(1, 0, 1, 1, 1) }))
	other.Points[0].Name = "p9"
	c, _ := Compare(base, other, CompareOptions{ThresholdPercent: 10, Alpha: 0.05})
	if len(c.Unmatched) != 2 || !strings.Contains(strings.Join(c.Unmatched, ";"), "p9 (not in the baseline)") {
		t.Errorf("unmatched %v", c.Unmatched)
	}
}

// TestSingleRunsAreNotNoise: one run a side, the same benchmark twice on a busy machine — end-to-end
// p50 126 then 174 µs, p99 0.3 then 12 ms, connect 485 then 735 µs (measured, docs/reports.md) —
// is no regression by default: sub-millisecond latency changes are below the floor, and tails and
// connect latencies are left out (and say so); a 20 ms slower broker still is one.
func TestSingleRunsAreNotNoise(t *testing.T) {
	run := func(p50, p99, connect int64) *Dataset {
		return FromSuite(synthetic([]axis{{[]string{"qos"}, []string{"1"}}}, 1, func(map[string]string, int) *results.Result {
			r := measured(2000, 0, connect, 3000, 664.8)
			r.Latency.EndToEnd.P50Micros, r.Latency.EndToEnd.P99Micros = p50, p99
			return r
		}))
	}
	o := CompareOptions{ThresholdPercent: 10, Alpha: 0.05, LatencyFloor: DefaultLatencyFloor}
	c, err := Compare(run(126, 330, 485), run(174, 12090, 735), o)
	if err != nil {
		t.Fatal(err)
	}
	if c.Regressions() != 0 || len(c.Notes) != 3 {
		t.Errorf("noise: %d regressions, notes %v: %+v", c.Regressions(), c.Notes, c.Changes)
	}
	c, _ = Compare(run(126, 330, 485), run(20126, 20330, 20485), o)
	if c.Regressions() != 1 || c.Changes[0].Figure != "latency.endToEnd.p50" {
		t.Errorf("20 ms slower: %+v", c.Changes)
	}
	o.Figures = []string{"latency.endToEnd.p99"}
	if c, _ = Compare(run(126, 330, 485), run(174, 12090, 735), o); c.Regressions() != 1 {
		t.Errorf("p99 named with --figures is compared: %+v", c.Changes)
	}
}

// TestHolm: with many points, one unchanged figure that comes out "significant" by chance
// (p = 0.02 among 132 tests, as an unchanged rerun of study 5 did) is no regression after the
// Holm–Bonferroni correction, while a change with p = 1e-6 stays one.
func TestHolm(t *testing.T) {
	p := func(v float64) *float64 { return &v }
	changes := []Change{{Figure: "a", P: p(0.021), Regression: true}, {Figure: "b", P: p(1e-6), Regression: true}}
	for range 130 {
		changes = append(changes, Change{Figure: "x", P: p(0.5)})
	}
	changes = append(changes, Change{Figure: "untested", Regression: true}) // one run a side: no p
	holm(changes, 0.05)
	if changes[0].Regression || !strings.Contains(changes[0].Test, "Holm–Bonferroni over 132 tests") {
		t.Errorf("p = 0.021 among 132: %+v", changes[0])
	}
	if !changes[1].Regression || !changes[len(changes)-1].Regression {
		t.Error("a strong change, or an untested one, was dropped")
	}
}
