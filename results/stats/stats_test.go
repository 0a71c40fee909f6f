package stats

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/results/figures"
)

func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// Student's t 0.975-quantiles from scipy 1.17.1:
//
//	python3 -c 'from scipy import stats; print([float(stats.t.ppf(0.975, df)) for df in (1, 2, 3, 4, 5, 9, 10, 29, 100)])'
func TestTQuantile(t *testing.T) {
	dfs := []float64{1, 2, 3, 4, 5, 9, 10, 29, 100}
	want := []float64{12.706204736174694, 4.302652729749462, 3.1824463052837078, 2.7764451051977934, 2.5705818356363146,
		2.262157162798205, 2.228138851986274, 2.045229642132703, 1.9839715185235518}
	for i, df := range dfs {
		if got := tQuantile(0.975, df); !near(got, want[i], 1e-12) {
			t.Errorf("t(0.975, %v) = %.15g, scipy %.15g", df, got, want[i])
		}
	}
}

// Mean, sample SD, CI95 half-width and CV from numpy/scipy 1.17.1:
//
//	python3 -c 'from scipy import stats; import numpy as np; [print(xs, float(np.mean(xs)), float(np.std(xs, ddof=1)), float(stats.t.ppf(0.975, len(xs)-1)*np.std(xs, ddof=1)/np.sqrt(len(xs))), float(np.std(xs, ddof=1)/abs(np.mean(xs))*100)) for xs in ([1, 2, 3, 4, 5], [812.4, 790.1, 805.3, 830.0, 798.7], [10, 12], [100, 130, 85, 160, 90, 140], [-3.5, -1.25, 2.0, 0.5], [1e9+1, 1e9+2, 1e9+3])]'
func TestDescribe(t *testing.T) {
	for _, c := range []struct {
		xs                 []float64
		mean, sd, ci95, cv float64
		min, max           float64
		unstable           bool
	}{
		{[]float64{1, 2, 3, 4, 5}, 3.0, 1.5811388300841898, 1.9632431614775572, 52.70462766947299, 1, 5, true},
		{[]float64{812.4, 790.1, 805.3, 830.0, 798.7}, 807.3, 15.125309914180256, 18.78055278211209, 1.873567436415243, 790.1, 830, false},
		{[]float64{10, 12}, 11.0, 1.4142135623730951, 12.706204736174694, 12.856486930664502, 10, 12, true},
		{[]float64{100, 130, 85, 160, 90, 140}, 117.5, 30.29026246172192, 31.787680969134456, 25.778946775933548, 85, 160, true},
		{[]float64{-3.5, -1.25, 2.0, 0.5}, -0.5625, 2.366211810750114, 3.765171017320186, 420.6598774666869, -3.5, 2, true},
		// a large mean with a small spread: the two-pass variance keeps every digit
		{[]float64{1e9 + 1, 1e9 + 2, 1e9 + 3}, 1000000002.0, 1.0, 2.4841377117503303, 9.999999979999999e-08, 1e9 + 1, 1e9 + 3, false},
	} {
		s := Describe(c.xs)
		if s.N != len(c.xs) || !near(s.Mean, c.mean, 1e-12) || !near(s.SD, c.sd, 1e-9) || !near(s.CI95, c.ci95, 1e-9) ||
			!near(s.CV, c.cv, 1e-9) || s.Min != c.min || s.Max != c.max || s.Unstable != c.unstable {
			t.Errorf("Describe(%v) = %+v, want mean %v sd %v ci95 %v cv %v min %v max %v unstable %v",
				c.xs, s, c.mean, c.sd, c.ci95, c.cv, c.min, c.max, c.unstable)
		}
	}
}

func TestDescribeEdges(t *testing.T) {
	if s := Describe(nil); s != (Summary{}) {
		t.Errorf("Describe(nil) = %+v", s)
	}
	if s := Describe([]float64{42}); s != (Summary{N: 1, Mean: 42, Min: 42, Max: 42}) {
		t.Errorf("one value: %+v (no SD, CI or CV from one run)", s)
	}
	if s := Describe([]float64{0, 0, 0}); s.CV != 0 || s.Unstable || s.SD != 0 {
		t.Errorf("zeros: %+v", s)
	}
	// mean 0 with spread: CV is undefined, reported as 0, not Inf
	if s := Describe([]float64{-1, 1}); s.CV != 0 || s.Unstable || s.SD == 0 {
		t.Errorf("mean 0: %+v", s)
	}
	// exactly 10 % is not unstable; above is: SD of {90, 110} is 14.14 → CV 14.1 %
	if s := Describe([]float64{95, 105}); s.Unstable != (s.CV > 10) {
		t.Errorf("{95, 105}: %+v", s)
	}
}

