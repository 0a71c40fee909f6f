package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/results/stats"
	"github.com/msgbench/msgbench/suite"
)

// Dataset is what a report draws: points (one configuration each, with its repetitions), the axes
// they vary along, and the runs that failed. It is built the same way from a suite's document and
// from a loose set of result files, so one planner chooses the figures for both.
type Dataset struct {
	Title  string
	Points []*Point
	Axes   []*Axis
	// Failed lists every run that did not succeed: listed in the report, never plotted.
	Failed []FailedRun
	// Suite is the suite's document when the dataset is a suite's.
	Suite *suite.Document
	// Declared are the fields of a suite's matrix axes (nil for loose results): only those
	// can be a figure's horizontal; fields only include entries set are categories.
	Declared map[string]bool
}

// Point is one configuration.
type Point struct {
	Name string
	// Values are the point's value of every field that varies, by field path ("qos",
	// "workload.payloadBytes"); "" is the template's value.
	Values map[string]string
	// Runs are the repetitions that succeeded, the only ones figures are drawn from.
	Runs  []*results.Result
	Stats stats.PointStats
}

// FailedRun is a run that did not succeed.
type FailedRun struct {
	Point, Name, Phase, Message string
	// Result is what the run left, when there is one (its own report shows its summary).
	Result *results.Result
}

// Axis is a set of fields that vary together across the points (a suite's multi-field axis, or
// fields a matrix ties to each other such as rate and messages that follow the clients).
type Axis struct {
	// Fields vary together; the first names the axis.
	Fields []string
	// Values are the first field's values in order: numerically when Numeric, else as met.
	Values []string
	// Numeric: every value is a number or a duration.
	Numeric bool
	// Declared: one of the suite's matrix axes (always, for loose results); an axis only
	// include entries make is a set of points, not a quantity.
	Declared bool
	// with holds, for an axis of several fields, every field's value at each value of the
	// first: what a legend names.
	with map[string]map[string]string
}

// Name is the axis's label in figures: "clients", "payload (B)", "QoS".
func (a *Axis) Name() string { return fieldLabel(a.Fields[0]) }

// Field is the axis's first field.
func (a *Axis) Field() string { return a.Fields[0] }

// FromResults groups loose results into points — runs of the same spec are repetitions of one
// point — and finds the fields that vary. Results are read as given (a failed one is listed).
func FromResults(rs []*results.Result) *Dataset {
	d := &Dataset{}
	byKey := map[string]*Point{}
	var flat []map[string]string
	for _, r := range rs {
		key := r.Name
		if r.Spec != nil {
			b, _ := json.Marshal(r.Spec)
			key = string(b)
		}
		p := byKey[key]
		if p == nil {
			p = &Point{Name: repetitionSuffix.ReplaceAllString(r.Name, "")}
			byKey[key] = p
			d.Points = append(d.Points, p)
			flat = append(flat, flatten(r.Spec))
		}
		if r.Phase != "" && r.Phase != "Succeeded" {
			d.Failed = append(d.Failed, FailedRun{Point: p.Name, Name: r.Name, Phase: r.Phase, Message: r.Message, Result: r})
			continue
		}
		p.Runs = append(p.Runs, r)
	}
	// The fields whose values differ between points are the point's values.
	varying := map[string]bool{}
	for _, f := range flat {
		for k, v := range f {
			if v != flat[0][k] {
				varying[k] = true
			}
		}
		for k := range flat[0] {
			if _, ok := f[k]; !ok {
				varying[k] = true
			}
		}
	}
	for i, p := range d.Points {
		p.Values = map[string]string{}
		for k := range varying {
			p.Values[k] = flat[i][k]
		}
	}
	d.finish()
	d.sortPoints()
	switch {
	case len(d.Points) == 1 && len(rs) == 1:
		d.Title = "msgbench: " + rs[0].Name
	case len(d.Points) == 1:
		d.Title = fmt.Sprintf("msgbench: %s, %d repetitions", d.Points[0].Name, len(rs))
	default:
		d.Title = fmt.Sprintf("msgbench: %d runs compared", len(rs))
	}
	return d
}

