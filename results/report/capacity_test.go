package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/suite"
)

// searched runs a capacity search over workload.rate to its end against a synthetic system,
// with the suite's own search (suite.Search.Next) and summary (suite.SummarizeSearchSuite):
// what `msgbench run` would write to suite.json, without running anything. measure is the
// system at a rate: its run's outcome and whether the trial passed (and why not).
func searched(t *testing.T, spec v1alpha1.SuiteSearch, measure func(rate int64) (suite.RunOutcome, []string)) *suite.Document {
	t.Helper()
	s := &v1alpha1.MessagingBenchmarkSuite{Spec: v1alpha1.MessagingBenchmarkSuiteSpec{Search: &spec, Objectives: []string{"latency.endToEnd.p99 < 20ms", "lostPercent == 0"}}}
	s.Name = "cap"
	x := suite.NewSearch(&spec)
	var steps []suite.Step
	outcomes := map[string]suite.RunOutcome{}
	for range 100 {
		d := x.Next(steps, 0)
		if d.Done {
			return suite.SummarizeSearchSuite(s, x, steps, outcomes, d, "local", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
		}
		if d.Trial == 1 {
			steps = append(steps, suite.Step{Index: d.Step, Value: d.Value, Kind: d.Kind})
		}
		o, reasons := measure(d.Value)
		o.Name = suite.SearchRunName(s.Name, d.Step, d.Trial)
		if o.Result != nil {
			o.Result.Name = o.Name
		}
		outcomes[o.Name] = o
		st := &steps[len(steps)-1]
		st.Trials = append(st.Trials, suite.Trial{Run: o.Name, Passed: len(reasons) == 0, Reasons: reasons})
	}
	t.Fatal("the search did not end in 100 trials")
	return nil
}

// broker1250 is a system that carries 1250 msg/s: below it every message arrives within a few
// milliseconds, above it the backlog grows (p99 in seconds) and messages are lost; at 1600 msg/s
// and beyond the publishers cannot send what is asked and the run fails.
func broker1250(rate int64) (suite.RunOutcome, []string) {
	if rate >= 1600 {
		return suite.RunOutcome{Phase: "Failed", Message: fmt.Sprintf("messages could not be sent: workload.rate=%d", rate)},
			[]string{fmt.Sprintf("the run Failed: messages could not be sent: workload.rate=%d", rate)}
	}
	v := float64(rate)
	recv := math.Min(v, 1260)
	load := math.Min(v/1250, 1.2)
	p99 := 1500 + 4000*load*load // µs
	if v > 1250 {
		p99 = 2e6 * (v - 1250) / 50
	}
	r := measured(recv, recv*64, 2000, 3000, 80)
	r.Throughput.OfferedPerSecond, r.Throughput.SentPerSecond = v, v
	r.Sent, r.Expected = int64(v*10), int64(v*10)
	lost := int64((v - recv) * 10)
	r.Lost = &lost
	r.Latency.EndToEnd.P50Micros, r.Latency.EndToEnd.P99Micros = int64(p99/3), int64(p99)
	o := suite.RunOutcome{Phase: "Succeeded", Result: r}
	var reasons []string
	if p99 >= 20000 {
		reasons = append(reasons, fmt.Sprintf("latency.endToEnd.p99 < 20ms: %.0f ms", p99/1000))
	}
	if lost > 0 {
		reasons = append(reasons, fmt.Sprintf("lostPercent == 0: %.2f %%", float64(lost)/(v*10)*100))
	}
	return o, reasons
}

func found(t *testing.T) *suite.Document {
	t.Helper()
	doc := searched(t, v1alpha1.SuiteSearch{Field: "workload.rate", Min: 100, Max: 10000, Trials: 2}, broker1250)
	sr := doc.Search
	if sr == nil || sr.Outcome != v1alpha1.SearchFound || sr.Capacity == nil || sr.LastPass == nil || sr.FirstFail == nil || sr.Knee == nil {
		t.Fatalf("the synthetic search did not find a capacity with a knee: %+v", sr)
	}
	return doc
}

// svgTexts are the texts an SVG draws.
func svgTexts(svg []byte) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<text[^>]*>([^<]*)</text>`).FindAllSubmatch(svg, -1) {
		out = append(out, string(m[1]))
	}
	return out
}

// marks counts a panel's series' values by verdict.
func marks(s Series) (passed, failed int) {
	for _, v := range s.Values {
		switch v.Verdict {
		case VerdictPassed:
			passed++
		case VerdictFailed:
			failed++
		}
	}
	return passed, failed
}

// TestCapacityCurveLeadsASearch: a search's report leads with the capacity curve — throughput
// against the load offered, latency (log: it spans more than 10×) and loss, sharing the scaled
// field as the horizontal — with every value of the curve marked passed or failed (a cross when
// nothing was measured), the capacity a labelled line, the bracket shaded and named, the knee
// marked; the page carries the steps table and the outcome line.
func TestCapacityCurveIsASearchsFigure(t *testing.T) {
	doc := found(t)
	sr := doc.Search
	figs, err := Figures(FromSuite(doc))
	if err != nil {
		t.Fatal(err)
	}
	f := figs[0]
	if f.ID != CapacityID || !f.Study || f.XLabel != "workload.rate" {
		t.Fatalf("first figure %q (study %v, x %q), want %s by workload.rate, the study's figure", f.ID, f.Study, f.XLabel, CapacityID)
	}
	if len(figs) != 1 {
		t.Errorf("%d figures: a search shows its curve alone (the steps as points would draw a confirmed value twice)", len(figs))
	}
	if len(f.Panels) != 3 {
		t.Fatalf("%d panels, want throughput, latency and loss", len(f.Panels))
	}
	byLabel := func(p *Figure) map[string]Series {
		m := map[string]Series{}
		for _, s := range p.Series {
			m[s.Label] = s
		}
		return m
	}
	top, lat, loss := byLabel(f.Panels[0]), byLabel(f.Panels[1]), byLabel(f.Panels[2])
	if !top["offered"].Reference || len(top["offered"].Values) == 0 {
		t.Error("no offered reference line in the throughput panel")
	}
	for _, v := range top["offered"].Values {
		if v.Y != v.X {
			t.Errorf("offered %g at workload.rate %g: the reference is y = x", v.Y, v.X)
		}
	}
	if !f.Panels[1].LogY {
		t.Error("latency from ms to seconds drawn on a linear scale")
	}
	// Every value of the curve is marked once per series: passed, failed, or a cross.
	wantPass, wantFail, unmeasured := 0, 0, 0
	for _, c := range sr.Curve {
		switch {
		case c.ReceivedPerSecond == nil:
			unmeasured++
		case c.Passed:
			wantPass++
		default:
			wantFail++
		}
	}
	if unmeasured == 0 || wantFail == 0 || wantPass == 0 {
		t.Fatalf("the synthetic curve should have passes (%d), measured fails (%d) and a fail with nothing measured (%d)", wantPass, wantFail, unmeasured)
	}
	for _, s := range []Series{top["received"], top["sent"], lat["end-to-end p50"], lat["end-to-end p99"], loss["lost"]} {
		if p, fl := marks(s); p != wantPass || fl != wantFail {
			t.Errorf("series %s: %d passed and %d failed marks, want %d and %d", s.Label, p, fl, wantPass, wantFail)
		}
	}
	for i, p := range f.Panels {
		if len(p.Unmeasured) != unmeasured {
			t.Errorf("panel %d: %d crosses, want %d", i, len(p.Unmeasured), unmeasured)
		}
		if ps, fl := marks(p.Series[0]); ps+fl+len(p.Unmeasured) != len(sr.Curve) {
			t.Errorf("panel %d marks %d of the curve's %d values", i, ps+fl+len(p.Unmeasured), len(sr.Curve))
		}
	}
	svg, err := f.Render("svg")
	if err != nil {
		t.Fatal(err)
	}
	texts := strings.Join(svgTexts(svg), "\n")
	capacity := fmt.Sprintf("capacity %d", *sr.Capacity)
	bracket := fmt.Sprintf("bracket %d–%d", *sr.LastPass, *sr.FirstFail)
	for _, want := range []string{capacity, bracket, "knee", "passed", "failed", "failed, nothing measured", "workload.rate", "offered", "end-to-end p99", "messages lost (%)"} {
		if !strings.Contains(texts, want) {
			t.Errorf("the SVG has no %q; its texts:\n%s", want, texts)
		}
	}
	if n := strings.Count(texts, capacity); n != 1 {
		t.Errorf("%q drawn %d times, want once (on the top panel)", capacity, n)
	}
	every := *f // the panels' legends, each beside its panel, inside the figure
	for _, p := range f.Panels {
		every.Series = append(every.Series, p.Series...)
	}
	fitsItsLegend(t, &every)
	for _, format := range []string{"png", "pdf"} {
		if b, err := f.Render(format); err != nil || len(b) == 0 {
			t.Errorf("%s: %v", format, err)
		}
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, FromSuite(doc), nil); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	line := fmt.Sprintf("Found: capacity %d (bracket %d–%d, %.1f %% wide, 5 %% asked), %d runs", *sr.Capacity, *sr.LastPass, *sr.FirstFail, *sr.WidthPercent, sr.Runs)
	for _, want := range []string{line, `id="search-steps"`, "confirm", "bisect", "probe", "lostPercent == 0", "messages could not be sent", capacity, "knee"} {
		if !strings.Contains(html, want) {
			t.Errorf("the page has no %q", want)
		}
	}
	if strings.Count(html, "<figure id=") != 1 || !strings.Contains(html, `<figure id="`+CapacityID+`"`) {
		t.Error("the page's one figure is not the capacity curve")
	}
	rows := regexp.MustCompile(`(?s)<table id="search-steps">(.*?)</table>`).FindStringSubmatch(html)
	if rows == nil || strings.Count(rows[1], "<tr>")-1 != len(sr.Steps) {
		t.Errorf("the steps table does not have a row per step (%d)", len(sr.Steps))
	}
	if dir := os.Getenv("CAPACITY_REPORT"); dir != "" { // a page to look at
		if _, err := WriteFiles(dir, FromSuite(doc), Options{Images: true}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCapacityCSVIsTheCurve: the capacity figure's CSV is the curve, one row per value, with
// every figure plotted and the backlog trend.
func TestCapacityCSVIsTheCurve(t *testing.T) {
	doc := found(t)
	dir := t.TempDir()
	files, err := WriteFiles(dir, FromSuite(doc), Options{})
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, CapacityID+".csv")
	found := false
	for _, f := range files {
		found = found || f == name
	}
	if !found {
		t.Fatalf("no %s among %q", name, files)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"workload.rate", "passed", "offered (msg/s)", "sent (msg/s)", "received (msg/s)", "end-to-end latency p50 (ms)",
		"end-to-end latency p99 (ms)", "lost (%)", "backlog (ms/s)"}
	if strings.Join(rows[0], ",") != strings.Join(want, ",") {
		t.Errorf("header %q, want %q", rows[0], want)
	}
	if len(rows)-1 != len(doc.Search.Curve) {
		t.Fatalf("%d rows, want one per curve point (%d)", len(rows)-1, len(doc.Search.Curve))
	}
	for i, c := range doc.Search.Curve {
		row := rows[i+1]
		if row[0] != fmt.Sprint(c.Value) || row[1] != fmt.Sprint(c.Passed) {
			t.Errorf("row %d: %q, want value %d passed %v", i+1, row, c.Value, c.Passed)
		}
		if c.LatencyP99Micros != nil && row[6] != num(*c.LatencyP99Micros/1000) {
			t.Errorf("row %d: p99 %q ms, want %g µs in ms", i+1, row[6], *c.LatencyP99Micros)
		}
		if c.ReceivedPerSecond == nil && strings.Join(row[2:], "") != "" {
			t.Errorf("row %d: figures %q for a value at which nothing was measured", i+1, row[2:])
		}
	}
}

// TestCapacityBelowRangeSaysSo: a search that failed at its lower bound states no capacity: the
// figure draws no capacity line and its caption, like the page, says the outcome and why.
func TestCapacityBelowRangeSaysSo(t *testing.T) {
	doc := searched(t, v1alpha1.SuiteSearch{Field: "workload.rate", Min: 1400, Max: 10000}, broker1250)
	sr := doc.Search
	if sr.Outcome != v1alpha1.SearchBelowRange || sr.Capacity != nil {
		t.Fatalf("outcome %s, capacity %v: want BelowRange without one", sr.Outcome, sr.Capacity)
	}
	figs, err := Figures(FromSuite(doc))
	if err != nil {
		t.Fatal(err)
	}
	f := figs[0]
	if f.ID != CapacityID {
		t.Fatalf("first figure %s", f.ID)
	}
	for i, p := range f.Panels {
		if len(p.Lines) != 0 || len(p.Bands) != 0 {
			t.Errorf("panel %d draws a capacity %v or a bracket %v", i, p.Lines, p.Bands)
		}
	}
	if !strings.HasPrefix(f.Caption, "BelowRange: no capacity (first fail 1400, no pass), 1 run.") || !strings.Contains(f.Caption, "no value in the range meets the objectives") {
		t.Errorf("caption %q does not say the outcome and its message first", f.Caption)
	}
	svg, err := f.Render("svg")
	if err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(svg)
	for _, text := range texts {
		if regexp.MustCompile(`capacity \d|bracket \d`).MatchString(text) || text == "passed" {
			t.Errorf("the SVG draws %q for a search without a capacity or a pass", text)
		}
	}
	if !strings.Contains(strings.Join(texts, "\n"), "Capacity curve by workload.rate (BelowRange: no capacity)") {
		t.Errorf("the figure's title does not say the outcome: %q", texts)
	}
	if p, fl := marks(f.Panels[0].Series[0]); p != 0 || fl != len(sr.Curve) {
		t.Errorf("%d passed and %d failed marks, want %d failed", p, fl, len(sr.Curve))
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, FromSuite(doc), nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `<p id="search-outcome" class="caveat"><strong>BelowRange: no capacity`) {
		t.Error("the page does not head the search with its outcome")
	}
}

// TestCapacityWithoutMeasurements: a search whose every run failed before it measured still
// draws its values, as crosses on the axis, and the other outcomes' lines read as they should.
func TestCapacityWithoutMeasurements(t *testing.T) {
	doc := searched(t, v1alpha1.SuiteSearch{Field: "workload.rate", Min: 2000, Max: 10000}, broker1250)
	f := CapacityFigure(doc.Search)
	if f == nil || len(f.Panels) != 1 || len(f.Panels[0].Series) != 0 || len(f.Panels[0].Unmeasured) != 1 {
		t.Fatalf("figure %+v, want one panel with one cross", f)
	}
	if _, err := f.Render("svg"); err != nil {
		t.Fatal(err)
	}
	if CapacityFigure(&suite.SearchResult{Outcome: v1alpha1.SearchSearching}) != nil {
		t.Error("a figure for a search with no decided step")
	}
	above := searched(t, v1alpha1.SuiteSearch{Field: "workload.rate", Min: 100, Max: 800}, broker1250).Search
	if got := SearchOutcomeLine(above); got != fmt.Sprintf("AboveRange: no capacity (last pass 800, no fail), %d runs", above.Runs) {
		t.Errorf("AboveRange line %q", got)
	}
	lp, ff, w := int64(1200), int64(1400), 16.67
	capped := &suite.SearchResult{Outcome: v1alpha1.SearchCapped, Capacity: &lp, LastPass: &lp, FirstFail: &ff, WidthPercent: &w, PrecisionPercent: 5, Runs: 1}
	if got := SearchOutcomeLine(capped); got != "Capped: capacity 1200 (bracket 1200–1400, 16.7 % wide, 5 % asked), 1 run" {
		t.Errorf("Capped line %q", got)
	}
}