// run builds a repetition as a worker does: samples into histograms, then Finalize.
func run(t *testing.T, rng *rand.Rand, id string, received int64, scale float64, all map[string]*hdrhistogram.Histogram) *results.Result {
	t.Helper()
	hists := map[string]*hdrhistogram.Histogram{}
	for _, h := range []string{results.HistEndToEnd, results.HistConnect} {
		hists[h] = results.NewHistogram()
		for i := 0; i < 500+rng.IntN(3000); i++ {
			// exponential latencies, a different scale per run, past 2048 µs where HdrHistogram
			// buckets are coarser than 1 µs
			v := int64(rng.ExpFloat64() * scale)
			results.RecordMicros(hists[h], v)
			results.RecordMicros(all[h], v)
		}
	}
	r := &results.Result{Name: "p", RunID: id, Phase: "Succeeded", MeasuredSeconds: 10, Sent: 1000, Received: received, ReceivedInWindow: received, Expected: 1000,
		Lost: results.Int64(1000 - received)}
	if err := r.Finalize(hists); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPooledIsOneHistogramOfEverything: a point's pooled percentiles must equal those of one
// histogram fed every message of every repetition; the means are plain means over runs.
func TestPooledIsOneHistogramOfEverything(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	all := map[string]*hdrhistogram.Histogram{results.HistEndToEnd: results.NewHistogram(), results.HistConnect: results.NewHistogram()}
	var runs []*results.Result
	for i, rec := range []int64{990, 1000, 950, 1000, 980} {
		runs = append(runs, run(t, rng, string(rune('a'+i)), rec, float64(200*(i+1)), all))
	}
	failed := run(t, rng, "f", 10, 5000, map[string]*hdrhistogram.Histogram{results.HistEndToEnd: results.NewHistogram(), results.HistConnect: results.NewHistogram()})
	failed.Phase = "Failed"
	p := Point(append(runs, failed, nil))
	if p.Runs != 5 || p.LeftOut != 2 {
		t.Errorf("runs %d left out %d, want 5 and 2 (a failed run and a nil one)", p.Runs, p.LeftOut)
	}
	if len(p.Notes) != 0 {
		t.Errorf("notes: %v", p.Notes)
	}
	for _, h := range []string{results.HistEndToEnd, results.HistConnect} {
		whole := withLatency(h, results.Summarize(all[h]))
		for _, f := range figures.All() {
			if f.Histogram != h {
				continue
			}
			want, _ := f.Value(whole)
			fs := p.Figures[f.Name]
			if fs.Pooled == nil || *fs.Pooled != want {
				t.Errorf("%s pooled %v, one histogram of every message %v", f.Name, fs.Pooled, want)
			}
			if v, ok := p.Value(f.Name); !ok || v != want {
				t.Errorf("Value(%s) = %v, want the pooled %v", f.Name, v, want)
			}
			if fs.N != 5 {
				t.Errorf("%s over %d runs", f.Name, fs.N)
			}
		}
	}
	// the pooled p99 is not the mean of the runs' p99s (the runs differ ×5 in scale)
	if fs := p.Figures["latency.endToEnd.p99"]; *fs.Pooled == fs.Mean {
		t.Errorf("pooled p99 %v equals the mean of p99s", *fs.Pooled)
	}
	// other figures: the mean over the counted runs, no pool
	fs := p.Figures["received"]
	if fs.Pooled != nil || fs.N != 5 || fs.Mean != 984 || fs.Min != 950 || fs.Max != 1000 {
		t.Errorf("received: %+v", fs)
	}
	if v, ok := p.Value("throughput.receivedPerSecond"); !ok || v != 98.4 {
		t.Errorf("Value(receivedPerSecond) = %v %v, want the mean 98.4", v, ok)
	}
	if _, ok := p.Value("latency.publishAck.p99"); ok {
		t.Error("a latency no run measured has a value")
	}
	if _, ok := p.Value("wire.datagramsSent"); ok {
		t.Error("a figure no run has has a value")
	}
	// receivedPerSecond varies 2 %; the p99 of runs ×1–×5 apart varies far more than 10 %
	if !reflect.DeepEqual(p.Unstable, []string{"latency.endToEnd.p50", "latency.endToEnd.p99"}) {
		t.Errorf("unstable %v", p.Unstable)
	}
}

func TestPointWithoutHistograms(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	all := map[string]*hdrhistogram.Histogram{results.HistEndToEnd: results.NewHistogram(), results.HistConnect: results.NewHistogram()}
	a, b := run(t, rng, "a", 1000, 100, all), run(t, rng, "b", 1000, 100, all)
	delete(b.Histograms, results.HistEndToEnd) // a hand-written result: summary but no histogram
	b.Histograms[results.HistConnect] = "not base64 of a histogram"
	b.Phase = "" // a worker's own result counts
	p := Point([]*results.Result{a, b})
	if p.Runs != 2 || p.LeftOut != 0 {
		t.Errorf("runs %d left out %d", p.Runs, p.LeftOut)
	}
	if len(p.Notes) != 2 || !strings.Contains(p.Notes[0], "latency.endToEnd not pooled: run b has no histogram") ||
		!strings.Contains(p.Notes[1], "latency.connect not pooled: run b: decode histogram") {
		t.Errorf("notes %q", p.Notes)
	}
	fs := p.Figures["latency.endToEnd.p99"]
	if fs.Pooled != nil {
		t.Errorf("pooled without every histogram: %v", *fs.Pooled)
	}
	if v, _ := p.Value("latency.endToEnd.p99"); v != fs.Mean {
		t.Errorf("Value falls back to the mean %v, got %v", fs.Mean, v)
	}
	if p := Point(nil); p.Runs != 0 || len(p.Figures) != 0 {
		t.Errorf("no runs: %+v", p)
	}
}
