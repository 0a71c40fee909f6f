package suite

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/manifest"
)

// searchTo runs x against a system whose trials pass when pass(value, run) says so, to the end,
// and returns the decision it ends with and every step.
func searchTo(t *testing.T, x Search, pass func(v int64, run int) bool) (Decision, []Step) {
	t.Helper()
	var steps []Step
	runs := 0
	for i := 0; i < 1000; i++ {
		d := x.Next(steps, 0)
		if d.Done {
			return d, steps
		}
		if d.Trial == 1 {
			if d.Step != len(steps)+1 {
				t.Fatalf("new step %d after %d steps", d.Step, len(steps))
			}
			steps = append(steps, Step{Index: d.Step, Value: d.Value, Kind: d.Kind})
		} else if d.Step != len(steps) || d.Value != steps[len(steps)-1].Value {
			t.Fatalf("trial %d of step %d (value %d), but the last step is %+v", d.Trial, d.Step, d.Value, steps[len(steps)-1])
		}
		if d.Value < x.Min || d.Value > x.Max {
			t.Fatalf("value %d outside [%d, %d]", d.Value, x.Min, x.Max)
		}
		runs++
		st := &steps[len(steps)-1]
		st.Trials = append(st.Trials, Trial{Passed: pass(d.Value, runs)})
	}
	t.Fatal("the search never ended")
	return Decision{}, nil
}

func runsOf(steps []Step) int {
	n := 0
	for _, s := range steps {
		n += len(s.Trials)
	}
	return n
}

func TestSearchFindsAKnownCapacityWithinItsPrecision(t *testing.T) {
	for _, c := range []struct {
		capacity, min, max, start int64
		precision                 int64
	}{
		{1234, 10, 100000, 10, 5},
		{1234, 10, 100000, 50000, 5}, // a start above: the probe goes down
		{7, 1, 1000, 1, 5},           // integers: the bracket closes at 1
		{99999, 100, 100000, 100, 1},
		{100, 100, 1000, 100, 5}, // the capacity is the lower bound itself
	} {
		x := Search{Fields: []string{"workload.rate"}, Min: c.min, Max: c.max, Start: c.start, Factor: 2, Precision: c.precision, Trials: 1, Confirm: true, MaxRuns: 100}
		d, steps := searchTo(t, x, func(v int64, _ int) bool { return v <= c.capacity })
		if d.Outcome != v1alpha1.SearchFound || d.Capacity == nil {
			t.Fatalf("%+v: outcome %s (%s)", c, d.Outcome, d.Message)
		}
		// The truth lies in the bracket, and the bracket is as narrow as asked.
		if *d.LastPass > c.capacity || c.capacity >= *d.FirstFail {
			t.Errorf("%+v: bracket [%d, %d) misses the capacity", c, *d.LastPass, *d.FirstFail)
		}
		if *d.FirstFail-*d.LastPass > x.Tolerance(*d.LastPass) {
			t.Errorf("%+v: bracket [%d, %d) wider than %d %%", c, *d.LastPass, *d.FirstFail, c.precision)
		}
		if last := steps[len(steps)-1]; last.Kind != StepConfirm || last.Value != *d.Capacity {
			t.Errorf("%+v: the last step %+v is not a confirmation of the result", c, last)
		}
	}
}

func TestSearchSaysWhenItCannotBracket(t *testing.T) {
	x := Search{Fields: []string{"workload.rate"}, Min: 100, Max: 5000, Start: 100, Factor: 2, Precision: 5, Trials: 1, Confirm: true, MaxRuns: 100}
	d, steps := searchTo(t, x, func(int64, int) bool { return false })
	if d.Outcome != v1alpha1.SearchBelowRange || d.Capacity != nil || len(steps) != 1 {
		t.Errorf("nothing passes: outcome %s, capacity %v, %d steps", d.Outcome, d.Capacity, len(steps))
	}
	if !strings.Contains(d.Message, "lower bound") {
		t.Errorf("message %q", d.Message)
	}
	x.Start = 1000 // a start above min probes down to min first
	d, steps = searchTo(t, x, func(int64, int) bool { return false })
	if d.Outcome != v1alpha1.SearchBelowRange || steps[len(steps)-1].Value != 100 {
		t.Errorf("from 1000: outcome %s, last step %+v", d.Outcome, steps[len(steps)-1])
	}
	d, steps = searchTo(t, x, func(int64, int) bool { return true })
	if d.Outcome != v1alpha1.SearchAboveRange || d.Capacity != nil || steps[len(steps)-1].Value != 5000 {
		t.Errorf("everything passes: outcome %s, capacity %v, last %+v", d.Outcome, d.Capacity, steps[len(steps)-1])
	}
}

