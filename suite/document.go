package suite

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/results/objectives"
	"github.com/msgbench/msgbench/results/stats"
)

// SchemaVersion of suite.json.
const SchemaVersion = "msgbench.io/suite/v1"

// AnnotationConcurrent is on a suite's run: it says how many runs of the suite could measure at once
// (spec.concurrency > 1): the run's result then carries a caveat.
const AnnotationConcurrent = "msgbench.io/concurrent-runs"

// CaveatConcurrentRuns is the caveat of a run that may have shared its nodes with another run of
// its suite while measuring.
const CaveatConcurrentRuns = results.CaveatConcurrentRuns

// RunOutcome is what one finished run left: its phase and message, its result when readable,
// and where the result is kept (a folder or URL).
type RunOutcome struct {
	Name     string          `json:"name"`
	Phase    string          `json:"phase"`
	Message  string          `json:"message,omitempty"`
	Location string          `json:"location,omitempty"`
	Result   *results.Result `json:"-"`
}

// RunEntry is one run in suite.json.
type RunEntry struct {
	Repetition int `json:"repetition"`
	RunOutcome
}

// PointResult is one point in suite.json: its values, runs, statistics and objectives.
type PointResult struct {
	Name   string            `json:"name"`
	Values map[string]string `json:"values,omitempty"`
	Runs   []RunEntry        `json:"runs"`
	// Stats are over the point's succeeded runs (stats.Point).
	Stats *stats.PointStats `json:"stats,omitempty"`
	// Objectives judged on the point's statistics; ObjectivesMet unset when there are none or
	// no run succeeded.
	Objectives    []results.ObjectiveResult `json:"objectives,omitempty"`
	ObjectivesMet *bool                     `json:"objectivesMet,omitempty"`
}

