package suite

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/results/objectives"
	"github.com/msgbench/msgbench/results/stats"
)

// A capacity search (spec.search) is a sequence of steps, each one value of the scaled field run
// as one or more trials. Which value comes next is a pure function of the steps so far
// (Search.Next), so the operator, restarted mid-search, recomputes it from its children and
// `msgbench run` from its own record: both run the same values in the same order.

// StepKind says why a step ran.
type StepKind string

// Step kinds.
const (
	StepProbe   StepKind = "probe"   // exponential probe towards a bracket
	StepBisect  StepKind = "bisect"  // the bracket's middle
	StepConfirm StepKind = "confirm" // the result's value once more, before the search ends
)

// Trial is one run of a step, judged: passed, and why not.
type Trial struct {
	Run     string   `json:"run"`
	Passed  bool     `json:"passed"`
	Reasons []string `json:"reasons,omitempty"`
}

// Step is one value of the scaled field and its trials so far.
type Step struct {
	Index  int      `json:"index"` // 1-based
	Value  int64    `json:"value"`
	Kind   StepKind `json:"kind"`
	Trials []Trial  `json:"trials"`
}

// Search is spec.search with its defaults resolved.
type Search struct {
	Fields      []string
	Min, Max    int64
	Start       int64
	Factor      int64
	Precision   int64 // percent
	Trials      int
	Majority    bool
	Confirm     bool
	MaxRuns     int
	MaxDuration time.Duration // 0: none
}

// NewSearch resolves s's defaults (as the CRD's, for a spec that was never admitted).
func NewSearch(s *v1alpha1.SuiteSearch) Search {
	x := Search{Fields: s.Fields, Min: s.Min, Max: s.Max, Start: s.Min, Factor: int64(s.Factor), Precision: int64(s.PrecisionPercent),
		Trials: int(s.Trials), Majority: s.Pass == v1alpha1.PassMajority, Confirm: s.Confirm == nil || *s.Confirm, MaxRuns: int(s.MaxRuns)}
	if s.Field != "" {
		x.Fields = []string{s.Field}
	}
	if s.Start != nil {
		x.Start = *s.Start
	}
	if x.Factor < 2 {
		x.Factor = 2
	}
	if x.Precision < 1 {
		x.Precision = 5
	}
	if x.Trials < 1 {
		x.Trials = 1
	}
	if x.MaxRuns < 1 {
		x.MaxRuns = 30
	}
	if s.MaxDuration != nil {
		x.MaxDuration = s.MaxDuration.Duration
	}
	return x
}

// Decided reports whether a step's trials decide it under the pass rule, and how: all stops
// at the first failed trial; majority once more than half passed or failed.
func (s Search) Decided(st Step) (decided, passed bool) {
	pass, fail := 0, 0
	for _, t := range st.Trials {
		if t.Passed {
			pass++
		} else {
			fail++
		}
	}
	if !s.Majority {
		switch {
		case fail > 0:
			return true, false
		case pass >= s.Trials:
			return true, true
		}
		return false, false
	}
	need := s.Trials/2 + 1
	switch {
	case pass >= need:
		return true, true
	case fail > s.Trials-need:
		return true, false
	}
	return false, false
}

// runsToPass is the fewest runs a new step needs before it can pass.
func (s Search) runsToPass() int {
	if s.Majority {
		return s.Trials/2 + 1
	}
	return s.Trials
}

// Tolerance is how far apart a pass and a fail may be for the search to end:
// precision % of the pass, and at least 1 (the fields are integers).
func (s Search) Tolerance(pass int64) int64 {
	return max(1, pass*s.Precision/100)
}

// Decision is what the search does next: run a trial (Step, Value, Kind, Trial), or end with
// an outcome. The bracket is given either way.
type Decision struct {
	Done    bool
	Outcome string // v1alpha1.Search*: Searching while not done
	Step    int    // 1-based index of the step the next trial belongs to
	Value   int64
	Kind    StepKind
	Trial   int // 1-based
	// LastPass and FirstFail bracket the capacity; Capacity is set when the search ends with a
	// bracket (Found, or Capped with one).
	LastPass, FirstFail, Capacity *int64
	Message                       string
}

