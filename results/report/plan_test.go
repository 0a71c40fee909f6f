package report

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/suite"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// axis is one matrix axis of a synthetic suite: fields that take the values together.
type axis struct {
	fields []string
	values []string
}

// synthetic builds a suite document over the product of the axes, reps repetitions per point,
// each run's result computed by measure from the point's values: what a real suite's runs leave,
// without running them.
func synthetic(axes []axis, reps int, measure func(v map[string]string, rep int) *results.Result) *suite.Document {
	doc := &suite.Document{SchemaVersion: suite.SchemaVersion, Name: "s", Verdict: suite.VerdictNone}
	doc.Spec.Repetitions = int32(reps)
	for _, a := range axes {
		ma := v1alpha1.MatrixAxis{Field: a.fields[0]}
		if len(a.fields) > 1 {
			ma = v1alpha1.MatrixAxis{Fields: a.fields}
		}
		doc.Spec.Matrix.Axes = append(doc.Spec.Matrix.Axes, ma)
	}
	combos := []map[string]string{{}}
	for _, a := range axes {
		var next []map[string]string
		for _, c := range combos {
			for _, v := range a.values {
				m := map[string]string{}
				for k, w := range c {
					m[k] = w
				}
				for _, f := range a.fields {
					m[f] = v
				}
				next = append(next, m)
			}
		}
		combos = next
	}
	for i, c := range combos {
		p := suite.PointResult{Name: fmt.Sprintf("p%d", i), Values: c}
		for rep := 1; rep <= reps; rep++ {
			r := measure(c, rep)
			r.Name = fmt.Sprintf("s-p%d-r%d", i, rep)
			p.Runs = append(p.Runs, suite.RunEntry{Repetition: rep, RunOutcome: suite.RunOutcome{Name: r.Name, Phase: r.Phase, Message: r.Message, Result: r}})
		}
		doc.Points = append(doc.Points, p)
	}
	return doc
}

// measured is a succeeded result with the given figures: rates, latencies (µs) and wire bytes.
func measured(received, payloadRate float64, connectMicros, firstMicros int64, wire float64) *results.Result {
	r := &results.Result{Phase: "Succeeded", MeasuredSeconds: 10, Received: int64(received * 10), Expected: int64(received * 10), Sent: int64(received * 10),
		Spec: &v1alpha1.MessagingBenchmarkSpec{Workload: v1alpha1.WorkloadSpec{Publishers: 1, Subscribers: 1, Topics: 1, PayloadBytes: 64}}}
	lost := int64(0)
	r.Lost = &lost
	r.Throughput.ReceivedPerSecond, r.Throughput.SentPerSecond, r.Throughput.ReceivedBytesPerSecond = received, received, payloadRate
	lat := func(us int64) *results.LatencySummary {
		return &results.LatencySummary{Count: 100, MinMicros: us / 2, MeanMicros: float64(us), P50Micros: us, P90Micros: us, P95Micros: us, P99Micros: us * 2, P999Micros: us * 2, MaxMicros: us * 3}
	}
	r.Latency.EndToEnd, r.Latency.Connect, r.Latency.FirstMessage = lat(firstMicros/2), lat(connectMicros), lat(firstMicros)
	r.Wire.BytesPerMessage = &wire
	r.ReceivedInWindow, r.Wire.BytesDuringWindow = r.Received, int64(wire*received*10)
	return r
}

func atoi(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }

// TestPlanChoosesEachStudysFigure: the figure a suite is about follows from its axes — the five
// reference studies' axes give their five figures, and categories alone give bars.
func TestPlanChoosesEachStudysFigure(t *testing.T) {
	clients := axis{[]string{"workload.publishers", "workload.subscribers", "workload.topics"}, []string{"1", "16", "4", "64"}}
	plain := func(v map[string]string, rep int) *results.Result {
		return measured(100*atoi(v["workload.publishers"])+1, 1000, 2000, 3000, 80)
	}
	cases := []struct {
		name                  string
		axes                  []axis
		y, x, colour, dash    string
		facets, timelineFacet int
	}{
		{"DICOMO 2017: messages handled by clients per protocol and QoS",
			[]axis{{[]string{"protocol"}, []string{"mqtt", "mqtt-sn", "http"}}, {[]string{"qos"}, []string{"0", "1", "2"}}, clients},
			"throughput.receivedPerSecond", "workload.publishers", "protocol", "qos", 1, 0},
		{"EMQX: connect latency by RTT per protocol",
			[]axis{{[]string{"protocol"}, []string{"mqtt-quic", "mqtt"}}, {[]string{"network.delay"}, []string{"500us", "5ms", "15ms"}}},
			"latency.connect.p95", "network.delay", "protocol", "", 1, 0},
		{"HTTP/3 vs MQTT over QUIC: time to first message by payload",
			[]axis{{[]string{"protocol"}, []string{"mqtt-quic", "http"}}, {[]string{"workload.payloadBytes"}, []string{"1024", "2048", "5120", "10240"}}},
			"latency.firstMessage.p50", "workload.payloadBytes", "protocol", "", 1, 0},
		{"SINETStream: reader byte rate by threads per network, protocol, a figure per payload",
			[]axis{{[]string{"network.profile"}, []string{"5g-sa", "lte"}}, {[]string{"protocol", "broker.type"}, []string{"kafka", "mqtt"}},
				{[]string{"workload.payloadBytes"}, []string{"1024", "10240", "102400"}}, clients},
			"throughput.receivedBytesPerSecond", "workload.publishers", "protocol", "network.profile", 3, 0},
		{"IPSJ 2022: wire bytes per second of MQTT vs MQTTS per QoS, a figure per payload",
			[]axis{{[]string{"tls.enabled"}, []string{"false", "true"}}, {[]string{"workload.payloadBytes"}, []string{"2", "2000"}},
				{[]string{"workload.publishers", "workload.rate"}, []string{"1", "4"}}, {[]string{"qos"}, []string{"0", "1", "2"}}},
			"wire.bytesPerSecond", "workload.publishers", "tls.enabled", "qos", 2, 0},
		{"TLS versions are categories, not a quantity",
			[]axis{{[]string{"protocol"}, []string{"mqtt", "http"}}, {[]string{"tls.version"}, []string{"1.2", "1.3"}}},
			"throughput.receivedPerSecond", "", "protocol", "tls.version", 1, 0},
		{"another numeric field is a horizontal",
			[]axis{{[]string{"qos"}, []string{"1", "2"}}, {[]string{"mqtt.inflight"}, []string{"1", "10", "100"}}},
			"throughput.receivedPerSecond", "mqtt.inflight", "qos", "", 1, 0},
		{"categories only: bars per protocol, a bar per QoS",
			[]axis{{[]string{"protocol"}, []string{"mqtt", "http"}}, {[]string{"qos"}, []string{"0", "1"}}},
			"throughput.receivedPerSecond", "", "protocol", "qos", 1, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := FromSuite(synthetic(tc.axes, 1, plain))
			specs := Plan(d)
			if len(specs) == 0 {
				t.Fatal("no figure planned")
			}
			first := specs[0]
			if !first.Study || first.Y != tc.y {
				t.Errorf("study figure %s (study %v), want %s", first.Y, first.Study, tc.y)
			}
			field := func(a *Axis) string {
				if a == nil {
					return ""
				}
				return a.Field()
			}
			if field(first.X) != tc.x || field(first.Colour) != tc.colour || field(first.Dash) != tc.dash {
				t.Errorf("x %q colour %q dash %q, want %q %q %q", field(first.X), field(first.Colour), field(first.Dash), tc.x, tc.colour, tc.dash)
			}
			facets := map[string]bool{}
			studies := 0
			for _, s := range specs {
				facets[s.FacetLabel] = true
				if s.Study {
					studies++
				}
			}
			if len(facets) != tc.facets || studies != 1 {
				t.Errorf("%d facets (%v) and %d study figures, want %d and 1", len(facets), facets, studies, tc.facets)
			}
		})
	}
}

