// Package suite expands a MessagingBenchmarkSuite into its runs — the matrix's points, each
// repeated, in the suite's order — and builds each run's MessagingBenchmark. Everything here is a
// pure function of the suite, shared by the operator and `msgbench run`, so both run the same
// points in the same order under the same names.
package suite

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/manifest"
)

// MaxPoints and MaxRuns bound a suite: each point is validated and each run is an object, and
// a study beyond them is several suites.
const (
	MaxPoints = 1000
	MaxRuns   = 10000
)

// Assignment is one field's value at a point.
type Assignment struct {
	Field string // spec field path, "workload.publishers"
	Value any    // as decoded from JSON: float64/int64, string, bool
	Label string // the axis's name ("clients"), for the point's name
}

// Point is one combination of matrix values.
type Point struct {
	Index  int
	Name   string       // "mqtt-sn-qos1-clients16": says its values
	Values []Assignment // in axis order
}

// Text is a point's values as "field=value" text, by field.
func (p Point) Text() map[string]string {
	m := map[string]string{}
	for _, a := range p.Values {
		m[a.Field] = valueText(a.Value)
	}
	return m
}

// Expand lists the suite's points: the product of its axes (the last axis varying fastest),
// less those matching an exclude entry, then the include entries, each one more point with the
// template's values elsewhere (an include equal to a point already there is not repeated). Each
// point's benchmark is built and validated as the API server would (manifest.ParseObject), so a
// point the template cannot take is refused here, naming the point, before anything runs.
func Expand(s *v1alpha1.MessagingBenchmarkSuite, template map[string]any) ([]Point, error) {
	m := s.Spec.Matrix
	fields := map[string]bool{}
	names := map[string][]string{} // axis name -> its fields
	for i, a := range m.Axes {
		fs := axisFields(a)
		for _, f := range fs {
			if fields[f] {
				return nil, fmt.Errorf("spec.matrix.axes[%d]: field %s is on another axis already: each field may be on one axis", i, f)
			}
			fields[f] = true
		}
		names[axisLabel(a)] = fs
	}
	// The schema bounds each list, not their product: 16 axes of 100 values are accepted and
	// would be 10^32 points. Counted before anything is built.
	product := 1
	for _, a := range m.Axes {
		if product *= len(a.Values); product > MaxPoints {
			return nil, fmt.Errorf("spec.matrix: the axes' product exceeds %d points; split the study into several suites", MaxPoints)
		}
	}
	if n := (product + len(m.Include)) * int(max(s.Spec.Repetitions, 1)); n > MaxRuns {
		return nil, fmt.Errorf("spec.repetitions: %d points × %d repetitions is more than %d runs; split the study into several suites",
			product+len(m.Include), s.Spec.Repetitions, MaxRuns)
	}
	combos := [][]Assignment{nil}
	for _, a := range m.Axes {
		var next [][]Assignment
		for _, c := range combos {
			for _, raw := range a.Values {
				v, err := decode(raw)
				if err != nil {
					return nil, fmt.Errorf("spec.matrix axis %s: a value is %w", axisLabel(a), err)
				}
				nc := slices.Clone(c)
				for _, f := range axisFields(a) {
					nc = append(nc, Assignment{Field: f, Value: v, Label: axisLabel(a)})
				}
				next = append(next, nc)
			}
		}
		combos = next
	}
	for i, e := range m.Exclude {
		for k := range e {
			if !fields[k] && names[k] == nil {
				return nil, fmt.Errorf("spec.matrix.exclude[%d]: %s is neither an axis's field nor its name", i, k)
			}
		}
	}
	var points []Point
	seen := map[string]bool{}
	add := func(vals []Assignment) {
		key := canonical(vals)
		if seen[key] {
			return
		}
		seen[key] = true
		points = append(points, Point{Index: len(points), Values: vals})
	}
	for _, c := range combos {
		if !excluded(c, m.Exclude, names) {
			add(c)
		}
	}
	if len(points) == 0 && len(m.Include) == 0 {
		// A suite of no run would end at once with an empty suite.json and no report: refused
		// before anything starts, here, so `msgbench run` and the operator refuse it alike.
		if len(m.Exclude) > 0 {
			var entries []string
			for _, e := range m.Exclude {
				entries = append(entries, pointText(e))
			}
			which := fmt.Sprintf("its %d entries (%s) remove", len(entries), strings.Join(entries, ", "))
			if len(entries) == 1 {
				which = "its entry " + entries[0] + " removes"
			}
			return nil, fmt.Errorf("spec.matrix.exclude: %s every one of the %d points of the axes, and there is no include: the suite has nothing to run; remove an exclude entry, or add an axis value or an include",
				which, len(combos))
		}
		return nil, fmt.Errorf("spec.matrix: no point: the suite has nothing to run")
	}
	for i, inc := range m.Include {
		if len(inc) == 0 {
			return nil, fmt.Errorf("spec.matrix.include[%d]: empty: name the fields of the point to add", i)
		}
		var vals []Assignment
		for _, k := range sortedKeys(inc) {
			v, err := decode(inc[k])
			if err != nil {
				return nil, fmt.Errorf("spec.matrix.include[%d].%s: %w", i, k, err)
			}
			fs, label := names[k], k
			if fs == nil {
				fs, label = []string{k}, axisLabel(v1alpha1.MatrixAxis{Field: k})
			}
			for _, f := range fs {
				vals = append(vals, Assignment{Field: f, Value: v, Label: label})
			}
		}
		add(orderLike(vals, m.Axes))
	}
	nameCount := map[string]int{}
	for i := range points {
		points[i].Name = pointName(points[i].Values)
		nameCount[points[i].Name]++
	}
	for i := range points { // two points that print alike (1 and "1") keep apart by index
		if nameCount[points[i].Name] > 1 {
			points[i].Name = fmt.Sprintf("%s-p%d", points[i].Name, i)
		}
	}
	for _, p := range points {
		if _, err := Benchmark(s, template, p, 1); err != nil {
			return nil, err
		}
	}
	return points, nil
}