// Bracket is the highest passing value below the lowest failing one, each by its latest
// decided step (a confirmation that failed overrides the pass before it); nil when there is none.
func (s Search) Bracket(steps []Step) (lastPass, firstFail *int64) {
	latest := map[int64]bool{}
	for _, st := range steps {
		if ok, passed := s.Decided(st); ok {
			latest[st.Value] = passed
		}
	}
	for v, passed := range latest {
		if !passed && (firstFail == nil || v < *firstFail) {
			firstFail = ptr(v)
		}
	}
	for v, passed := range latest {
		if passed && (firstFail == nil || v < *firstFail) && (lastPass == nil || v > *lastPass) {
			lastPass = ptr(v)
		}
	}
	return lastPass, firstFail
}

// Next decides the search's next trial from its steps so far (in the order they ran; the last
// may still be undecided) and the time it has taken: an exponential probe by Factor from Start
// until a value passes and one fails (down from a failing start), bisection until
// firstFail − lastPass ≤ Tolerance(lastPass), then a confirmation of lastPass. It ends at the
// bounds (AboveRange, BelowRange: no number is made up), when confirmed (Found), or when the
// next step could not pass within maxRuns or maxDuration (Capped, with the bracket it has).
func (s Search) Next(steps []Step, elapsed time.Duration) Decision {
	runs := 0
	for _, st := range steps {
		runs += len(st.Trials)
	}
	d := Decision{Outcome: v1alpha1.SearchSearching}
	d.LastPass, d.FirstFail = s.Bracket(steps)
	timeUp := s.MaxDuration > 0 && elapsed >= s.MaxDuration
	capped := func(why string) Decision {
		d.Done, d.Outcome = true, v1alpha1.SearchCapped
		if d.LastPass != nil && d.FirstFail != nil {
			d.Capacity = d.LastPass
			d.Message = fmt.Sprintf("%s before the precision was reached: the capacity lies from %d up to %d (%.1f %% wide; %d %% asked)",
				why, *d.LastPass, *d.FirstFail, 100*float64(*d.FirstFail-*d.LastPass)/float64(*d.LastPass), s.Precision)
		} else {
			d.Message = why + " before a pass and a fail bracketed the capacity: no capacity can be stated"
		}
		return d
	}
	if n := len(steps); n > 0 {
		if last := steps[n-1]; !func() bool { ok, _ := s.Decided(last); return ok }() {
			switch {
			case runs >= s.MaxRuns:
				return capped(fmt.Sprintf("spec.search.maxRuns (%d) reached", s.MaxRuns))
			case timeUp:
				return capped(fmt.Sprintf("spec.search.maxDuration (%s) reached", s.MaxDuration))
			}
			d.Step, d.Value, d.Kind, d.Trial = last.Index, last.Value, last.Kind, len(last.Trials)+1
			d.Message = s.searching(d)
			return d
		}
	}
	lo, hi := d.LastPass, d.FirstFail
	next, kind := s.Start, StepProbe
	switch {
	case len(steps) == 0:
	case lo == nil && hi != nil && *hi <= s.Min:
		d.Done, d.Outcome = true, v1alpha1.SearchBelowRange
		d.Message = fmt.Sprintf("the runs failed at the lower bound, %s = %d: no value in the range meets the objectives (spec.search.min; each failed trial says why)", s.field(), s.Min)
		return d
	case hi == nil && lo != nil && *lo >= s.Max:
		d.Done, d.Outcome = true, v1alpha1.SearchAboveRange
		d.Message = fmt.Sprintf("the runs passed at the upper bound, %s = %d: the capacity is at least %d, and above the range searched (raise spec.search.max)", s.field(), s.Max, s.Max)
		return d
	case lo == nil:
		next = max(s.Min, *hi/s.Factor)
		if next >= *hi {
			next = *hi - 1
		}
	case hi == nil:
		next = min(s.Max, satMul(*lo, s.Factor))
	case *hi-*lo <= s.Tolerance(*lo):
		if s.Confirm && !s.confirmed(steps, *lo) {
			next, kind = *lo, StepConfirm
			break
		}
		d.Done, d.Outcome, d.Capacity = true, v1alpha1.SearchFound, lo
		d.Message = fmt.Sprintf("capacity %s = %d: it passed, %d failed (within %d %%)", s.field(), *lo, *hi, s.Precision)
		if s.Confirm {
			d.Message += ", and a confirmation passed"
		}
		return d
	default:
		next, kind = *lo+(*hi-*lo)/2, StepBisect
	}
	switch {
	case runs+s.runsToPass() > s.MaxRuns:
		return capped(fmt.Sprintf("spec.search.maxRuns (%d) reached", s.MaxRuns))
	case timeUp:
		return capped(fmt.Sprintf("spec.search.maxDuration (%s) reached", s.MaxDuration))
	}
	d.Step, d.Value, d.Kind, d.Trial = len(steps)+1, next, kind, 1
	d.Message = s.searching(d)
	return d
}

