package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/suite"
)

// A capacity search (spec.search) leads its suite's report with its own figure: the curve of
// what each value of the scaled field drew — throughput, latency and loss — every value marked
// passed or failed, the capacity a line and the bracket shaded, and a table of its steps.

// CapacityID is the capacity curve's figure and CSV name.
const CapacityID = "capacity-curve"

// latencyLabel is the latency panel's vertical: short, as a panel is not tall (the legend says
// end-to-end).
const latencyLabel = "latency (ms)"

// CapacityFigure is a search's curve, its panels sharing the scaled field as the horizontal:
// messages received and sent per second against the load offered; end-to-end latency p50 and
// p99 (logarithmic when they span more than 10×); messages lost (when some value lost any).
// Each value's markers are filled where it passed and hollow where it failed; a value at which
// no trial measured anything is a cross on the axis. The capacity is a solid line, the bracket
// (lastPass…firstFail) is shaded and the knee of the p99 curve is dotted. Its CSV is the curve,
// a row per value. Nil when the search has decided no step yet.
func CapacityFigure(sr *suite.SearchResult) *Figure {
	if sr == nil || len(sr.Curve) == 0 {
		return nil
	}
	field := searchField(sr)
	f := &Figure{ID: CapacityID, Title: "Capacity curve by " + field, XLabel: field, Study: true}
	if sr.Capacity == nil { // the figure on a slide says so too, not only its caption
		none := "no capacity"
		if sr.Outcome == v1alpha1.SearchSearching {
			none += " yet"
		}
		f.Title += fmt.Sprintf(" (%s: %s)", sr.Outcome, none)
	}
	recv := Series{Label: "received", Colour: 0, Dash: 0}
	sent := Series{Label: "sent", Colour: 1, Dash: 1}
	offered := Series{Label: "offered", Reference: true}
	p50 := Series{Label: "end-to-end p50", Colour: 2, Dash: 0}
	p99 := Series{Label: "end-to-end p99", Colour: 3, Dash: 1}
	lost := Series{Label: "lost", Colour: 4, Dash: 0}
	var unmeasured []float64
	lossy := false
	for _, c := range sr.Curve {
		x, verdict := float64(c.Value), VerdictFailed
		if c.Passed {
			verdict = VerdictPassed
		}
		add := func(s *Series, p *float64, scale, floor float64, v Verdict) bool {
			if p == nil || math.IsNaN(*p) {
				return false
			}
			s.Values = append(s.Values, Value{X: x, Y: math.Max(*p*scale, floor), N: 1, Verdict: v})
			return true
		}
		some := false
		for _, m := range []struct {
			s       *Series
			p       *float64
			scale   float64
			floor   float64
			verdict Verdict
		}{
			{&recv, c.ReceivedPerSecond, 1, 0, verdict}, {&sent, c.SentPerSecond, 1, 0, verdict}, {&offered, c.OfferedPerSecond, 1, 0, NoVerdict},
			// A log vertical cannot draw a zero: a microsecond is the floor.
			{&p50, c.LatencyP50Micros, 1e-3, 1e-3, verdict}, {&p99, c.LatencyP99Micros, 1e-3, 1e-3, verdict},
			{&lost, c.LostPercent, 1, 0, verdict},
		} {
			some = add(m.s, m.p, m.scale, m.floor, m.verdict) || some
		}
		lossy = lossy || (c.LostPercent != nil && *c.LostPercent > 0)
		if !some {
			unmeasured = append(unmeasured, x)
		}
	}
	panel := func(ylabel string, series ...Series) *Figure {
		p := &Figure{ID: f.ID, YLabel: ylabel, XLabel: f.XLabel, Unmeasured: unmeasured}
		for _, s := range series {
			if len(s.Values) > 0 {
				p.Series = append(p.Series, s)
			}
		}
		return p
	}
	// The throughput panel always: it carries the crosses of a search that measured nothing.
	f.Panels = append(f.Panels, panel("messages per second", recv, sent, offered))
	if lat := panel(latencyLabel, p50, p99); len(lat.Series) > 0 {
		lat.LogY = spans(lat.Series, 10)
		f.Panels = append(f.Panels, lat)
	}
	if lossy {
		f.Panels = append(f.Panels, panel("messages lost (%)", lost))
	}
	for i, p := range f.Panels {
		top := i == 0
		p.noVerdictKey = !top
		if sr.LastPass != nil && sr.FirstFail != nil {
			b := Band{Lo: float64(*sr.LastPass), Hi: float64(*sr.FirstFail)}
			if top {
				b.Label = fmt.Sprintf("bracket %d–%d", *sr.LastPass, *sr.FirstFail)
			}
			p.Bands = []Band{b}
		}
		if sr.Capacity != nil {
			l := Tick{Value: float64(*sr.Capacity)}
			if top {
				l.Label = fmt.Sprintf("capacity %d", *sr.Capacity)
			}
			p.Lines = []Tick{l}
		}
		if sr.Knee != nil {
			m := Tick{Value: float64(*sr.Knee)}
			if p.YLabel == latencyLabel { // where the knee is found: the p99 curve
				m.Label = "knee"
			}
			p.Marks = []Tick{m}
		}
	}
	f.Table = capacityTable(sr, field)
	f.Caption = capacityCaption(sr, field, f, lossy)
	return f
}

