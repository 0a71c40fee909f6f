// Package objectives parses and judges objectives: conditions on a result's figures such as
// "latency.endToEnd.p99 <= 50ms", "lost == 0" or "throughput.receivedPerSecond >= 1k", written
// in a MessagingBenchmark's or a MessagingBenchmarkSuite's spec.objectives (docs/objectives.md);
// in a run with device groups also on a group's or a pair of groups' figures
// ("groups.sensors.lost == 0", "pairs.sensors.backend.endToEnd.p99 <= 2s"; a MessagingBenchmark's
// only: ParseSpec).
//
// Judging is separate from where the numbers come from: Judge takes a function from figure
// name to value, ForResult makes one for a single run's result, and a suite passes its
// point's statistics (stats.PointStats.Value).
package objectives

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/results/figures"
)

// Op is a comparison operator.
type Op string

// Operators, as written.
const (
	LE Op = "<="
	GE Op = ">="
	EQ Op = "=="
	NE Op = "!="
	LT Op = "<"
	GT Op = ">"
)

// holds reports whether "measured op value" is true.
func (op Op) holds(measured, value float64) bool {
	switch op {
	case LE:
		return measured <= value
	case GE:
		return measured >= value
	case EQ:
		return measured == value
	case NE:
		return measured != value
	case LT:
		return measured < value
	case GT:
		return measured > value
	}
	return false
}

// Objective is one parsed objective.
type Objective struct {
	// Figure is the figure it is about.
	Figure figures.Figure
	// Op compares the measured value (left) with Value (right).
	Op Op
	// Value is the bound in the figure's unit (Figure.Kind.Unit): microseconds for latencies,
	// seconds, bytes, messages per second …
	Value float64
	// Text is the value as written ("50ms", "1k").
	Text string

	// unit and scale write a figure's value the way Text is written (scale: one unit in the
	// figure's unit); scale 0 means a compound duration (1m30s), written as a Go duration.
	unit  string
	scale float64
}

// String returns the objective in a normal form: "latency.endToEnd.p99 <= 50ms".
func (o Objective) String() string {
	return o.Figure.Name + " " + string(o.Op) + " " + o.Text
}

// Format writes v, a value of the objective's figure, in the unit the objective was written
// in: 62300 µs for "… <= 50ms" is "62.3ms".
func (o Objective) Format(v float64) string {
	if o.scale == 0 { // a compound duration: v is in microseconds
		return time.Duration(math.Round(v * 1e3)).String()
	}
	return number(v/o.scale) + o.unit
}

