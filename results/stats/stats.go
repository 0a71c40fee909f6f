// Package stats computes a suite point's statistics over its repetitions: for every figure the
// mean, sample standard deviation, the 95 % confidence interval of the mean (Student's t) and
// the coefficient of variation, and for latencies the value pooled over all repetitions'
// messages by merging their histograms (docs/objectives.md, "Statistics").
package stats

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/results/figures"
)

// UnstableCV is the coefficient of variation, in percent, above which a figure varies too much
// over the repetitions to compare: more repetitions, or a quieter machine, are needed.
const UnstableCV = 10

// Summary describes a sample of one figure over repetitions.
type Summary struct {
	// N is the number of values.
	N int `json:"n"`
	// Mean is their arithmetic mean.
	Mean float64 `json:"mean"`
	// SD is the sample standard deviation (n − 1 in the denominator), 0 for n < 2.
	SD float64 `json:"sd,omitempty"`
	// CI95 is the half-width of the 95 % confidence interval of the mean, t(0.975, n−1)·SD/√n
	// with Student's t: the true mean lies in Mean ± CI95 with 95 % confidence if the runs
	// vary at random around it. 0 for n < 2.
	CI95 float64 `json:"ci95,omitempty"`
	// Min and Max are the extremes.
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	// CV is the coefficient of variation SD/|Mean| in percent, 0 when Mean is 0.
	CV float64 `json:"cv,omitempty"`
	// Unstable is CV > UnstableCV.
	Unstable bool `json:"unstable,omitempty"`
}

// Describe summarises xs. An empty xs gives the zero Summary.
func Describe(xs []float64) Summary {
	n := len(xs)
	if n == 0 {
		return Summary{}
	}
	s := Summary{N: n, Min: xs[0], Max: xs[0]}
	var sum float64
	for _, x := range xs {
		sum += x
		s.Min, s.Max = min(s.Min, x), max(s.Max, x)
	}
	s.Mean = sum / float64(n)
	if n < 2 {
		return s
	}
	// Two passes (deviations from the mean) rather than Σx² − n·mean², which cancels
	// catastrophically for figures like throughput with a large mean and a small spread.
	var ss float64
	for _, x := range xs {
		ss += (x - s.Mean) * (x - s.Mean)
	}
	s.SD = math.Sqrt(ss / float64(n-1))
	s.CI95 = tQuantile(0.975, float64(n-1)) * s.SD / math.Sqrt(float64(n))
	if s.Mean != 0 {
		s.CV = s.SD / math.Abs(s.Mean) * 100
	}
	s.Unstable = s.CV > UnstableCV
	return s
}

// tQuantile is the p-quantile of Student's t distribution with df degrees of freedom. gonum
// (already a dependency through gonum/plot) computes it by inverting the regularised
// incomplete beta function, within 1e-13 of scipy (see the tests).
func tQuantile(p, df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}

// Headline lists the figures whose instability PointStats.Unstable reports: the ones a
// comparison of points is about. Others are left out on purpose: tail latencies such as p999
// or max of a few runs rest on a handful of messages each and always vary by more than 10 %,
// and flagging them would make every point unstable.
var Headline = []string{"throughput.receivedPerSecond", "throughput.sentPerSecond", "latency.endToEnd.p50", "latency.endToEnd.p99"}

// FigureStats are one figure's statistics over a point's repetitions.
type FigureStats struct {
	// Summary is over the repetitions that have the figure.
	Summary
	// Pooled is, for latency figures, the figure computed from the histograms of all
	// repetitions merged: the p99 of every message of every repetition, not a mean of p99s.
	// Nil for other figures, or when a repetition's histogram is missing (Notes says so).
	Pooled *float64 `json:"pooled,omitempty"`
}

// PointStats are a suite point's statistics.
type PointStats struct {
	// Runs counts the repetitions the statistics are over: those that Succeeded.
	Runs int `json:"runs"`
	// LeftOut counts repetitions left out because they did not succeed: a failed run's
	// figures do not measure the point.
	LeftOut int `json:"leftOut,omitempty"`
	// Figures are by figure name (figures.All), for every figure some counted run has.
	Figures map[string]FigureStats `json:"figures"`
	// Unstable lists the Headline figures whose CV exceeds UnstableCV, in Headline's order.
	Unstable []string `json:"unstable,omitempty"`
	// Notes say what could not be computed as intended (a latency not pooled, and why).
	Notes []string `json:"notes,omitempty"`
}