// TestFigureData checks what a figure plots: numeric axes in numeric order (1, 4, 16, 64, not
// as text), latencies in ms, CI error bars from repetitions, failed runs left out, one series
// per category with distinct styles.
func TestFigureData(t *testing.T) {
	doc := synthetic([]axis{{[]string{"qos"}, []string{"0", "1"}}, {[]string{"workload.publishers", "workload.subscribers"}, []string{"1", "16", "4", "64"}}}, 3,
		func(v map[string]string, rep int) *results.Result {
			n := atoi(v["workload.publishers"])
			r := measured(1000*n+float64(rep), 0, int64(1500*n), 3000, 80)
			if v["qos"] == "1" && n == 64 && rep == 3 {
				r.Phase, r.Message = "Failed", "broker gone"
			}
			return r
		})
	d := FromSuite(doc)
	if len(d.Failed) != 1 || d.Failed[0].Message != "broker gone" {
		t.Fatalf("failed runs %+v, want the one that failed", d.Failed)
	}
	f, err := Build(d, FigureSpec{ID: "t", Y: "throughput.receivedPerSecond", X: d.Axes[1], Colour: d.Axes[0]})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Series) != 2 || f.Series[0].Label != "QoS 0" || f.Series[1].Label != "QoS 1" || f.Series[0].Colour == f.Series[1].Colour {
		t.Fatalf("series %+v, want QoS 0 and QoS 1 in two colours", f.Series)
	}
	var xs []float64
	for _, v := range f.Series[0].Values {
		xs = append(xs, v.X)
	}
	if fmt.Sprint(xs) != "[1 4 16 64]" {
		t.Errorf("x values %v, want 1 4 16 64 in numeric order", xs)
	}
	v := f.Series[0].Values[0] // QoS 0, 1 client: 1001, 1002, 1003
	if v.Y != 1002 || v.N != 3 || math.Abs(v.CI95-2.4841) > 1e-3 {
		t.Errorf("QoS 0, 1 client: %+v, want mean 1002 ± 2.484 (t(0.975, 2) × 1/√3) over 3 runs", v)
	}
	last := f.Series[1].Values[3] // QoS 1, 64 clients: its failed third run left out
	if last.N != 2 || last.Y != 64001.5 {
		t.Errorf("QoS 1, 64 clients: %+v, want the mean of the 2 runs that succeeded", last)
	}
	if !f.LogX || len(f.XTicks) != 4 || f.XTicks[2].Label != "16" {
		t.Errorf("log x %v ticks %+v: 1–64 spans 64×, ticks at the values measured", f.LogX, f.XTicks)
	}
	if !strings.Contains(f.Caption, "1 failed runs are not plotted") {
		t.Errorf("caption %q does not say a run is left out", f.Caption)
	}

	lat, err := Build(d, FigureSpec{ID: "c", Y: "latency.connect.p50", X: d.Axes[1], Colour: d.Axes[0]})
	if err != nil {
		t.Fatal(err)
	}
	if lat.YLabel != "connect latency p50 (ms)" || lat.Series[0].Values[0].Y != 1.5 {
		t.Errorf("latency figure %q first value %v, want ms (1500 µs = 1.5 ms)", lat.YLabel, lat.Series[0].Values[0].Y)
	}

	p, _, err := f.plot()
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Min != 0 || p.Y.Max < 64003 {
		t.Errorf("y axis %v–%v: a rate starts at zero and the largest value with its CI fits", p.Y.Min, p.Y.Max)
	}
	var labels []string
	for _, tk := range (siTicks{}).Ticks(0, 28e6) {
		labels = append(labels, tk.Label)
	}
	if got := strings.Join(labels, " "); got != "0 5M 10M 15M 20M 25M" {
		t.Errorf("ticks for 0–28M: %s", got)
	}
	for in, want := range map[float64]string{28000000: "28M", 1500: "1.5k", 0.25: "0.25", 0.1 + 0.2: "0.3", 999: "999", 2.5e9: "2.5G"} {
		if got := si(in); got != want {
			t.Errorf("si(%v) = %s, want %s", in, got, want)
		}
	}
}

// TestTimelineLeavesOutTheDrain: the intervals after the measured window (the drain) are not
// drawn as a drop to zero.
func TestTimelineLeavesOutTheDrain(t *testing.T) {
	r := measured(2000, 0, 1, 1, 1)
	r.MeasuredSeconds = 3
	r.Timeline = []results.TimelinePoint{{T: 1, Sent: 2000, Received: 2000}, {T: 2, Sent: 2000, Received: 2000}, {T: 3, Sent: 2000, Received: 1999}, {T: 4, Received: 1}}
	f := throughputFigure(r)
	if len(f.Series[1].Values) != 3 {
		t.Errorf("received over time %+v: the drain second is plotted", f.Series[1].Values)
	}
	p, _, err := f.plot()
	if err != nil {
		t.Fatal(err)
	}
	if p.Y.Min != 0 {
		t.Errorf("y axis from %v: 1,999 to 2,001 msg/s would look like a spike", p.Y.Min)
	}
}