func TestSearchNeverRunsMoreThanItsCap(t *testing.T) {
	for _, maxRuns := range []int{1, 2, 5, 9, 13} {
		for _, trials := range []int{1, 3} {
			x := Search{Fields: []string{"workload.rate"}, Min: 1, Max: 1 << 30, Start: 1, Factor: 2, Precision: 1, Trials: trials, Confirm: true, MaxRuns: maxRuns}
			d, steps := searchTo(t, x, func(v int64, _ int) bool { return v <= 123456 })
			if n := runsOf(steps); n > maxRuns {
				t.Errorf("maxRuns %d, trials %d: %d runs", maxRuns, trials, n)
			}
			if d.Outcome != v1alpha1.SearchCapped {
				t.Errorf("maxRuns %d, trials %d: outcome %s", maxRuns, trials, d.Outcome)
			}
			// A capped search states a capacity only with a bracket around it.
			if d.Capacity != nil && (d.FirstFail == nil || *d.Capacity != *d.LastPass) {
				t.Errorf("maxRuns %d: capacity %d without a bracket", maxRuns, *d.Capacity)
			}
		}
	}
	x := Search{Fields: []string{"workload.rate"}, Min: 1, Max: 1000, Start: 1, Factor: 2, Precision: 5, Trials: 1, MaxRuns: 100, MaxDuration: time.Minute}
	if d := x.Next([]Step{{Index: 1, Value: 1, Trials: []Trial{{Passed: true}}}}, 2*time.Minute); d.Outcome != v1alpha1.SearchCapped || !strings.Contains(d.Message, "maxDuration") {
		t.Errorf("after maxDuration: %+v", d)
	}
}

func TestSearchTrialsDecideByTheirRule(t *testing.T) {
	all := Search{Trials: 3}
	maj := Search{Trials: 3, Majority: true}
	for _, c := range []struct {
		x              Search
		trials         []bool
		decided, passs bool
	}{
		{all, []bool{true, true}, false, false},
		{all, []bool{true, false}, true, false}, // all stops at the first failure
		{all, []bool{true, true, true}, true, true},
		{maj, []bool{true, false}, false, false},
		{maj, []bool{true, true}, true, true}, // majority stops once decided
		{maj, []bool{false, false}, true, false},
		{maj, []bool{true, false, true}, true, true},
	} {
		st := Step{}
		for _, p := range c.trials {
			st.Trials = append(st.Trials, Trial{Passed: p})
		}
		if ok, p := c.x.Decided(st); ok != c.decided || p != c.passs {
			t.Errorf("majority %v, %v: decided %v passed %v", c.x.Majority, c.trials, ok, p)
		}
	}
}

// A noisy system: a value near the capacity passes or fails at random. The bracket still holds
// the capacity's neighbourhood, and two searches agree within their stated widths plus the noise.
func TestSearchOnANoisySystem(t *testing.T) {
	const capacity, noise = 5000, 100
	found := map[int64]bool{}
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 0))
		x := Search{Fields: []string{"workload.rate"}, Min: 100, Max: 100000, Start: 100, Factor: 2, Precision: 5, Trials: 3, Majority: true, Confirm: true, MaxRuns: 60}
		d, _ := searchTo(t, x, func(v int64, _ int) bool { return float64(v) <= capacity+noise*rng.NormFloat64() })
		if d.Capacity == nil {
			t.Fatalf("seed %d: %s: %s", seed, d.Outcome, d.Message)
		}
		if *d.LastPass < capacity-4*noise-x.Tolerance(capacity) || *d.FirstFail > capacity+4*noise+x.Tolerance(capacity) {
			t.Errorf("seed %d: bracket [%d, %d) far from %d", seed, *d.LastPass, *d.FirstFail, capacity)
		}
		found[*d.Capacity] = true
	}
	if len(found) < 2 {
		t.Errorf("20 noisy searches found one value only: %v", found)
	}
}