// repetitionSuffix is the "-r2" of a suite run's name.
var repetitionSuffix = regexp.MustCompile(`-r[0-9]+$`)

// FromSuite is a suite's dataset: its points with their values, the results its document's runs
// carry (RunOutcome.Result), and its failed runs.
func FromSuite(doc *suite.Document) *Dataset {
	d := &Dataset{Suite: doc, Title: "msgbench suite: " + doc.Name, Declared: map[string]bool{}}
	for _, a := range doc.Spec.Matrix.Axes {
		d.Declared[a.Field] = true
		for _, f := range a.Fields {
			d.Declared[f] = true
		}
	}
	for _, pr := range doc.Points {
		p := &Point{Name: pr.Name, Values: map[string]string{}}
		for k, v := range pr.Values {
			p.Values[k] = v
		}
		for _, run := range pr.Runs {
			switch {
			case run.Phase != "Succeeded":
				d.Failed = append(d.Failed, FailedRun{Point: pr.Name, Name: run.Name, Phase: run.Phase, Message: run.Message, Result: run.Result})
			case run.Result != nil:
				p.Runs = append(p.Runs, run.Result)
			}
		}
		d.Points = append(d.Points, p)
	}
	// A field an include entry sets has the template's value at every other point: read from
	// the point's run when it has one ("" otherwise).
	for _, p := range d.Points {
		var spec map[string]string
		if len(p.Runs) > 0 {
			spec = flatten(p.Runs[0].Spec)
		}
		for _, q := range d.Points {
			for k := range q.Values {
				if _, ok := p.Values[k]; !ok {
					p.Values[k] = spec[k]
				}
			}
		}
	}
	d.finish()
	return d
}

// ReadSuite reads a local suite's folder: DIR/suite.json and each run's DIR/<point>/r<k>/result.json.
// A run whose result is missing is reported as an error: the figures would silently lack it.
func ReadSuite(dir string) (*Dataset, error) {
	data, err := os.ReadFile(filepath.Join(dir, "suite.json"))
	if err != nil {
		return nil, err
	}
	var doc suite.Document
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "suite.json"), err)
	}
	if doc.SchemaVersion != suite.SchemaVersion {
		return nil, fmt.Errorf("%s: schemaVersion %q, want %q", filepath.Join(dir, "suite.json"), doc.SchemaVersion, suite.SchemaVersion)
	}
	for i := range doc.Points {
		p := &doc.Points[i]
		for j := range p.Runs {
			run := &p.Runs[j]
			if run.Phase != "Succeeded" {
				continue
			}
			f := filepath.Join(dir, p.Name, "r"+strconv.Itoa(run.Repetition), "result.json")
			r, err := results.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("suite %s, point %s: %w", doc.Name, p.Name, err)
			}
			run.Result = r
		}
	}
	return FromSuite(&doc), nil
}

// finish computes each point's statistics and the axes.
func (d *Dataset) finish() {
	for _, p := range d.Points {
		p.Stats = stats.Point(p.Runs)
	}
	d.Axes = axesOf(d.Points)
	for _, a := range d.Axes {
		a.Declared = d.Declared == nil
		for _, f := range a.Fields {
			a.Declared = a.Declared || d.Declared[f]
		}
	}
}

// sortPoints orders loose results' points by their axes' values — numbers as numbers, so that
// clients 1, 4, 16 do not come out as text (1, 16, 4).
func (d *Dataset) sortPoints() {
	sort.SliceStable(d.Points, func(i, j int) bool {
		for _, a := range d.Axes {
			vi, vj := d.Points[i].Values[a.Field()], d.Points[j].Values[a.Field()]
			if vi == vj {
				continue
			}
			if a.Numeric {
				x, _ := number(vi)
				y, _ := number(vj)
				return x < y
			}
			return indexOf(a.Values, vi) < indexOf(a.Values, vj)
		}
		return false
	})
}