// Benchmark builds the MessagingBenchmark of repetition rep (1-based) of point p: the template
// (spec.template as stored: manifest.SuiteDoc's, or the API object's unstructured content; the
// typed spec drops explicit zero values whose default is not zero) with the point's values, named
// RunName, validated as the API server would.
func Benchmark(s *v1alpha1.MessagingBenchmarkSuite, template map[string]any, p Point, rep int) (*v1alpha1.MessagingBenchmark, error) {
	mb, _, err := benchmark(s, template, p, rep)
	return mb, err
}

// Label marks mb as run rep of point of suite name: the suite label and the point and repetition
// annotations, which the operator's runs carry and the live metrics' labels come from.
func Label(mb *v1alpha1.MessagingBenchmark, name, point string, rep int) {
	if mb.Labels == nil {
		mb.Labels = map[string]string{}
	}
	if mb.Annotations == nil {
		mb.Annotations = map[string]string{}
	}
	mb.Labels[v1alpha1.LabelSuite] = v1alpha1.LabelValue(name)
	mb.Annotations[v1alpha1.AnnotationPoint] = point
	mb.Annotations[v1alpha1.AnnotationRepetition] = strconv.Itoa(rep)
}

// Manifest is the manifest of Benchmark's run as a map, admitted (defaults applied): written
// out as YAML it is a MessagingBenchmark file `msgbench run -f` and `kubectl apply` take.
func Manifest(s *v1alpha1.MessagingBenchmarkSuite, template map[string]any, p Point, rep int) (map[string]any, error) {
	_, obj, err := benchmark(s, template, p, rep)
	return obj, err
}

func benchmark(s *v1alpha1.MessagingBenchmarkSuite, template map[string]any, p Point, rep int) (*v1alpha1.MessagingBenchmark, map[string]any, error) {
	spec := runtime.DeepCopyJSON(template)
	if spec == nil {
		spec = map[string]any{}
	}
	obj := map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": "MessagingBenchmark",
		"metadata": map[string]any{"name": RunName(s.Name, p, rep)},
		"spec":     spec,
	}
	for _, a := range p.Values {
		if err := manifest.SetValue(obj, append([]string{"spec"}, strings.Split(a.Field, ".")...), specValue(a)); err != nil {
			return nil, nil, fmt.Errorf("point %s: %w", p.Name, err)
		}
	}
	mb, err := manifest.ParseObject(obj)
	if err != nil {
		return nil, nil, fmt.Errorf("point %s (%s): %w", p.Name, describe(p), err)
	}
	mb.Namespace = s.Namespace
	return mb, obj, nil
}

// RunName is the name of repetition rep of point p: "<suite>-<point>-r<rep>", or
// "<suite>-p<index>-r<rep>" when that would be longer than a name may be.
func RunName(suite string, p Point, rep int) string {
	n := fmt.Sprintf("%s-%s-r%d", suite, p.Name, rep)
	if len(n) > 253 {
		n = fmt.Sprintf("%s-p%d-r%d", suite, p.Index, rep)
	}
	return n
}

func axisFields(a v1alpha1.MatrixAxis) []string {
	if a.Field != "" {
		return []string{a.Field}
	}
	return a.Fields
}

// axisLabel is the axis's name, or its (first) field's last element.
func axisLabel(a v1alpha1.MatrixAxis) string {
	if a.Name != "" {
		return a.Name
	}
	fs := axisFields(a)
	if len(fs) == 0 {
		return "axis"
	}
	parts := strings.Split(fs[0], ".")
	return parts[len(parts)-1]
}

// decode reads one JSON value; whole numbers stay integers (the spec's integer fields need them).
func decode(raw apiextensionsv1.JSON) (any, error) {
	if t := strings.TrimSpace(string(raw.Raw)); t == "" || t == "null" {
		return nil, fmt.Errorf("null; want a number, string or boolean")
	}
	d := json.NewDecoder(strings.NewReader(string(raw.Raw)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, nil
		}
		return x.Float64()
	case string, bool:
		return x, nil
	}
	return nil, fmt.Errorf("%s; want a number, string or boolean", raw.Raw)
}