// spans: the series' values span more than ratio× (a log vertical shows them better).
func spans(series []Series, ratio float64) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, v := range s.Values {
			lo, hi = math.Min(lo, v.Y), math.Max(hi, v.Y)
		}
	}
	return lo > 0 && hi/lo > ratio
}

// searchField names the field a search scales: "workload.rate", or several that take each
// value together, "workload.publishers = workload.topics".
func searchField(sr *suite.SearchResult) string {
	if len(sr.Fields) == 0 {
		return "value"
	}
	return strings.Join(sr.Fields, " = ")
}

// capacityTable is the curve's CSV: a row per value, its verdict and figures (empty where
// nothing was measured), in the units plotted.
func capacityTable(sr *suite.SearchResult, field string) [][]string {
	rows := [][]string{{field, "passed", "offered (msg/s)", "sent (msg/s)", "received (msg/s)", "end-to-end latency p50 (ms)",
		"end-to-end latency p99 (ms)", "lost (%)", "backlog (ms/s)"}}
	cell := func(p *float64, scale float64) string {
		if p == nil {
			return ""
		}
		return num(*p * scale)
	}
	for _, c := range sr.Curve {
		rows = append(rows, []string{strconv.FormatInt(c.Value, 10), strconv.FormatBool(c.Passed), cell(c.OfferedPerSecond, 1), cell(c.SentPerSecond, 1),
			cell(c.ReceivedPerSecond, 1), cell(c.LatencyP50Micros, 1e-3), cell(c.LatencyP99Micros, 1e-3), cell(c.LostPercent, 1), cell(c.BacklogMillisPerSecond, 1)})
	}
	return rows
}

// capacityCaption says the outcome first — the capacity, or why the search states none — then
// what the panels and marks show.
func capacityCaption(sr *suite.SearchResult, field string, f *Figure, lossy bool) string {
	var b strings.Builder
	b.WriteString(SearchOutcomeLine(sr) + ".")
	if sr.Message != "" {
		fmt.Fprintf(&b, " %s.", capitalize(strings.TrimSuffix(sr.Message, ".")))
	}
	fmt.Fprintf(&b, " A capacity search over %s (spec.search): each value measured, at its latest decided step — means over its succeeded trials, latency percentiles pooled.", field)
	b.WriteString(" Top: messages received and sent per second against the load offered (dashed grey; y = x when the search scales workload.rate)")
	if len(f.Panels) > 1 && f.Panels[1].YLabel == latencyLabel {
		b.WriteString("; then end-to-end latency p50 and p99")
		if f.Panels[1].LogY {
			b.WriteString(" on a log scale")
		}
	}
	if lossy {
		b.WriteString("; then the messages lost")
	}
	b.WriteString(".")
	if !lossy {
		b.WriteString(" No value lost messages.")
	}
	b.WriteString(" Filled markers: the value passed; hollow: it failed")
	if len(f.Panels[0].Unmeasured) > 0 {
		b.WriteString("; a cross on the axis: no trial succeeded, nothing was measured")
	}
	b.WriteString(".")
	switch {
	case sr.Capacity != nil:
		fmt.Fprintf(&b, " Solid line: the capacity, %d", *sr.Capacity)
		if sr.Outcome == v1alpha1.SearchCapped {
			b.WriteString(", the last pass when the search was capped")
		}
		b.WriteString(".")
	default:
		fmt.Fprintf(&b, " No capacity line: the search ended %s.", sr.Outcome)
	}
	if sr.LastPass != nil && sr.FirstFail != nil {
		fmt.Fprintf(&b, " Shaded: the bracket, from the last pass %d to the first fail %d.", *sr.LastPass, *sr.FirstFail)
	}
	if sr.Knee != nil {
		fmt.Fprintf(&b, " Dotted \"knee\": where the p99 latency curve bends most (Kneedle), %d", *sr.Knee)
		if sr.Capacity != nil && *sr.Capacity == *sr.Knee {
			b.WriteString(", the capacity itself")
		}
		b.WriteString(".")
	}
	return b.String()
}

