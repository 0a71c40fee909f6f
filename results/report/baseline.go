package report

import (
	"fmt"
	"math"
	"sort"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/msgbench/msgbench/results/figures"
)

// DefaultCompared are the figures a baseline comparison checks unless told otherwise: what a
// release could make worse.
var DefaultCompared = []string{"throughput.receivedPerSecond", "latency.endToEnd.p50", "latency.endToEnd.p99",
	"latency.connect.p50", "latency.firstMessage.p50", "wire.bytesPerMessage", "lostPercent"}

// CompareOptions say what Compare compares and when a change is a regression.
type CompareOptions struct {
	// Figures compared; none: DefaultCompared, less singleRunNoise where a side has one run.
	Figures []string
	// ThresholdPercent: a worse change beyond it is a regression (when significant, if tested).
	ThresholdPercent float64
	// Alpha is the significance level of Welch's t-test.
	Alpha float64
	// LatencyFloor: a latency change smaller than this is never a regression.
	LatencyFloor time.Duration
	// Holm applies the Holm–Bonferroni correction over every tested change: the chance that
	// any unchanged figure comes out significant stays at Alpha, however many are compared —
	// at the cost of missing real changes that few repetitions show only weakly.
	Holm bool
}

// DefaultLatencyFloor is the latency change below which nothing is a regression by default:
// three identical 5 s MQTT runs on the 2-core development machine had end-to-end p50s of 126,
// 141 and 174 µs (docs/reports.md) — changes of tens of per cent that are scheduling, not the
// broker.
const DefaultLatencyFloor = time.Millisecond

// singleRunNoise are default figures left out when a side has a single run: a tail or a figure
// of a few samples (one per connection) moves by more than any useful threshold from one run
// to the next — the same three runs had end-to-end p99s of 0.3, 2.2 and 12 ms.
var singleRunNoise = map[string]bool{"latency.endToEnd.p99": true, "latency.connect.p50": true, "latency.firstMessage.p50": true}

// Change is one figure of one point against the baseline.
type Change struct {
	Point  string `json:"point"`
	Figure string `json:"figure"`
	// Base and Current are the means over each side's repetitions, in the figure's stored unit
	// (latencies in µs, docs/objectives.md).
	Base    float64 `json:"base"`
	Current float64 `json:"current"`
	BaseN   int     `json:"baseRuns"`
	CurN    int     `json:"currentRuns"`
	// Percent is the change relative to the baseline, (Current − Base) / Base × 100; 0 with
	// FromZero set when the baseline is 0 and the current value is not.
	Percent  float64 `json:"percent"`
	FromZero bool    `json:"fromZero,omitempty"`
	// Worse: the change is in the figure's bad direction (less throughput, more latency, bytes
	// or loss).
	Worse bool `json:"worse"`
	// P is the two-sided p-value of Welch's t-test of the two sides' runs; nil when a side has
	// fewer than two repetitions (Test says so).
	P    *float64 `json:"p,omitempty"`
	Test string   `json:"test"`
	// Regression: Worse by more than the threshold, and significant at alpha when tested.
	Regression bool `json:"regression"`
}

// Comparison is a dataset against a baseline.
type Comparison struct {
	Baseline         string  `json:"baseline"`
	ThresholdPercent float64 `json:"thresholdPercent"`
	Alpha            float64 `json:"alpha"`
	// Correction names the multiple-comparison correction applied, if any.
	Correction string `json:"correction,omitempty"`
	// LatencyFloorMicros: latency changes below it are never regressions.
	LatencyFloorMicros float64  `json:"latencyFloorMicros"`
	Changes            []Change `json:"changes"`
	// Unmatched names the points found on one side only.
	Unmatched []string `json:"unmatched,omitempty"`
	// Notes say what was not compared, and why.
	Notes []string `json:"notes,omitempty"`
}

// Regressions counts the changes that are regressions.
func (c *Comparison) Regressions() int {
	n := 0
	for _, ch := range c.Changes {
		if ch.Regression {
			n++
		}
	}
	return n
}

// higherIsBetter: rates are better high; latencies, bytes, losses and errors low.
func higherIsBetter(f figures.Figure) bool {
	return f.Kind == figures.Rate || f.Kind == figures.ByteRate
}