// axesOf finds the axes: fields with two or more values, those that determine each other merged
// into one (clients = publishers = subscribers = topics; a rate tied to the clients).
func axesOf(points []*Point) []*Axis {
	var fields []string
	for k := range pointsFields(points) {
		vals := map[string]bool{}
		for _, p := range points {
			vals[p.Values[k]] = true
		}
		if len(vals) > 1 {
			fields = append(fields, k)
		}
	}
	sort.Slice(fields, func(a, b int) bool {
		ra, rb := fieldRank(fields[a]), fieldRank(fields[b])
		if ra != rb {
			return ra < rb
		}
		return fields[a] < fields[b]
	})
	var axes []*Axis
	taken := map[string]bool{}
	for _, f := range fields {
		if taken[f] {
			continue
		}
		a := &Axis{Fields: []string{f}}
		for _, g := range fields {
			if g != f && !taken[g] && determines(points, f, g) && determines(points, g, f) {
				a.Fields = append(a.Fields, g)
				taken[g] = true
			}
		}
		taken[f] = true
		seen := map[string]bool{}
		for _, p := range points {
			if v := p.Values[f]; !seen[v] {
				seen[v] = true
				a.Values = append(a.Values, v)
				if len(a.Fields) > 1 {
					if a.with == nil {
						a.with = map[string]map[string]string{}
					}
					a.with[v] = map[string]string{}
					for _, g := range a.Fields {
						a.with[v][g] = p.Values[g]
					}
				}
			}
		}
		a.Numeric = true
		for _, v := range a.Values {
			if _, ok := number(v); !ok {
				a.Numeric = false
			}
		}
		if a.Numeric {
			sort.SliceStable(a.Values, func(i, j int) bool {
				x, _ := number(a.Values[i])
				y, _ := number(a.Values[j])
				return x < y
			})
		}
		axes = append(axes, a)
	}
	return axes
}

func pointsFields(points []*Point) map[string]bool {
	m := map[string]bool{}
	for _, p := range points {
		for k := range p.Values {
			m[k] = true
		}
	}
	return m
}

// determines: every point with the same value of f has the same value of g.
func determines(points []*Point, f, g string) bool {
	m := map[string]string{}
	for _, p := range points {
		if v, ok := m[p.Values[f]]; ok && v != p.Values[g] {
			return false
		}
		m[p.Values[f]] = p.Values[g]
	}
	return true
}

// number reads a value as a number: "16", "2.5", "true" is not; a duration ("5ms") in ms.
func number(v string) (float64, bool) {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return f, true
	}
	if d, err := time.ParseDuration(v); err == nil {
		return float64(d) / 1e6, true
	}
	return 0, false
}

// fieldRank orders fields so that the one naming a merged axis is the one a reader knows.
func fieldRank(f string) int {
	for i, g := range []string{"protocol", "tls.enabled", "network.profile", "broker.type", "http.version", "qos", "workload.publishers",
		"workload.payloadBytes", "network.delay", "workload.rate", "workload.messages"} {
		if f == g {
			return i
		}
	}
	return 100
}

// fieldLabel is a field's name in figures.
func fieldLabel(f string) string {
	switch f {
	case "workload.publishers":
		return "clients"
	case "workload.payloadBytes":
		return "payload (B)"
	case "qos":
		return "QoS"
	case "tls.enabled":
		return "TLS"
	case "network.profile":
		return "network"
	case "network.delay":
		return "one-way delay"
	case "http.version":
		return "HTTP version"
	case "broker.type":
		return "broker"
	}
	return strings.TrimPrefix(f, "workload.")
}

// valueLabel is one value of an axis in a legend: "QoS 1", "TLS", "no TLS", "mqtt".
func valueLabel(a *Axis, v string) string {
	if len(a.Fields) > 1 && !a.Declared { // points include entries made: say in what they differ
		return describe(a, v)
	}
	switch a.Field() {
	case "qos":
		return "QoS " + v
	case "tls.enabled":
		if v == "true" {
			return "TLS"
		}
		return "no TLS"
	case "protocol", "network.profile", "broker.type":
		if v == "" {
			return "default"
		}
		return v
	case "http.version":
		return "HTTP/" + v
	case "workload.payloadBytes":
		return v + " B payload"
	case "workload.publishers":
		switch {
		case slices.Contains(a.Fields, "workload.subscribers") && v == "1":
			return "1 client"
		case slices.Contains(a.Fields, "workload.subscribers"):
			return v + " clients" // publishers = subscribers
		}
		return v + " publishers"
	}
	if v == "" {
		v = "template"
	}
	return fieldLabel(a.Field()) + " " + v
}