// SearchOutcomeLine is a search's result in a line: "Found: capacity 1234 (bracket 1234–1290,
// 4.5 % wide, 5 % asked), 9 runs", or why it states none: "BelowRange: no capacity (first fail
// 100, no pass), 1 run".
func SearchOutcomeLine(sr *suite.SearchResult) string {
	var b strings.Builder
	b.WriteString(sr.Outcome + ": ")
	var bracket string
	switch lp, ff := sr.LastPass, sr.FirstFail; {
	case lp != nil && ff != nil:
		bracket = fmt.Sprintf("bracket %d–%d", *lp, *ff)
		if sr.WidthPercent != nil {
			bracket += fmt.Sprintf(", %.1f %% wide", *sr.WidthPercent)
		}
		bracket += fmt.Sprintf(", %d %% asked", sr.PrecisionPercent)
	case lp != nil:
		bracket = fmt.Sprintf("last pass %d, no fail", *lp)
	case ff != nil:
		bracket = fmt.Sprintf("first fail %d, no pass", *ff)
	}
	switch {
	case sr.Capacity != nil:
		fmt.Fprintf(&b, "capacity %d", *sr.Capacity)
	case sr.Outcome == v1alpha1.SearchSearching:
		b.WriteString("no capacity yet")
	default:
		b.WriteString("no capacity")
	}
	if bracket != "" {
		b.WriteString(" (" + bracket + ")")
	}
	runs := "runs"
	if sr.Runs == 1 {
		runs = "run"
	}
	fmt.Fprintf(&b, ", %d %s", sr.Runs, runs)
	return b.String()
}

// SearchSummary is a search on the page: its outcome and a row per step.
type SearchSummary struct {
	Outcome, Line, Message string
	// Stated: the search states a capacity (Found, or Capped with a bracket).
	Stated bool
	Steps  []StepRow
}

// StepRow is one step of a search: its value, why it ran, its trials and the first reason one
// failed.
type StepRow struct {
	Step          int
	Kind          string
	Value         int64
	Trials        string // passed/total
	Passed        string // passed, failed, or undecided
	Failed        bool
	Reason, Point string
}

// searchSummary is the page's account of a search.
func searchSummary(sr *suite.SearchResult) *SearchSummary {
	s := &SearchSummary{Outcome: sr.Outcome, Line: SearchOutcomeLine(sr), Message: sr.Message, Stated: sr.Capacity != nil}
	for _, st := range sr.Steps {
		row := StepRow{Step: st.Index, Kind: string(st.Kind), Value: st.Value, Passed: "undecided", Point: fmt.Sprintf("s%d", st.Index)}
		pass := 0
		for _, t := range st.Trials {
			if t.Passed {
				pass++
				continue
			}
			if row.Reason == "" {
				row.Reason = "the run failed"
				if len(t.Reasons) > 0 {
					row.Reason = t.Reasons[0]
				}
			}
		}
		row.Trials = fmt.Sprintf("%d/%d", pass, len(st.Trials))
		if st.Passed != nil {
			row.Passed, row.Failed = "passed", !*st.Passed
			if row.Failed {
				row.Passed = "failed"
			}
		}
		s.Steps = append(s.Steps, row)
	}
	return s
}