// searching says where a search that has not ended stands: the bracket so far and its next trial.
func (s Search) searching(d Decision) string {
	at := "no bracket yet"
	switch {
	case d.LastPass != nil && d.FirstFail != nil:
		at = fmt.Sprintf("the capacity lies from %d up to %d", *d.LastPass, *d.FirstFail)
	case d.LastPass != nil:
		at = fmt.Sprintf("%d passed, no value failed yet", *d.LastPass)
	case d.FirstFail != nil:
		at = fmt.Sprintf("%d failed, no value passed yet", *d.FirstFail)
	}
	return fmt.Sprintf("searching: %s; next: step %d (%s), trial %d, %s = %d", at, d.Step, d.Kind, d.Trial, s.field(), d.Value)
}

// confirmed: v's latest decided step is a confirmation (that passed: v is the last pass).
func (s Search) confirmed(steps []Step, v int64) bool {
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i].Value != v {
			continue
		}
		if ok, _ := s.Decided(steps[i]); ok {
			return steps[i].Kind == StepConfirm
		}
	}
	return false
}

func (s Search) field() string {
	if len(s.Fields) == 1 {
		return s.Fields[0]
	}
	return fmt.Sprint(s.Fields)
}

func satMul(a, b int64) int64 {
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

func ptr(v int64) *int64 { return &v }

// BacklogFloor is part of the backlog growth a trial tolerates (JudgeTrial): the least-squares trend of the window's mean
// end-to-end latency may rise by at most half the search's precision in seconds per second — a
// queue fed (1+p) times faster than it drains grows by p seconds of waiting per second, so half
// of p tells a load p above the capacity from one at it — and by at most BacklogFloor over the
// whole window (a loopback's GC pauses are noise, not a queue).
const BacklogFloor = 20 * time.Millisecond

// BacklogTrend is the least-squares slope, in seconds of latency per second, of the mean
// end-to-end latency of r's timeline intervals in the measured window (weighted by their
// deliveries); ok is false with fewer than three such intervals.
func BacklogTrend(r *results.Result) (slope float64, ok bool) {
	var sw, sx, sy, sxx, sxy float64
	n := 0
	for _, tp := range r.Timeline {
		if tp.EndToEndCount == 0 || tp.T <= 0 || tp.T > r.MeasuredSeconds+1e-9 {
			continue
		}
		w, x, y := float64(tp.EndToEndCount), tp.T, tp.EndToEndMeanMicros/1e6
		sw, sx, sy, sxx, sxy = sw+w, sx+w*x, sy+w*y, sxx+w*x*x, sxy+w*x*y
		n++
	}
	if n < 3 {
		return 0, false
	}
	den := sw*sxx - sx*sx
	if den <= 0 {
		return 0, false
	}
	return (sw*sxy - sx*sy) / den, true
}

// JudgeTrial decides whether one run passed at its step: it Succeeded (so its offered load was
// sustained: results.Judge fails a run whose unsent messages exceed the allowance), its backlog
// was not growing (no NotSteadyState caveat, and BacklogTrend within the precision's half), and
// it met every objective of the suite on its own figures. Reasons say each failure.
func (s Search) JudgeTrial(o RunOutcome, objs []objectives.Objective) Trial {
	t := Trial{Run: o.Name, Passed: true}
	fail := func(format string, args ...any) {
		t.Passed = false
		t.Reasons = append(t.Reasons, fmt.Sprintf(format, args...))
	}
	r := o.Result
	if o.Phase != string(v1alpha1.PhaseSucceeded) || r == nil {
		msg := o.Message
		if msg == "" {
			msg = "no result"
		}
		fail("the run %s: %s", orDefault(o.Phase, "did not finish"), msg)
		return t
	}
	for _, c := range r.Caveats {
		if c.Type == results.CaveatNotSteadyState {
			fail("backlog growing: %s", c.Message)
		}
	}
	if slope, ok := BacklogTrend(r); ok {
		limit := float64(s.Precision) / 200
		if rise := slope * r.MeasuredSeconds; slope > limit && rise > BacklogFloor.Seconds() {
			fail("backlog growing: the mean end-to-end latency rose %.1f ms over the %.1f s window (%.1f ms per second; at most %.1f ms per second, half of spec.search.precisionPercent, marks a load the system keeps up with)",
				rise*1000, r.MeasuredSeconds, slope*1000, limit*1000)
		}
	}
	ps := stats.Point([]*results.Result{r})
	for _, out := range objectives.Judge(objs, ps.Value) {
		if !out.Met {
			fail("%s", out.String())
		}
	}
	return t
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// SearchPoint is step st as a point of the suite (its values: the scaled fields at st's value),
// so each step builds its benchmark, names its runs and keeps its statistics as any point does.
func (s Search) SearchPoint(st Step) Point {
	p := Point{Index: st.Index - 1, Name: fmt.Sprintf("s%d", st.Index)}
	for _, f := range s.Fields {
		p.Values = append(p.Values, Assignment{Field: f, Value: st.Value, Label: "s"})
	}
	return p
}

// SearchRunName is trial t of step st: "<suite>-s<step>-t<trial>".
func SearchRunName(suite string, step, trial int) string {
	return fmt.Sprintf("%s-s%d-t%d", suite, step, trial)
}

// CheckSearch refuses a search the template cannot take, before anything runs: a field that is
// not an integer of the spec, and the template at min and at max (built and validated as the
// API server would).
func CheckSearch(s *v1alpha1.MessagingBenchmarkSuite, template map[string]any, fieldType func(string) string) error {
	x := NewSearch(s.Spec.Search)
	for _, f := range x.Fields {
		if t := fieldType(f); t != "integer" {
			what := "not a field of the MessagingBenchmark spec"
			if t != "" {
				what = "a " + t + " field"
			}
			return fmt.Errorf("spec.search.field %s: %s; a search scales an integer field (workload.rate, workload.publishers, groups[NAME].count, workload.connectRate)", f, what)
		}
	}
	for _, v := range []int64{x.Min, x.Max} {
		if _, err := Benchmark(s, template, x.SearchPoint(Step{Index: 1, Value: v}), 1); err != nil {
			return fmt.Errorf("spec.search at %d: %w", v, err)
		}
	}
	return nil
}

// SearchResult is a search in suite.json: how it ended, the bracket, every step and the curve.
type SearchResult struct {
	Fields           []string `json:"fields"`
	Outcome          string   `json:"outcome"`
	Capacity         *int64   `json:"capacity,omitempty"`
	LastPass         *int64   `json:"lastPass,omitempty"`
	FirstFail        *int64   `json:"firstFail,omitempty"`
	PrecisionPercent int64    `json:"precisionPercent"`
	// WidthPercent is the bracket's width, (firstFail − lastPass) / lastPass × 100.
	WidthPercent *float64     `json:"widthPercent,omitempty"`
	Runs         int          `json:"runs"`
	MaxRuns      int          `json:"maxRuns"`
	Message      string       `json:"message"`
	Steps        []SearchStep `json:"steps"`
	// Curve is one entry per value measured, by value (its latest decided step's figures).
	Curve []CurvePoint `json:"curve"`
	// Knee is the value at the curve's knee (CurveKnee), when it has one.
	Knee *int64 `json:"knee,omitempty"`
}

// SearchStep is a step in suite.json.
type SearchStep struct {
	Step
	Passed  *bool       `json:"passed,omitempty"` // unset while undecided
	Figures *CurvePoint `json:"figures,omitempty"`
}

// CurvePoint is what a value of the field drew: the load offered, the throughput achieved, the
// latency and the loss, over its succeeded trials (means; latency percentiles pooled).
type CurvePoint struct {
	Value                  int64    `json:"value"`
	Passed                 bool     `json:"passed"`
	OfferedPerSecond       *float64 `json:"offeredPerSecond,omitempty"`
	SentPerSecond          *float64 `json:"sentPerSecond,omitempty"`
	ReceivedPerSecond      *float64 `json:"receivedPerSecond,omitempty"`
	LatencyP50Micros       *float64 `json:"latencyP50Micros,omitempty"`
	LatencyP99Micros       *float64 `json:"latencyP99Micros,omitempty"`
	LostPercent            *float64 `json:"lostPercent,omitempty"`
	BacklogMillisPerSecond *float64 `json:"backlogMillisPerSecond,omitempty"`
}

// SummarizeSearch builds the search's part of suite.json from its steps, the outcomes of their
// runs (by run name) and the decision the steps lead to.
func (s Search) SummarizeSearch(steps []Step, outcomes map[string]RunOutcome, d Decision) *SearchResult {
	sr := &SearchResult{Fields: s.Fields, Outcome: d.Outcome, Capacity: d.Capacity, LastPass: d.LastPass, FirstFail: d.FirstFail,
		PrecisionPercent: s.Precision, MaxRuns: s.MaxRuns, Message: d.Message, Steps: []SearchStep{}, Curve: []CurvePoint{}}
	if d.LastPass != nil && d.FirstFail != nil {
		w := 100 * float64(*d.FirstFail-*d.LastPass) / float64(*d.LastPass)
		sr.WidthPercent = &w
	}
	latest := map[int64]CurvePoint{}
	for _, st := range steps {
		sr.Runs += len(st.Trials)
		e := SearchStep{Step: st}
		var rs []*results.Result
		for _, t := range st.Trials {
			if o, ok := outcomes[t.Run]; ok && o.Result != nil && o.Phase == string(v1alpha1.PhaseSucceeded) {
				rs = append(rs, o.Result)
			}
		}
		ok, passed := s.Decided(st)
		if ok {
			e.Passed = &passed
		}
		if len(rs) > 0 {
			cp := curvePoint(st.Value, passed, rs)
			e.Figures = &cp
			if ok {
				latest[st.Value] = cp
			}
		} else if ok {
			latest[st.Value] = CurvePoint{Value: st.Value, Passed: passed}
		}
		sr.Steps = append(sr.Steps, e)
	}
	for _, cp := range latest {
		sr.Curve = append(sr.Curve, cp)
	}
	slices.SortFunc(sr.Curve, func(a, b CurvePoint) int { return int(a.Value - b.Value) })
	sr.Knee = CurveKnee(sr.Curve)
	return sr
}

func curvePoint(v int64, passed bool, rs []*results.Result) CurvePoint {
	ps := stats.Point(rs)
	cp := CurvePoint{Value: v, Passed: passed}
	get := func(fig string) *float64 {
		if x, ok := ps.Value(fig); ok && !math.IsNaN(x) {
			return &x
		}
		return nil
	}
	cp.OfferedPerSecond = get("throughput.offeredPerSecond")
	cp.SentPerSecond = get("throughput.sentPerSecond")
	cp.ReceivedPerSecond = get("throughput.receivedPerSecond")
	cp.LatencyP50Micros = get("latency.endToEnd.p50")
	cp.LatencyP99Micros = get("latency.endToEnd.p99")
	cp.LostPercent = get("lostPercent")
	var sum float64
	n := 0
	for _, r := range rs {
		if slope, ok := BacklogTrend(r); ok {
			sum += slope * 1000
			n++
		}
	}
	if n > 0 {
		m := sum / float64(n)
		cp.BacklogMillisPerSecond = &m
	}
	return cp
}

// CurveKnee is the value at the knee of the latency-versus-load curve by the Kneedle method
// (Satopää et al., ICDCS workshops 2011): both axes scaled to [0, 1], the knee of a rising convex
// curve is the point farthest below the line from its first point to its last. The curve's p99
// latency is used; nil with fewer than three points with a latency, or when the curve does
// not bend upwards (no point below the line).
func CurveKnee(curve []CurvePoint) *int64 {
	var xs, ys []float64
	var vs []int64
	for _, c := range curve {
		if c.LatencyP99Micros != nil {
			xs, ys, vs = append(xs, float64(c.Value)), append(ys, *c.LatencyP99Micros), append(vs, c.Value)
		}
	}
	if len(xs) < 3 {
		return nil
	}
	x0, x1 := xs[0], xs[len(xs)-1]
	y0, y1 := slices.Min(ys), slices.Max(ys)
	if x1 <= x0 || y1 <= y0 {
		return nil
	}
	best, at := 0.0, -1
	for i := range xs {
		xn, yn := (xs[i]-x0)/(x1-x0), (ys[i]-y0)/(y1-y0)
		if d := xn - yn; d > best {
			best, at = d, i
		}
	}
	if at < 0 {
		return nil
	}
	return ptr(vs[at])
}

// Status is the search's part of the suite's status.
func (sr *SearchResult) Status(next *Decision) *v1alpha1.SearchStatus {
	st := &v1alpha1.SearchStatus{Outcome: sr.Outcome, Capacity: sr.Capacity, LastPass: sr.LastPass, FirstFail: sr.FirstFail,
		Steps: int32(len(sr.Steps)), Message: sr.Message}
	if next != nil && !next.Done {
		st.Next = ptr(next.Value)
		st.Message = fmt.Sprintf("step %d (%s), trial %d: %s = %s", next.Step, next.Kind, next.Trial, fieldsText(sr.Fields), strconv.FormatInt(next.Value, 10))
	}
	return st
}

func fieldsText(fs []string) string {
	if len(fs) == 1 {
		return fs[0]
	}
	return fmt.Sprint(fs)
}

// Annotations on a search's run (besides the point and repetition ones, s<step> and the
// trial): the step's value and kind, from which the operator rebuilds the steps.
const (
	AnnotationSearchValue = "msgbench.io/search-value"
	AnnotationSearchKind  = "msgbench.io/search-kind"
)

// SearchRun is one run of a search as recorded: by the operator, a child's name and
// annotations; by `msgbench run`, its own record. Outcome is nil while it runs.
type SearchRun struct {
	Step, Trial int
	Value       int64
	Kind        StepKind
	Outcome     *RunOutcome
}

// Steps judges each finished run (JudgeTrial) and gathers them into steps, by step and trial
// number; runs not finished are left out.
func (s Search) Steps(runs []SearchRun, objs []objectives.Objective) []Step {
	sorted := slices.Clone(runs)
	slices.SortFunc(sorted, func(a, b SearchRun) int {
		if a.Step != b.Step {
			return a.Step - b.Step
		}
		return a.Trial - b.Trial
	})
	var steps []Step
	for _, r := range sorted {
		if r.Outcome == nil {
			continue
		}
		if n := len(steps); n == 0 || steps[n-1].Index != r.Step {
			steps = append(steps, Step{Index: r.Step, Value: r.Value, Kind: r.Kind})
		}
		st := &steps[len(steps)-1]
		st.Trials = append(st.Trials, s.JudgeTrial(*r.Outcome, objs))
	}
	return steps
}

// LabelSearch marks mb as trial d.Trial of step d.Step of the search of suite name.
func LabelSearch(mb *v1alpha1.MessagingBenchmark, name string, d Decision) {
	Label(mb, name, fmt.Sprintf("s%d", d.Step), d.Trial)
	mb.Annotations[AnnotationSearchValue] = strconv.FormatInt(d.Value, 10)
	mb.Annotations[AnnotationSearchKind] = string(d.Kind)
}

// SearchBenchmark builds the run of decision d (not done): the template at d.Value, named
// SearchRunName and labelled (LabelSearch).
func SearchBenchmark(s *v1alpha1.MessagingBenchmarkSuite, template map[string]any, x Search, d Decision) (*v1alpha1.MessagingBenchmark, map[string]any, error) {
	p := x.SearchPoint(Step{Index: d.Step, Value: d.Value})
	mb, obj, err := benchmark(s, template, p, d.Trial)
	if err != nil {
		return nil, nil, err
	}
	mb.Name = SearchRunName(s.Name, d.Step, d.Trial)
	obj["metadata"].(map[string]any)["name"] = mb.Name
	LabelSearch(mb, s.Name, d)
	return mb, obj, nil
}