// describe names the points at value v of an axis of several fields, include entries' points
// set apart from the matrix's, by every field's value in words: "20 publishers, 20
// subscribers, 10% loss, 5s warm-up".
func describe(a *Axis, v string) string {
	vals, ok := a.with[v]
	if !ok { // an axis built by hand: its first field only
		return fmt.Sprintf("%s (and %s)", fieldWords(a.Field(), v), strings.Join(a.Fields[1:], ", "))
	}
	fields := slices.Clone(a.Fields)
	sort.SliceStable(fields, func(i, j int) bool { return describeRank(fields[i]) < describeRank(fields[j]) })
	var words []string
	for _, f := range fields {
		words = append(words, fieldWords(f, vals[f]))
	}
	return strings.Join(words, ", ")
}

// describeRank orders a description as a reader takes in a setup: the clients, what they send
// and how fast, the link, then the timing.
func describeRank(f string) int {
	for i, g := range []string{"protocol", "broker.type", "qos", "tls.enabled", "workload.publishers", "workload.subscribers", "workload.topics",
		"workload.payloadBytes", "workload.rate", "workload.messages", "workload.connectRate"} {
		if f == g {
			return i
		}
	}
	switch {
	case strings.HasPrefix(f, "network."):
		return 20
	case f == "workload.duration", f == "workload.warmup":
		return 40
	}
	return 30
}

// fieldWords is a field's value as a reader says it: "20 publishers", "256 B payload", "10%
// loss", "no warm-up"; "" is the template's value, or the field's default when it sets none.
func fieldWords(f, v string) string {
	none := v == "" || v == "0" || zeroDuration(v)
	count := func(what string) string {
		if v == "1" {
			return "1 " + what
		}
		return v + " " + what + "s"
	}
	switch f {
	case "workload.publishers", "workload.subscribers", "workload.topics":
		if v == "" {
			return "template's " + fieldLabel(f)
		}
		return count(strings.TrimSuffix(strings.TrimPrefix(f, "workload."), "s"))
	case "workload.rate":
		if none {
			return "closed loop"
		}
		return v + " msg/s"
	case "workload.messages":
		if none {
			return "for the duration"
		}
		return v + " messages"
	case "workload.duration":
		if v == "" {
			return "template's duration"
		}
		return "measured " + v
	case "workload.warmup":
		if none {
			return "no warm-up"
		}
		return v + " warm-up"
	case "workload.connectRate":
		if none {
			return "connecting all at once"
		}
		return v + " connections/s"
	case "network.delay":
		if none {
			return "no delay"
		}
		return v + " one-way delay"
	case "network.jitter":
		if none {
			return "no jitter"
		}
		return "± " + v + " jitter"
	}
	for _, p := range []struct{ field, what string }{{"network.lossPercent", "loss"}, {"network.reorderPercent", "reordered"},
		{"network.duplicatePercent", "duplicated"}, {"network.corruptPercent", "corrupted"}} {
		if f == p.field {
			if none {
				return "no " + map[string]string{"loss": "loss", "reordered": "reordering", "duplicated": "duplication", "corrupted": "corruption"}[p.what]
			}
			return v + "% " + p.what
		}
	}
	return valueLabel(&Axis{Fields: []string{f}, Declared: true}, v)
}

// zeroDuration: v is a zero duration ("0s", "0ms").
func zeroDuration(v string) bool {
	d, err := time.ParseDuration(v)
	return err == nil && d == 0
}

// flatten is a spec as field path → value text, the form suite points use.
func flatten(spec any) map[string]string {
	out := map[string]string{}
	if spec == nil {
		return out
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return out
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return out
	}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, x := range t {
				walk(strings.TrimPrefix(prefix+"."+k, "."), x)
			}
		case nil:
		default:
			b, _ := json.Marshal(t)
			out[prefix] = strings.Trim(string(b), `"`)
		}
	}
	walk("", m)
	return out
}