// TestGoldenCSV: a figure's CSV is what R or pandas read; its form is fixed by a golden file
// (go test ./results/report -run GoldenCSV -update rewrites it).
func TestGoldenCSV(t *testing.T) {
	doc := synthetic([]axis{{[]string{"protocol"}, []string{"mqtt", "http"}}, {[]string{"workload.payloadBytes"}, []string{"1024", "10240"}}}, 2,
		func(v map[string]string, rep int) *results.Result {
			r := measured(10, 0, 1000, int64(atoi(v["workload.payloadBytes"]))+int64(rep)*100, 1)
			if v["protocol"] == "http" {
				r.Latency.FirstMessage.P50Micros /= 2
			}
			return r
		})
	d := FromSuite(doc)
	specs := Plan(d)
	f, err := Build(d, specs[0])
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", f.ID+".csv")
	if *update {
		if err := os.WriteFile(golden, f.CSV(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(f.CSV()) != string(want) {
		t.Errorf("CSV of %s:\n%s\nwant (%s):\n%s", f.ID, f.CSV(), golden, want)
	}
}

// TestRenderFormats: every format renders, with the page's font family and no serif.
func TestRenderFormats(t *testing.T) {
	d := FromSuite(synthetic([]axis{{[]string{"protocol"}, []string{"mqtt", "http"}}}, 2, func(v map[string]string, rep int) *results.Result {
		return measured(float64(100*rep), 0, 1000, 1000, 50)
	}))
	figs, err := Figures(d)
	if err != nil || len(figs) == 0 {
		t.Fatalf("%d figures, %v", len(figs), err)
	}
	for format, magic := range map[string]string{"svg": "<svg", "png": "\x89PNG", "pdf": "%PDF"} {
		data, err := figs[0].Render(format)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data[:min(len(data), 400)]), magic) {
			t.Errorf("%s does not start like one: %q", format, data[:min(len(data), 20)])
		}
		if format == "svg" && (strings.Contains(string(data), "Serif") || !strings.Contains(string(data), "Liberation Sans")) {
			t.Error("SVG text is not in the page's font family")
		}
		// Publishers (IEEE PDF eXpress, ACM) refuse PDFs whose fonts are not embedded.
		if format == "pdf" && (!strings.Contains(string(data), "/FontFile2") || !strings.Contains(string(data), "LiberationSans")) {
			t.Error("the PDF does not embed Liberation Sans")
		}
	}
	untitled := *figs[0]
	untitled.Title = ""
	if svg, err := untitled.Render("svg"); err != nil || strings.Contains(string(svg), figs[0].Title) {
		t.Errorf("--no-titles: the title %q is still drawn (%v)", figs[0].Title, err)
	}
	if _, err := figs[0].Render("gif"); err == nil {
		t.Error("an unknown format rendered")
	}
}

// TestLooseRunsInNumericOrder: runs compared without a suite are ordered by their values as
// numbers — clients 1, 4, 16 — not by name as text (clients1, clients16, clients4).
func TestLooseRunsInNumericOrder(t *testing.T) {
	var rs []*results.Result
	for _, n := range []int32{1, 16, 4} {
		r := measured(float64(n), 0, 1, 1, 1)
		r.Name = fmt.Sprintf("clients%d", n)
		r.Spec.Workload.Publishers, r.Spec.Workload.Subscribers = n, n
		rs = append(rs, r)
	}
	d := FromResults(rs)
	var names []string
	for _, p := range d.Points {
		names = append(names, p.Name)
	}
	if got := strings.Join(names, " "); got != "clients1 clients4 clients16" {
		t.Errorf("points %s", got)
	}
	if len(d.Axes) != 1 || strings.Join(d.Axes[0].Fields, ",") != "workload.publishers,workload.subscribers" || strings.Join(d.Axes[0].Values, ",") != "1,4,16" {
		t.Errorf("axes %+v: publishers and subscribers vary together, numerically", d.Axes[0])
	}
}

// TestThroughputMarksNetworkSteps: the steps of spec.network.timeline are drawn where they took
// effect on the throughput timeline, numbered, and named in the caption.
func TestThroughputMarksNetworkSteps(t *testing.T) {
	r := measured(20, 0, 1, 1, 1)
	r.MeasuredSeconds = 4
	r.Timeline = []results.TimelinePoint{{T: 1, Sent: 20, Received: 20}, {T: 2, Sent: 20, Received: 0}, {T: 3, Sent: 20, Received: 40}, {T: 4, Sent: 20, Received: 20}}
	zero := 0
	r.SetNetworkTimeline([]results.NetworkStepMark{{At: 1.002, Planned: 1, Step: &zero, Description: "outage"},
		{At: 1.8, Planned: 1.8, Description: "end of timeline[0]: back to spec.network"}})
	f := throughputFigure(r)
	if len(f.Marks) != 2 || f.Marks[0].Value != 1.002 || f.Marks[1].Label != "2" {
		t.Fatalf("marks %+v", f.Marks)
	}
	if !strings.Contains(f.Caption, "(1) 1.00 s outage; (2) 1.80 s end of timeline[0]: back to spec.network") {
		t.Errorf("caption %q does not name the steps", f.Caption)
	}
	svg, err := f.Render("svg")
	if err != nil {
		t.Fatal(err)
	}
	without := *f
	without.Marks = nil
	plain, err := without.Render("svg")
	if err != nil {
		t.Fatal(err)
	}
	// Each mark adds a dotted line and its label to the drawing.
	if strings.Count(string(svg), "<path") < strings.Count(string(plain), "<path")+2 {
		t.Errorf("the marks are not drawn: %d paths with them, %d without", strings.Count(string(svg), "<path"), strings.Count(string(plain), "<path"))
	}
}