func TestSearchAFailedConfirmationMovesTheBracketDown(t *testing.T) {
	x := Search{Fields: []string{"workload.rate"}, Min: 100, Max: 10000, Start: 100, Factor: 2, Precision: 5, Trials: 1, Confirm: true, MaxRuns: 100}
	first := map[int64]bool{}
	d, steps := searchTo(t, x, func(v int64, _ int) bool {
		// 1000 passes the first time only; the true capacity is lower.
		if v == 1000 && !first[v] {
			first[v] = true
			return true
		}
		return v < 1000 && v <= 900
	})
	if d.Outcome != v1alpha1.SearchFound || *d.Capacity > 900 || *d.FirstFail > 1000 {
		t.Fatalf("outcome %s capacity %v bracket [%v, %v); steps %+v", d.Outcome, *d.Capacity, *d.LastPass, *d.FirstFail, steps)
	}
}

func TestCurveKnee(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	var curve []CurvePoint
	for _, v := range []int64{100, 200, 400, 800, 1000, 1100, 1200} {
		p99 := 1000.0 // flat, then a wall above 1000
		if v > 1000 {
			p99 = 1000 + float64(v-1000)*500
		}
		curve = append(curve, CurvePoint{Value: v, LatencyP99Micros: f(p99)})
	}
	if k := CurveKnee(curve); k == nil || *k != 1000 {
		t.Errorf("knee %v, want 1000", k)
	}
	if k := CurveKnee(curve[:2]); k != nil {
		t.Errorf("two points have no knee: %v", *k)
	}
}

const searchYAML = `apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmarkSuite
metadata:
  name: cap
spec:
  template:
    protocol: mqtt
    workload: {payloadBytes: 64, rate: 100, duration: 3s, warmup: 1s}
  search:
    field: workload.rate
    min: 10
    max: 1000
  objectives: ["latency.endToEnd.p99 <= 50ms"]
`

// TestSearchSpecsRefused: every way a search cannot run is refused before anything starts,
// naming the field: by the schema's rules (as the API server would) or by CheckSearch.
func TestSearchSpecsRefused(t *testing.T) {
	doc, err := manifest.ParseSuiteDoc([]byte(searchYAML))
	if err != nil {
		t.Fatal(err)
	}
	x := NewSearch(doc.Suite.Spec.Search)
	if x.Factor != 2 || x.Precision != 5 || x.Trials != 1 || x.Majority || !x.Confirm || x.MaxRuns != 30 || x.Start != 10 {
		t.Errorf("defaults: %+v", x)
	}
	if err := CheckSearch(doc.Suite, doc.Template, manifest.FieldType); err != nil {
		t.Errorf("a valid search: %v", err)
	}
	for _, c := range []struct{ from, to, want string }{
		{"  objectives:", "  matrix:\n    axes: [{field: qos, values: [0, 1]}]\n  objectives:", "set no matrix with it"},
		{"  objectives:", "  repetitions: 3\n  objectives:", "spec.repetitions: a search repeats a step with spec.search.trials"},
		{"  objectives:", "  concurrency: 2\n  objectives:", "spec.concurrency: a search runs one run at a time"},
		{"    min: 10", "    min: 1000", "spec.search.min must be below max"},
		{"    min: 10", "    min: 10\n    start: 5000", "spec.search.start must lie from min to max"},
		{"    field: workload.rate", "    field: workload.rate\n    fields: [workload.publishers]", "set field (one spec field) or fields"},
		{"    min: 10", "    min: 10\n    pass: most", "spec.search.pass"},
	} {
		_, err := manifest.ParseSuiteDoc([]byte(strings.Replace(searchYAML, c.from, c.to, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: want %q, got %v", c.to, c.want, err)
		}
	}
	for _, c := range []struct{ field, max, want string }{
		{"network.profile", "1000", "spec.search.field network.profile: a string field"},
		{"workload.nope", "1000", "spec.search.field workload.nope: not a field"},
		{"workload.connectRate", "1000", ""},
		// workload.connectRate is at most 1000000: the template cannot take max.
		{"workload.connectRate", "5000000", "spec.search at 5000000: "},
	} {
		text := strings.Replace(strings.Replace(searchYAML, "field: workload.rate", "field: "+c.field, 1), "max: 1000", "max: "+c.max, 1)
		doc, err := manifest.ParseSuiteDoc([]byte(text))
		if err != nil {
			t.Fatalf("%s up to %s: %v", c.field, c.max, err)
		}
		err = CheckSearch(doc.Suite, doc.Template, manifest.FieldType)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s up to %s: want %q, got %v", c.field, c.max, c.want, err)
		}
	}
}