// Point computes the statistics of one point from its repetitions' results. Only runs whose
// Phase is Succeeded (or empty, as in a worker's own result) count; the rest are LeftOut.
func Point(runs []*results.Result) PointStats {
	p := PointStats{Figures: map[string]FigureStats{}}
	var counted []*results.Result
	var index []int // of each counted run in runs, to name it in Notes
	for i, r := range runs {
		if r == nil || (r.Phase != "" && r.Phase != "Succeeded") {
			p.LeftOut++
			continue
		}
		counted, index = append(counted, r), append(index, i)
	}
	p.Runs = len(counted)
	fs := figures.All()
	// A device group's energy (groups.<g>.energy.*), for the groups that have one: what a suite
	// over a battery question compares when the devices are a group behind their own link.
	var energyGroups []string
	for _, r := range counted {
		for _, g := range r.Groups {
			if g.Energy != nil && !slices.Contains(energyGroups, g.Name) {
				energyGroups = append(energyGroups, g.Name)
				fs = append(fs, figures.GroupEnergy(g.Name)...)
			}
		}
	}
	for _, f := range fs {
		var xs []float64
		for _, r := range counted {
			if v, ok := f.Value(r); ok {
				xs = append(xs, v)
			}
		}
		if len(xs) > 0 {
			p.Figures[f.Name] = FigureStats{Summary: Describe(xs)}
		}
	}
	for _, h := range results.HistogramNames {
		p.pool(counted, index, h)
	}
	for _, name := range Headline {
		if p.Figures[name].Unstable {
			p.Unstable = append(p.Unstable, name)
		}
	}
	return p
}

// pool merges histogram h of every run exactly (results' HdrHistogram merge, as for workers)
// and sets Pooled of each latency figure of h to its value in the merged histogram's summary,
// computed by results.Summarize like a single run's.
func (p *PointStats) pool(runs []*results.Result, index []int, h string) {
	merged := results.NewHistogram()
	for i, r := range runs {
		enc, ok := r.Histograms[h]
		if !ok {
			if figures.LatencySummary(r, h) != nil {
				p.Notes = append(p.Notes, fmt.Sprintf("latency.%s not pooled: %s has no histogram; its statistics are the mean over the runs", h, name(r, index[i])))
				return
			}
			continue // the run measured no such latency
		}
		hist, err := results.DecodeHistogram(enc)
		if err != nil {
			p.Notes = append(p.Notes, fmt.Sprintf("latency.%s not pooled: %s: %v; its statistics are the mean over the runs", h, name(r, index[i]), err))
			return
		}
		if dropped := merged.Merge(hist); dropped > 0 {
			p.Notes = append(p.Notes, fmt.Sprintf("latency.%s not pooled: merging %s dropped %d samples; its statistics are the mean over the runs", h, name(r, index[i]), dropped))
			return
		}
	}
	s := results.Summarize(merged)
	if s == nil {
		return
	}
	whole := withLatency(h, s)
	for _, f := range figures.All() {
		fs, ok := p.Figures[f.Name]
		if f.Histogram != h || !ok {
			continue
		}
		if v, ok := f.Value(whole); ok {
			fs.Pooled = &v
			p.Figures[f.Name] = fs
		}
	}
}

// withLatency returns a result holding only s as latency h, to read figures from it.
func withLatency(h string, s *results.LatencySummary) *results.Result {
	r := &results.Result{}
	switch h {
	case results.HistEndToEnd:
		r.Latency.EndToEnd = s
	case results.HistPublishAck:
		r.Latency.PublishAck = s
	case results.HistPublishDelay:
		r.Latency.PublishDelay = s
	case results.HistConnect:
		r.Latency.Connect = s
	case results.HistFirstMessage:
		r.Latency.FirstMessage = s
	}
	return r
}

func name(r *results.Result, i int) string {
	if r.RunID != "" {
		return "run " + r.RunID
	}
	return fmt.Sprintf("run %d", i)
}

// Value is what objectives judge a point on: for latency figures the value pooled from every
// repetition's messages, for every other figure (and a latency that could not be pooled) the
// mean over the repetitions. False when no counted run has the figure. It has the signature
// objectives.Judge takes.
func (p PointStats) Value(figure string) (float64, bool) {
	fs, ok := p.Figures[figure]
	if !ok || fs.N == 0 {
		return 0, false
	}
	if fs.Pooled != nil {
		return *fs.Pooled, true
	}
	return fs.Mean, true
}