// Compare compares each point of cur with the point of the same name in base (a single point with
// a single point whatever their names), figure by figure. A change is a regression when it is in
// the figure's bad direction by more than thresholdPercent and — where both sides have two or more
// repetitions — Welch's t-test finds it significant at alpha; with fewer repetitions the threshold
// alone decides, and Test says so.
func Compare(base, cur *Dataset, o CompareOptions) (*Comparison, error) {
	names, explicit := o.Figures, len(o.Figures) > 0
	if !explicit {
		names = DefaultCompared
	}
	thresholdPercent, alpha := o.ThresholdPercent, o.Alpha
	floor := float64(o.LatencyFloor.Microseconds())
	var figs []figures.Figure
	for _, n := range names {
		f, err := figures.Lookup(n)
		if err != nil {
			return nil, err
		}
		figs = append(figs, f)
	}
	c := &Comparison{ThresholdPercent: thresholdPercent, Alpha: alpha, LatencyFloorMicros: floor}
	skipped := map[string]bool{}
	pairs := map[*Point]*Point{}
	if len(base.Points) == 1 && len(cur.Points) == 1 {
		pairs[cur.Points[0]] = base.Points[0]
	} else {
		byName := map[string]*Point{}
		for _, p := range base.Points {
			byName[p.Name] = p
		}
		seen := map[string]bool{}
		for _, p := range cur.Points {
			if b, ok := byName[p.Name]; ok {
				pairs[p], seen[p.Name] = b, true
			} else {
				c.Unmatched = append(c.Unmatched, p.Name+" (not in the baseline)")
			}
		}
		for _, p := range base.Points {
			if !seen[p.Name] {
				c.Unmatched = append(c.Unmatched, p.Name+" (only in the baseline)")
			}
		}
	}
	for _, p := range cur.Points {
		b, ok := pairs[p]
		if !ok {
			continue
		}
		for _, f := range figs {
			bs, okb := b.Stats.Figures[f.Name]
			cs, okc := p.Stats.Figures[f.Name]
			if !okb || !okc || bs.N == 0 || cs.N == 0 {
				continue
			}
			if !explicit && min(bs.N, cs.N) < 2 && singleRunNoise[f.Name] {
				if !skipped[f.Name] {
					skipped[f.Name] = true
					c.Notes = append(c.Notes, f.Name+" not compared: with one run a side its change is noise (--figures "+f.Name+" compares it anyway)")
				}
				continue
			}
			ch := Change{Point: p.Name, Figure: f.Name, Base: bs.Mean, Current: cs.Mean, BaseN: bs.N, CurN: cs.N}
			change := cs.Mean - bs.Mean
			if bs.Mean != 0 {
				ch.Percent = change / math.Abs(bs.Mean) * 100
			} else {
				ch.FromZero = change != 0 // no percentage of zero: any change is beyond a threshold
			}
			ch.Worse = change != 0 && (change < 0) == higherIsBetter(f)
			beyond := ch.Worse && (ch.FromZero || math.Abs(ch.Percent) > thresholdPercent)
			if f.Kind == figures.Duration && math.Abs(change) < floor {
				beyond = false // below what a shared machine reproduces from run to run
			}
			if bs.N >= 2 && cs.N >= 2 {
				pv := welchP(bs.Mean, bs.SD, bs.N, cs.Mean, cs.SD, cs.N)
				ch.P = &pv
				ch.Test = fmt.Sprintf("Welch's t-test, p = %.3g", pv)
				ch.Regression = beyond && pv < alpha
			} else {
				ch.Test = fmt.Sprintf("no test (%d and %d runs): threshold alone", bs.N, cs.N)
				ch.Regression = beyond
			}
			c.Changes = append(c.Changes, ch)
		}
	}
	if o.Holm {
		c.Correction = "Holm–Bonferroni"
		holm(c.Changes, alpha)
	}
	sort.SliceStable(c.Changes, func(a, b int) bool { return c.Changes[a].Regression && !c.Changes[b].Regression })
	return c, nil
}

// holm keeps as regressions only the tested changes that stay significant under the
// Holm–Bonferroni step-down procedure over all m tested changes: the i-th smallest p-value
// (from 0) must be below alpha / (m − i), and once one is not, none after it is.
func holm(changes []Change, alpha float64) {
	var tested []int
	for i, ch := range changes {
		if ch.P != nil {
			tested = append(tested, i)
		}
	}
	sort.SliceStable(tested, func(a, b int) bool { return *changes[tested[a]].P < *changes[tested[b]].P })
	m := len(tested)
	rejecting := true
	for k, i := range tested {
		rejecting = rejecting && *changes[i].P < alpha/float64(m-k)
		if !rejecting && changes[i].Regression {
			changes[i].Regression = false
			changes[i].Test += fmt.Sprintf("; not significant after Holm–Bonferroni over %d tests", m)
		}
	}
}

// welchP is the two-sided p-value of Welch's unequal-variances t-test of two samples given by
// their means, sample standard deviations and sizes (each n ≥ 2).
func welchP(m1, s1 float64, n1 int, m2, s2 float64, n2 int) float64 {
	v1, v2 := s1*s1/float64(n1), s2*s2/float64(n2)
	if v1+v2 == 0 {
		if m1 == m2 {
			return 1
		}
		return 0
	}
	t := (m2 - m1) / math.Sqrt(v1+v2)
	df := (v1 + v2) * (v1 + v2) / (v1*v1/float64(n1-1) + v2*v2/float64(n2-1))
	return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(t))
}