// specValue is a's value as the spec field takes it: a string field keeps numbers as written
// ("2" for network.lossPercent: 2), as --set does.
func specValue(a Assignment) any {
	if manifest.FieldType(a.Field) == "string" {
		switch a.Value.(type) {
		case int64, float64, bool:
			return valueText(a.Value)
		}
	}
	return a.Value
}

func valueText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// canonical identifies a point by its values, whatever their order.
func canonical(vals []Assignment) string {
	var parts []string
	for _, a := range vals {
		parts = append(parts, a.Field+"="+valueText(a.Value))
	}
	slices.Sort(parts)
	return strings.Join(parts, "\x00")
}

// excluded reports whether c matches every field of one exclude entry (an axis name stands for
// its fields).
func excluded(c []Assignment, excludes []v1alpha1.MatrixPoint, names map[string][]string) bool {
	for _, e := range excludes {
		all := true
		for k, raw := range e {
			want, err := decode(raw)
			if err != nil {
				all = false
				break
			}
			fs := names[k]
			if fs == nil {
				fs = []string{k}
			}
			for _, f := range fs {
				i := slices.IndexFunc(c, func(a Assignment) bool { return a.Field == f })
				if i < 0 || valueText(c[i].Value) != valueText(want) {
					all = false
				}
			}
		}
		if all && len(e) > 0 {
			return true
		}
	}
	return false
}

// orderLike puts an include's values in the axes' order (fields on no axis last, by name), so
// its name reads like the product's points.
func orderLike(vals []Assignment, axes []v1alpha1.MatrixAxis) []Assignment {
	pos := func(f string) int {
		for i, a := range axes {
			if slices.Contains(axisFields(a), f) {
				return i
			}
		}
		return len(axes)
	}
	slices.SortStableFunc(vals, func(a, b Assignment) int { return pos(a.Field) - pos(b.Field) })
	return vals
}

var unsafe = regexp.MustCompile(`[^a-z0-9-]+`)

// pointName joins the point's values: a value that starts with a letter stands alone
// ("mqtt-sn", "lte"), any other follows its axis's name ("qos1", "clients16", "version1-2").
// The result is usable in Kubernetes names.
func pointName(vals []Assignment) string {
	var parts []string
	done := map[string]bool{}
	for _, a := range vals {
		if done[a.Label] { // an axis over several fields names itself once
			continue
		}
		done[a.Label] = true
		t := strings.ToLower(valueText(a.Value))
		if t == "" || t[0] < 'a' || t[0] > 'z' || t == "true" || t == "false" {
			t = strings.ToLower(a.Label) + t
		}
		parts = append(parts, strings.Trim(unsafe.ReplaceAllString(strings.ReplaceAll(t, ".", "-"), "-"), "-"))
	}
	if len(parts) == 0 {
		return "template"
	}
	return strings.Join(parts, "-")
}

// describe is "qos=1, workload.publishers=16".
func describe(p Point) string {
	var parts []string
	for _, a := range p.Values {
		parts = append(parts, a.Field+"="+valueText(a.Value))
	}
	if len(parts) == 0 {
		return "the template"
	}
	return strings.Join(parts, ", ")
}

// pointText is an exclude or include entry as written in YAML: "{protocol: http, qos: 2}".
func pointText(e v1alpha1.MatrixPoint) string {
	var parts []string
	for _, k := range sortedKeys(e) {
		t := string(e[k].Raw)
		if v, err := decode(e[k]); err == nil {
			t = valueText(v)
		}
		parts = append(parts, k+": "+t)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func sortedKeys(m v1alpha1.MatrixPoint) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Run is one run of the suite: repetition Repetition (1-based) of point Point.
type Run struct {
	Point      int
	Repetition int
}

// Schedule is the order of the suite's runs: sequential runs every repetition of a point before
// the next point; interleaved runs every point once per round, each round in an order shuffled
// with seed (round r uses the PCG stream (seed, r), so the order is repeatable from the seed).
func Schedule(points, repetitions int, order v1alpha1.SuiteOrder, seed int64) []Run {
	var runs []Run
	if order != v1alpha1.OrderInterleaved {
		for p := 0; p < points; p++ {
			for r := 1; r <= repetitions; r++ {
				runs = append(runs, Run{Point: p, Repetition: r})
			}
		}
		return runs
	}
	for r := 1; r <= repetitions; r++ {
		perm := make([]int, points)
		for i := range perm {
			perm[i] = i
		}
		rng := rand.New(rand.NewPCG(uint64(seed), uint64(r)))
		rng.Shuffle(points, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		for _, p := range perm {
			runs = append(runs, Run{Point: p, Repetition: r})
		}
	}
	return runs
}
