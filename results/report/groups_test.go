package report_test

import (
	"html"
	"strings"
	"testing"

	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/results/report"
)

func count(v int64) *int64 { return &v }

func lat(p50, p99 int64) *results.LatencySummary {
	return &results.LatencySummary{Count: 100, MinMicros: p50 / 2, P50Micros: p50, P90Micros: p99 * 3 / 4, P95Micros: p99 * 9 / 10, P99Micros: p99, P999Micros: p99 * 2, MaxMicros: p99 * 3}
}

// groupsRun is a run of two publishing groups and two subscribing groups: sensors to backend
// (losing 2 and duplicating 1) and to audit, alarms to backend only.
func groupsRun(t *testing.T) *results.Result {
	t.Helper()
	mb, err := manifest.ReadFile("../../config/samples/fleets/telemetry-fan-in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := &results.Result{APIVersion: results.APIVersion, Kind: results.Kind, Name: "fan-in", Phase: "Succeeded", Spec: &mb.Spec, MeasuredSeconds: 30,
		Environment: results.Environment{Protocol: "MQTT 5.0", Broker: "mosquitto 2.0.11"}, Sent: 6100, Received: 12098, Expected: 12100, Lost: count(2), Duplicates: count(1)}
	r.Groups = []results.GroupResult{
		{Name: "sensors", Protocol: "MQTT 5.0", QoS: 1, Publishers: 2000, Sent: 6000, Acked: 6000,
			Latency: results.Latencies{PublishAck: lat(110, 205), Connect: lat(2735, 17663)}},
		{Name: "alarms", Protocol: "MQTT 5.0", QoS: 1, Publishers: 10, Sent: 100, Acked: 100,
			Latency: results.Latencies{PublishAck: lat(120, 300), Connect: lat(800, 1200)}},
		{Name: "backend", Protocol: "MQTT 5.0", QoS: 1, Subscribers: 2, Received: 6098, Expected: 6100, Lost: count(2), Duplicates: count(1), OutOfOrder: count(0),
			Latency: results.Latencies{EndToEnd: lat(190, 333), Connect: lat(369, 419)}},
		{Name: "audit", Protocol: "MQTT 5.0", QoS: 1, Subscribers: 1, Received: 6000, Expected: 6000, Lost: count(0), Duplicates: count(0), OutOfOrder: count(0),
			Latency: results.Latencies{EndToEnd: lat(250, 1500), Connect: lat(400, 400)}},
	}
	r.Pairs = []results.PairResult{
		{From: "sensors", To: "backend", Expected: 6000, Received: 5998, Lost: 2, Duplicates: 1, EndToEnd: lat(190, 333)},
		{From: "sensors", To: "audit", Expected: 6000, Received: 6000, EndToEnd: lat(250, 1500)},
		{From: "alarms", To: "backend", Expected: 100, Received: 100, EndToEnd: lat(150, 250)},
	}
	return r
}