// number writes x briefly but exactly enough to compare with a bound: integers in full,
// others to four significant digits (one decimal from 100 on).
func number(x float64) string {
	switch {
	case x == math.Trunc(x) && math.Abs(x) < 1e15:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case math.Abs(x) >= 100:
		return strconv.FormatFloat(math.Round(x*10)/10, 'f', -1, 64)
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

// form is the CRD's pattern for an objective, with groups for its three parts. A part of the
// figure's path after the first may hold a device group's name, which may have '-' inside
// (groups.edge-sensors.lost).
var form = regexp.MustCompile(`^\s*([a-zA-Z][a-zA-Z0-9]*(?:\.[a-zA-Z0-9](?:[-a-zA-Z0-9]*[a-zA-Z0-9])?)*)\s*(<=|>=|==|!=|<|>)\s*(\S+)\s*$`)

// Parse parses "<figure> <op> <value>". The value is written in units that suit the figure's
// kind: latencies as Go durations (50ms, 1.5s, 200us), counts and rates as numbers with an
// optional SI suffix (1k = 1000, 2M), bytes also with IEC ones (64Ki, 1MiB), percentages with
// an optional %. Errors name the expression and say what to write instead.
func Parse(expr string) (Objective, error) {
	fail := func(format string, args ...any) (Objective, error) {
		return Objective{}, fmt.Errorf("objective %q: %s", expr, fmt.Sprintf(format, args...))
	}
	m := form.FindStringSubmatch(expr)
	if m == nil {
		return fail("not of the form <figure> <op> <value> (op one of <= >= == != < >), e.g. latency.endToEnd.p99 <= 50ms")
	}
	f, err := figures.Lookup(m[1])
	if err != nil {
		return fail("%v", err)
	}
	o := Objective{Figure: f, Op: Op(m[2]), Text: m[3]}
	if o.Value, o.scale, o.unit, err = value(f, o.Text); err != nil {
		return fail("%v", err)
	}
	return o, nil
}

// ParseAll parses a suite's spec.objectives. It returns the objectives that parsed and, joined,
// an error for each one that did not, named by its index: "spec.objectives[1]: objective …".
// A suite judges a point on statistics of the run's own figures (stats.Point), which has none
// per device group: an objective on a group or pair of groups is refused, saying so, rather
// than never met. A MessagingBenchmark's objectives are ParseSpec's.
func ParseAll(exprs []string) ([]Objective, error) {
	return parseAll(exprs, func(o Objective) error {
		if o.Figure.Group != "" {
			return errors.New("a suite judges its points on statistics of the run's own figures, which have none per device group; an objective on a group or pair of groups goes in the template's spec.objectives, judged on each run")
		}
		return nil
	})
}

// ParseSpec parses a MessagingBenchmark's spec.objectives as ParseAll does a suite's, and
// takes objectives on device groups: it refuses one naming a group the spec does not have
// (groups.<group>.<figure>), naming the group and the groups there are, and one on a pair of
// groups (pairs.<from>.<to>.<figure>) whose first group does not publish or whose second does
// not subscribe. A spec without spec.groups has no groups to name: its run has the run's own
// figures only.
func ParseSpec(spec *v1alpha1.MessagingBenchmarkSpec) ([]Objective, error) {
	if spec == nil {
		return nil, nil
	}
	return parseAll(spec.Objectives, func(o Objective) error { return checkGroups(o, spec.Groups) })
}

func parseAll(exprs []string, check func(Objective) error) ([]Objective, error) {
	var objs []Objective
	var errs []error
	for i, e := range exprs {
		o, err := Parse(e)
		if err == nil && check != nil {
			if err = check(o); err != nil {
				err = fmt.Errorf("objective %q: %w", e, err)
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("spec.objectives[%d]: %w", i, err))
			continue
		}
		objs = append(objs, o)
	}
	return objs, errors.Join(errs...)
}

// checkGroups checks the groups o's figure names against the spec's groups.
func checkGroups(o Objective, groups []v1alpha1.DeviceGroupSpec) error {
	f := o.Figure
	if f.Group == "" {
		return nil
	}
	var names []string
	byName := map[string]*v1alpha1.DeviceGroupSpec{}
	for i := range groups {
		names = append(names, groups[i].Name)
		byName[groups[i].Name] = &groups[i]
	}
	for _, n := range []string{f.Group, f.To} {
		if n != "" && byName[n] == nil {
			return figures.UnknownGroup(n, names)
		}
	}
	if f.To == "" {
		return nil
	}
	const pair = "pairs.<publishing group>.<subscribing group>.<figure>"
	if byName[f.Group].Publish == nil {
		return fmt.Errorf("group %s does not publish: a pair of groups is %s", f.Group, pair)
	}
	if byName[f.To].Subscribe == nil {
		return fmt.Errorf("group %s does not subscribe: a pair of groups is %s", f.To, pair)
	}
	return nil
}

// Scales of the suffixes a value may carry, by kind.
var (
	durationUnits = map[string]float64{"ns": 1e-3, "us": 1, "µs": 1, "μs": 1, "ms": 1e3, "s": 1e6, "m": 60e6, "h": 3600e6}
	si            = map[string]float64{"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}
	small         = map[string]float64{"": 1, "m": 1e-3, "u": 1e-6, "µ": 1e-6, "k": 1e3}
	iec           = map[string]float64{"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}
	numberPart    = regexp.MustCompile(`^([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)(.*)$`)
	singleUnit    = regexp.MustCompile(`^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)$`)
)

// value parses the bound s for figure f: its value in f's unit, and the scale and unit to write
// measured values the same way.
func value(f figures.Figure, s string) (v, scale float64, unit string, err error) {
	switch f.Kind {
	case figures.Duration:
		return duration(f, s, 1)
	case figures.Seconds:
		if x, err := strconv.ParseFloat(s, 64); err == nil && finite(x) {
			return x, 1, "", nil
		}
		return duration(f, s, 1e6)
	}
	m := numberPart.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, "", fmt.Errorf("%s is not a number; %s", s, hint(f))
	}
	x, err := strconv.ParseFloat(m[1], 64)
	if err != nil || !finite(x) {
		return 0, 0, "", fmt.Errorf("%s is not a number; %s", s, hint(f))
	}
	suffix := m[2]
	// Strip the unit words a kind allows after the multiplier (B, /s, %) before looking the
	// multiplier up.
	mult := suffix
	switch f.Kind {
	case figures.Rate:
		mult = strings.TrimSuffix(mult, "/s")
	case figures.ByteRate:
		mult = strings.TrimSuffix(strings.TrimSuffix(mult, "/s"), "B")
	case figures.Bytes:
		mult = strings.TrimSuffix(mult, "B")
	case figures.Percent:
		mult = strings.TrimSuffix(mult, "%")
		if mult != "" {
			return 0, 0, "", fmt.Errorf("%s: %s", s, hint(f))
		}
	case figures.Energy, figures.Current:
		unit := map[figures.Kind]string{figures.Energy: "J", figures.Current: "A"}[f.Kind]
		k, ok := small[strings.TrimSuffix(mult, unit)]
		if !ok || !strings.HasSuffix(suffix, unit) {
			return 0, 0, "", fmt.Errorf("%s: %s", s, hint(f))
		}
		return x * k, k, suffix, nil
	case figures.Days:
		mult = strings.TrimSuffix(mult, "d")
	}
	k, ok := si[mult]
	if !ok && (f.Kind == figures.Bytes || f.Kind == figures.ByteRate) {
		k, ok = iec[mult]
	}
	if !ok {
		return 0, 0, "", fmt.Errorf("%s: %s", s, hint(f))
	}
	return x * k, k, suffix, nil
}

// duration parses a Go duration into the figure's unit: perMicro is how many microseconds
// make one of it (1 for latencies, 1e6 for seconds figures). A bare number is refused for
// latencies: 50 could be µs or ms, and guessing wrong passes a bad run.
func duration(f figures.Figure, s string, perMicro float64) (v, scale float64, unit string, err error) {
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return 0, 0, "", fmt.Errorf("a latency needs a unit, e.g. %sms", s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, 0, "", fmt.Errorf("%s is not a duration; %s", s, hint(f))
	}
	micros := float64(d) / 1e3
	if m := singleUnit.FindStringSubmatch(s); m != nil {
		return micros / perMicro, durationUnits[m[1]] / perMicro, m[1], nil
	}
	if perMicro != 1 { // seconds written as 1m30s: show measured values in seconds
		return micros / perMicro, 1, "s", nil
	}
	return micros, 0, "", nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// hint says how to write a value for f's kind.
func hint(f figures.Figure) string {
	switch f.Kind {
	case figures.Duration:
		return "write a duration such as 50ms, 1.5s or 200us"
	case figures.Seconds:
		return fmt.Sprintf("%s is in seconds: write a number of seconds (1.5) or a duration (1500ms)", f.Name)
	case figures.Rate:
		return fmt.Sprintf("%s is messages per second: write a number such as 1000, 1k or 2.5M", f.Name)
	case figures.ByteRate:
		return fmt.Sprintf("%s is bytes per second: write a number such as 500000, 500k, 2MB/s or 1MiB/s", f.Name)
	case figures.Bytes:
		return fmt.Sprintf("%s is bytes: write a number such as 300, 64k, 64KiB or 2MB", f.Name)
	case figures.Percent:
		return fmt.Sprintf("%s is a percentage: write a number such as 1 or 0.5%%", f.Name)
	case figures.Energy:
		return fmt.Sprintf("%s is energy: write it with its unit, such as 5mJ, 0.2J or 300uJ", f.Name)
	case figures.Current:
		return fmt.Sprintf("%s is a current: write it with its unit, such as 10mA or 5uA", f.Name)
	case figures.Days:
		return fmt.Sprintf("%s is days: write a number such as 3650", f.Name)
	}
	h := fmt.Sprintf("%s is a count: write a number such as 0, 1000 or 1k", f.Name)
	if p, err := figures.Lookup(f.Name + "Percent"); err == nil {
		h += fmt.Sprintf(" (for a share, %s <= 1%%)", p.Name)
	}
	return h
}

// Outcome is how one objective fared.
type Outcome struct {
	Objective Objective
	// Measured is the figure's value in its unit (0 when Missing).
	Measured float64
	// Met is whether the objective held; never true when Missing.
	Met bool
	// Missing is set when the result has no such figure (not measured): the objective is not
	// met, since nothing shows it was.
	Missing bool
	// Reason says, when not met, what was measured or why nothing was.
	Reason string
}

// String is one line for reports: "latency.endToEnd.p99 <= 50ms: measured 62.3ms" when
// missed, "… : met (measured 42ms)" when met.
func (o Outcome) String() string {
	if o.Met {
		return fmt.Sprintf("%s: met (measured %s)", o.Objective, o.Objective.Format(o.Measured))
	}
	return fmt.Sprintf("%s: %s", o.Objective, o.Reason)
}

// Judge judges each objective on value, which returns a figure's value by name and false when
// there is none.
func Judge(objs []Objective, value func(figure string) (float64, bool)) []Outcome {
	outs := make([]Outcome, 0, len(objs))
	for _, o := range objs {
		out := Outcome{Objective: o}
		v, ok := value(o.Figure.Name)
		switch {
		case !ok || math.IsNaN(v):
			out.Missing = true
			out.Reason = "not measured"
			if o.Figure.AbsentWhen != "" {
				out.Reason += " (absent when " + o.Figure.AbsentWhen + ")"
			}
		default:
			out.Measured = v
			out.Met = o.Op.holds(v, o.Value)
			if !out.Met {
				out.Reason = "measured " + o.Format(v)
			}
		}
		outs = append(outs, out)
	}
	return outs
}

// Met reports whether every objective was met (true for none).
func Met(outs []Outcome) bool {
	for _, o := range outs {
		if !o.Met {
			return false
		}
	}
	return true
}

// Summary has one line per objective not met, in order, e.g.
// "latency.endToEnd.p99 <= 50ms: measured 62.3ms"; empty when every one was.
func Summary(outs []Outcome) string {
	var lines []string
	for _, o := range outs {
		if !o.Met {
			lines = append(lines, o.String())
		}
	}
	return strings.Join(lines, "\n")
}

// JudgeResult is Judge on a single run's result r. An objective on a device group or pair of
// groups that r does not have is not met, its reason naming the group and the groups r has.
func JudgeResult(objs []Objective, r *results.Result) []Outcome {
	outs := Judge(objs, ForResult(r))
	for i := range outs {
		if !outs[i].Missing {
			continue
		}
		if err := outs[i].Objective.Figure.Unmatched(r); err != nil {
			outs[i].Reason = "not measured: " + err.Error()
		}
	}
	return outs
}

// ForResult returns the values of r's figures by name, for Judge on a single run.
func ForResult(r *results.Result) func(figure string) (float64, bool) {
	return func(name string) (float64, bool) {
		f, err := figures.Lookup(name)
		if err != nil {
			return 0, false
		}
		return f.Value(r)
	}
}

// Record is o as it is kept in a result or suite.json.
func (o Outcome) Record() results.ObjectiveResult {
	r := results.ObjectiveResult{Objective: o.Objective.String(), Met: o.Met, Reason: o.Reason}
	if !o.Missing {
		r.Measured = o.Objective.Format(o.Measured)
	}
	return r
}

// Apply judges r's spec.objectives on r and records the outcomes in r (Objectives,
// ObjectivesMet); nothing without objectives. An objective that does not parse is an error (the
// API refuses such a spec, so only a hand-made result has one).
func Apply(r *results.Result) error {
	if r.Spec == nil || len(r.Spec.Objectives) == 0 {
		return nil
	}
	objs, err := parseAll(r.Spec.Objectives, nil)
	if err != nil {
		return err
	}
	outs := JudgeResult(objs, r)
	r.Objectives = r.Objectives[:0]
	for _, o := range outs {
		r.Objectives = append(r.Objectives, o.Record())
	}
	met := Met(outs)
	r.ObjectivesMet = &met
	return nil
}