// Document is suite.json: the whole study, every run and every point's statistics and verdict.
type Document struct {
	SchemaVersion string                               `json:"schemaVersion"`
	Name          string                               `json:"name"`
	Namespace     string                               `json:"namespace,omitempty"`
	Mode          string                               `json:"mode"` // local or kubernetes
	RunID         string                               `json:"runID,omitempty"`
	Spec          v1alpha1.MessagingBenchmarkSuiteSpec `json:"spec"`
	Seed          *int64                               `json:"seed,omitempty"`
	Generated     time.Time                            `json:"generated"`
	Runs          v1alpha1.SuiteRunCounts              `json:"runs"`
	// Verdict: Passed, Missed, Incomplete or None (v1alpha1.MessagingBenchmarkSuiteStatus).
	Verdict string        `json:"verdict"`
	Caveats []string      `json:"caveats,omitempty"`
	Points  []PointResult `json:"points"`
	// Search is the capacity search (spec.search): its outcome, bracket, steps and curve; its
	// steps are also the points (s1, s2, …), their trials the runs.
	Search *SearchResult `json:"search,omitempty"`
	// Interrupted is set when a local suite was stopped before its last run.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Verdicts of a suite.
const (
	VerdictPassed     = "Passed"
	VerdictMissed     = "Missed"
	VerdictIncomplete = "Incomplete"
	VerdictNone       = "None"
)

// Summarize builds the suite's document from its points, schedule and the outcomes of the runs
// that finished so far: per point the runs, statistics over the succeeded ones, objectives judged
// on those statistics (the mean of a figure, percentiles pooled from all repetitions' merged
// histograms), and the verdict. Pure: the operator and `msgbench run` both call it.
func Summarize(s *v1alpha1.MessagingBenchmarkSuite, points []Point, schedule []Run, outcomes map[Run]RunOutcome, seed int64, mode string, now time.Time) *Document {
	d := &Document{SchemaVersion: SchemaVersion, Name: s.Name, Namespace: s.Namespace, Mode: mode, Spec: s.Spec, Generated: now.UTC(),
		Runs: v1alpha1.SuiteRunCounts{Total: int32(len(schedule))}}
	if s.Spec.Order == v1alpha1.OrderInterleaved {
		d.Seed = &seed
	}
	if s.Spec.Concurrency > 1 && mode != "local" { // locally the runs go one at a time
		d.Caveats = append(d.Caveats, fmt.Sprintf("%s: up to %d runs measured at once (spec.concurrency), so runs may have disturbed each other on shared nodes",
			CaveatConcurrentRuns, s.Spec.Concurrency))
	}
	objs, objErr := objectives.ParseAll(s.Spec.Objectives)
	for _, p := range points {
		d.Points = append(d.Points, PointResult{Name: p.Name, Values: p.Text(), Runs: []RunEntry{}})
	}
	perPoint := make([][]*results.Result, len(points))
	for _, run := range schedule {
		o, ok := outcomes[run]
		if !ok {
			continue
		}
		pr := &d.Points[run.Point]
		pr.Runs = append(pr.Runs, RunEntry{Repetition: run.Repetition, RunOutcome: o})
		if o.Phase == string(v1alpha1.PhaseSucceeded) {
			d.Runs.Succeeded++
		} else {
			d.Runs.Failed++
		}
		if o.Result != nil {
			perPoint[run.Point] = append(perPoint[run.Point], o.Result)
		}
	}
	missed, unjudged := false, false
	for i := range d.Points {
		pr := &d.Points[i]
		sort.Slice(pr.Runs, func(a, b int) bool { return pr.Runs[a].Repetition < pr.Runs[b].Repetition })
		ps := stats.Point(perPoint[i])
		if ps.Runs == 0 {
			unjudged = true
			continue
		}
		pr.Stats = &ps
		if len(objs) > 0 && objErr == nil {
			outs := objectives.Judge(objs, ps.Value)
			for _, o := range outs {
				pr.Objectives = append(pr.Objectives, o.Record())
			}
			met := objectives.Met(outs)
			pr.ObjectivesMet = &met
			missed = missed || !met
		}
	}
	// While runs are left, more repetitions change the statistics: no verdict yet. Then a point
	// that missed is a definite Missed; a point with no successful run cannot be judged.
	verdict := VerdictNone
	switch {
	case len(s.Spec.Objectives) == 0:
	case d.Runs.Succeeded+d.Runs.Failed < d.Runs.Total:
		verdict = VerdictIncomplete
	case missed:
		verdict = VerdictMissed
	case unjudged:
		verdict = VerdictIncomplete
	default:
		verdict = VerdictPassed
	}
	d.Verdict = verdict
	return d
}

// PointStatuses are the points for the suite's status: counts and the headline figures.
func (d *Document) PointStatuses() []v1alpha1.PointStatus {
	var out []v1alpha1.PointStatus
	for _, p := range d.Points {
		ps := v1alpha1.PointStatus{Name: p.Name, Values: p.Values, ObjectivesMet: p.ObjectivesMet}
		for _, r := range p.Runs {
			if r.Phase == string(v1alpha1.PhaseSucceeded) {
				ps.Succeeded++
			} else {
				ps.Failed++
			}
		}
		if p.Stats != nil {
			ps.ReceivedPerSecond = figureStatus(p.Stats, "throughput.receivedPerSecond")
			ps.LatencyP99Micros = figureStatus(p.Stats, "latency.endToEnd.p99")
			ps.Unstable = len(p.Stats.Unstable) > 0
		}
		out = append(out, ps)
	}
	return out
}

func figureStatus(ps *stats.PointStats, figure string) *v1alpha1.FigureStats {
	f, ok := ps.Figures[figure]
	if !ok || f.N == 0 {
		return nil
	}
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	fs := &v1alpha1.FigureStats{Mean: num(f.Mean), CV: strconv.FormatFloat(f.CV, 'f', 1, 64)}
	if f.N > 1 {
		fs.CI95 = num(f.CI95)
	}
	return fs
}

// ObjectivesCondition is the suite's ObjectivesMet condition (nil without objectives).
func (d *Document) ObjectivesCondition(generation int64) *metav1.Condition {
	if len(d.Spec.Objectives) == 0 && d.Search == nil {
		return nil
	}
	c := &metav1.Condition{Type: v1alpha1.ConditionObjectivesMet, ObservedGeneration: generation}
	if sr := d.Search; sr != nil {
		// A search misses the objectives above its capacity on purpose: the condition says
		// where they held.
		switch sr.Outcome {
		case v1alpha1.SearchFound, v1alpha1.SearchAboveRange:
			c.Status, c.Reason = metav1.ConditionTrue, sr.Outcome
		case v1alpha1.SearchBelowRange:
			c.Status, c.Reason = metav1.ConditionFalse, sr.Outcome
		default:
			c.Status, c.Reason = metav1.ConditionUnknown, sr.Outcome
		}
		c.Message = truncateMessage(sr.Message)
		return c
	}
	switch d.Verdict {
	case VerdictPassed:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, "ObjectivesMet", fmt.Sprintf("every point met every objective (%s)", strings.Join(d.Spec.Objectives, "; "))
	case VerdictMissed:
		var missed []string
		for _, p := range d.Points {
			if p.ObjectivesMet != nil && !*p.ObjectivesMet {
				missed = append(missed, p.Name+": "+results.MissedObjectives(p.Objectives))
			}
		}
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, "ObjectivesMissed", strings.Join(missed, "; ")
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, "Incomplete", "not every point has finished or succeeded yet"
	}
	c.Message = truncateMessage(c.Message)
	return c
}

func truncateMessage(m string) string {
	if len(m) > 32768 {
		return m[:32765] + "..."
	}
	return m
}

// SummarizeSearchSuite is Summarize for a search: every step a point (its trials the runs,
// outcomes by run name), the search's result, and the verdict from its outcome: Passed when
// it found the capacity or the objectives held at max, Missed when they failed at min,
// Incomplete while searching or when capped.
func SummarizeSearchSuite(s *v1alpha1.MessagingBenchmarkSuite, x Search, steps []Step, outcomes map[string]RunOutcome, next Decision, mode string, now time.Time) *Document {
	var points []Point
	var schedule []Run
	byRun := map[Run]RunOutcome{}
	for i, st := range steps {
		points = append(points, x.SearchPoint(st))
		for k, t := range st.Trials {
			run := Run{Point: i, Repetition: k + 1}
			schedule = append(schedule, run)
			if o, ok := outcomes[t.Run]; ok {
				byRun[run] = o
			}
		}
	}
	d := Summarize(s, points, schedule, byRun, 0, mode, now)
	d.Search = x.SummarizeSearch(steps, outcomes, next)
	d.Runs.Total = int32(d.Search.Runs)
	if !next.Done {
		d.Runs.Total++ // the trial about to run
	}
	switch next.Outcome {
	case v1alpha1.SearchFound, v1alpha1.SearchAboveRange:
		d.Verdict = VerdictPassed
	case v1alpha1.SearchBelowRange:
		d.Verdict = VerdictMissed
	default:
		d.Verdict = VerdictIncomplete
	}
	return d
}