// TestReportOfGroups: a run with device groups has, in its report, each group described in the
// summary, a table of the groups, the matrix of deliveries from each publishing group to each
// subscribing group (— where none of the column's subscriptions takes the row's messages) and the
// end-to-end latency by percentile per subscribing group.
func TestReportOfGroups(t *testing.T) {
	r := groupsRun(t)
	var b strings.Builder
	if err := report.WriteHTML(&b, report.FromResults([]*results.Result{r}), nil); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(b.String())
	for _, want := range []string{
		"<dt>group sensors</dt><dd>2000 publishers, MQTT 5.0 QoS 1, 64 B to devices/{device}/telemetry (2000 topics), one every 10s each</dd>",
		"<dt>group backend</dt><dd>2 subscribers, MQTT 5.0 QoS 1, $share/backend/devices/+/telemetry</dd>",
		// The table of groups.
		`<tr><td class="l">sensors</td><td class="l">2000 publishers</td><td class="l">MQTT 5.0 QoS 1</td><td>6000</td><td></td><td></td><td></td><td></td><td></td><td></td><td>0.205 ms</td><td>2.735 ms</td><td>17.66 ms</td></tr>`,
		`<tr><td class="l">backend</td><td class="l">2 subscribers</td><td class="l">MQTT 5.0 QoS 1</td><td></td><td>6098</td><td>6100</td><td class="failed">2</td><td>1</td><td>0.19 ms</td><td>0.333 ms</td><td></td><td>0.369 ms</td><td>0.419 ms</td></tr>`,
		// The matrix: rows are publishing groups, columns subscribing groups.
		`<tr><th class="l">from \ to</th><th class="l">backend</th><th class="l">audit</th></tr>`,
		`<tr><th class="l">sensors</th><td class="l">expected 6000<br>received 5998<br><span class="failed">lost 2</span>, duplicates 1<br>e2e p50 0.19 ms, p99 0.333 ms</td>` +
			`<td class="l">expected 6000<br>received 6000<br><span>lost 0</span>, duplicates 0<br>e2e p50 0.25 ms, p99 1.5 ms</td></tr>`,
		`<tr><th class="l">alarms</th><td class="l">expected 100<br>received 100<br><span>lost 0</span>, duplicates 0<br>e2e p50 0.15 ms, p99 0.25 ms</td><td class="l">—</td></tr>`,
		`<figure id="group-end-to-end">`, `<figure id="group-publish-ack">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %s", want)
		}
	}
	if strings.Contains(page, "%!") || strings.Contains(page, "<no value>") {
		t.Error("the page has a formatting error")
	}

	figs, err := report.RunFigures(r)
	if err != nil {
		t.Fatal(err)
	}
	var e2e *report.Figure
	for _, f := range figs {
		if f.ID == "group-end-to-end" {
			e2e = f
		}
	}
	if e2e == nil {
		t.Fatal("no end-to-end latency figure per group")
	}
	if len(e2e.Series) != 2 || e2e.Series[0].Label != "backend (2 subscribers)" || e2e.Series[1].Label != "audit (1 subscriber)" {
		t.Fatalf("series %+v, want one per subscribing group", e2e.Series)
	}
	// p50 and p99 of each group, in ms, along the stretched horizontal (50 % at 0.30103, 99 % at 2).
	csv := string(e2e.CSV())
	for _, want := range []string{"backend (2 subscribers),0.30103,0.19,", "backend (2 subscribers),2,0.333,", "audit (1 subscriber),2,1.5,"} {
		if !strings.Contains(csv, want) {
			t.Errorf("figure CSV lacks %q:\n%s", want, csv)
		}
	}
}

// TestReportWithoutGroups: a run without device groups has no groups table, matrix or per-group
// figure.
func TestReportWithoutGroups(t *testing.T) {
	r := groupsRun(t)
	r.Spec.Groups, r.Spec.Topics, r.Groups, r.Pairs = nil, nil, nil, nil
	var b strings.Builder
	if err := report.WriteHTML(&b, report.FromResults([]*results.Result{r}), nil); err != nil {
		t.Fatal(err)
	}
	for _, not := range []string{"Device groups", `id="pairs"`, "group-end-to-end", "group-publish-ack", "<dt>group "} {
		if strings.Contains(b.String(), not) {
			t.Errorf("a report without groups has %s", not)
		}
	}
}

// TestReportOfGroupsRetained: the groups table has a retained column when a group's new
// subscriptions brought retained messages (received of expected), and none otherwise.
func TestReportOfGroupsRetained(t *testing.T) {
	r := groupsRun(t)
	r.Groups[3].Retained = &results.RetainedFigures{Expected: 10, Received: 9}
	var b strings.Builder
	if err := report.WriteHTML(&b, report.FromResults([]*results.Result{r}), nil); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(b.String())
	for _, want := range []string{
		`<th>duplicates</th><th>retained</th><th>e2e p50</th>`,
		`<tr><td class="l">audit</td><td class="l">1 subscriber</td><td class="l">MQTT 5.0 QoS 1</td><td></td><td>6000</td><td>6000</td><td>0</td><td>0</td><td>9 of 10</td><td>0.25 ms</td>`,
		`<tr><td class="l">backend</td><td class="l">2 subscribers</td><td class="l">MQTT 5.0 QoS 1</td><td></td><td>6098</td><td>6100</td><td class="failed">2</td><td>1</td><td></td><td>0.19 ms</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %s", want)
		}
	}
	b.Reset()
	if err := report.WriteHTML(&b, report.FromResults([]*results.Result{groupsRun(t)}), nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "<th>retained</th>") {
		t.Error("a report without retained figures has a retained column")
	}
}

// TestReportOfGroupsAsking: a group that asks (publish.replyTo) has its answers and round trips
// in the groups table, a lost answer marked; a run whose groups ask nothing has no such columns.
func TestReportOfGroupsAsking(t *testing.T) {
	r := groupsRun(t)
	g := &r.Groups[0]
	g.Requests = &results.RequestFigures{Expected: 100, Answered: 99, Lost: 1,
		RoundTrip: &results.LatencySummary{Count: 99, P50Micros: 400, P99Micros: 2500}}
	var b strings.Builder
	if err := report.WriteHTML(&b, report.FromResults([]*results.Result{r}), nil); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(b.String())
	for _, want := range []string{
		`<th>duplicates</th><th>answered</th><th>round trip p50</th><th>round trip p99</th><th>e2e p50</th>`,
		`<td class="failed">99 of 100</td><td>0.4 ms</td><td>2.5 ms</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %s", want)
		}
	}
	b.Reset()
	if err := report.WriteHTML(&b, report.FromResults([]*results.Result{groupsRun(t)}), nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "<th>answered</th>") {
		t.Error("a report whose groups ask nothing has an answered column")
	}
}
