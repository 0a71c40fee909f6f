package results_test

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/results"
)

func int64p(v int64) *int64 { return &v }

func latency(p50, p99 int64) *results.LatencySummary {
	return &results.LatencySummary{Count: 100, MinMicros: p50 / 2, P50Micros: p50, P90Micros: p99, P95Micros: p99, P99Micros: p99, P999Micros: p99, MaxMicros: p99}
}

// fanIn is the telemetry fan-in sample's result: 2000 sensors publishing to a shared
// subscription of 2 backend consumers, every reading delivered once.
func fanIn(t *testing.T) *results.Result {
	t.Helper()
	mb, err := manifest.ReadFile("../config/samples/fleets/telemetry-fan-in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := &results.Result{Name: "telemetry-fan-in", Phase: "Succeeded", Spec: &mb.Spec, MeasuredSeconds: 30,
		Environment: results.Environment{Protocol: "MQTT 5.0"}, Sent: 6000, Received: 6000, Expected: 6000,
		Lost: int64p(0), Duplicates: int64p(0), OutOfOrder: int64p(0)}
	r.Groups = []results.GroupResult{
		{Name: "sensors", Protocol: "MQTT 5.0", QoS: 1, Publishers: 2000, Sent: 6000, Acked: 6000,
			Latency: results.Latencies{PublishAck: latency(110, 205), Connect: latency(2735, 17663)}},
		{Name: "backend", Protocol: "MQTT 5.0", QoS: 1, Subscribers: 2, Received: 5998, Expected: 6000, Lost: int64p(2),
			Duplicates: int64p(1), OutOfOrder: int64p(0), Latency: results.Latencies{EndToEnd: latency(190, 333), Connect: latency(369, 419)}},
	}
	r.Pairs = []results.PairResult{{From: "sensors", To: "backend", Expected: 6000, Received: 5998, Lost: 2, Duplicates: 1, EndToEnd: latency(190, 333)}}
	return r
}

// summary is r's summary with each row's cells (aligned by spaces) joined by " | ", one row a
// line: "groups | sensors | sent 6000, …", whatever the columns' widths.
func summary(t *testing.T, r *results.Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := results.WriteSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		out.WriteString(columns.ReplaceAllString(strings.TrimSpace(l), " | ") + "\n")
	}
	return out.String()
}

var columns = regexp.MustCompile(` {2,}`)

// TestSummaryDescribesEachGroup: a run with device groups describes each group on its own row
// (clients, protocol, QoS, payload, topics or subscription, load) instead of the flat spec's
// protocol row, and adds a row per group and per pair of groups with their figures.
func TestSummaryDescribesEachGroup(t *testing.T) {
	out := summary(t, fanIn(t))
	for _, want := range []string{
		"\nsensors | 2000 publishers, MQTT 5.0 QoS 1, 64 B to devices/{device}/telemetry (2000 topics), one every 10s each\n",
		"\nbackend | 2 subscribers, MQTT 5.0 QoS 1, $share/backend/devices/+/telemetry\n",
		"\ngroups | sensors | sent 6000, publish ack p99 205µs, connect p50 2735µs p99 17.7ms\n",
		"\nbackend | received 5998 of 6000 expected, lost 2, dup 1, e2e p50 190µs p99 333µs, connect p50 369µs p99 419µs\n",
		"\npairs | sensors → backend | expected 6000, received 5998, lost 2, dup 1, e2e p50 190µs p99 333µs\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	for _, not := range []string{"\nprotocol |", "256 B payload", "1 pub / 1 sub"} {
		if strings.Contains(out, not) {
			t.Errorf("summary of a run with groups says %q (the flat spec's defaults):\n%s", not, out)
		}
	}
	// The groups come after the run-wide rows, before the caveats.
	if strings.Index(out, "\nresources |") > strings.Index(out, "\ngroups |") {
		t.Errorf("the groups block is not after the run-wide rows:\n%s", out)
	}
}

// TestSummaryGroupLoads: a group's load reads as its spec puts it (a rate for the group, a closed
// loop, a message count), and a group subscribing to a topic group names it.
func TestSummaryGroupLoads(t *testing.T) {
	rate, count := int32(50), int32(4)
	spec := &v1alpha1.MessagingBenchmarkSpec{Protocol: v1alpha1.ProtocolMQTT, QoS: 0, MQTT: v1alpha1.MQTTSpec{Version: v1alpha1.MQTT311},
		Workload: v1alpha1.WorkloadSpec{Publishers: 1, Subscribers: 1, Topics: 1, PayloadBytes: 256, Duration: metav1.Duration{Duration: 10 * time.Second}},
		Topics:   []v1alpha1.TopicGroupSpec{{Name: "cmd", Pattern: "cmd/{index}", Count: &count}, {Name: "alerts", Pattern: "alerts"}},
		Groups: []v1alpha1.DeviceGroupSpec{
			{Name: "backend", Count: 1, Publish: &v1alpha1.PublishSpec{Topics: "cmd", PayloadBytes: 32, Rate: &rate, Messages: 1000}},
			{Name: "gateways", Count: 1, Publish: &v1alpha1.PublishSpec{Topics: "alerts", PayloadBytes: 100, Messages: 500}},
			{Name: "devices", Count: 4, Subscribe: &v1alpha1.SubscribeSpec{Topics: "cmd"}},
		}}
	if _, err := (&results.Result{Spec: spec}).Plan(); err != nil {
		t.Fatal(err)
	}
	out := summary(t, &results.Result{Name: "x", Spec: spec})
	for _, want := range []string{
		"\nbackend | 1 publisher, MQTT 3.1.1 QoS 0, 32 B to cmd/{index} (4 topics), 50 msg/s in all until 1000 sent\n",
		"\ngateways | 1 publisher, MQTT 3.1.1 QoS 0, 100 B to alerts, as fast as acknowledged (closed loop) until 500 sent\n",
		"\ndevices | 4 subscribers, MQTT 3.1.1 QoS 0, cmd/{index} (4 topics, one each)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

// TestSummaryWithoutGroups: a run without device groups keeps its protocol row and has no
// groups or pairs rows.
func TestSummaryWithoutGroups(t *testing.T) {
	spec := &v1alpha1.MessagingBenchmarkSpec{Protocol: v1alpha1.ProtocolMQTT, QoS: 1, MQTT: v1alpha1.MQTTSpec{Version: v1alpha1.MQTT5},
		Workload: v1alpha1.WorkloadSpec{Publishers: 4, Subscribers: 4, Topics: 4, PayloadBytes: 128}}
	out := summary(t, &results.Result{Name: "x", Phase: "Succeeded", Spec: spec, Environment: results.Environment{Protocol: "MQTT 5.0"}})
	if !strings.Contains(out, "\nprotocol | MQTT 5.0, QoS 1, 128 B payload, 4 pub / 4 sub on 4 topics\n") {
		t.Errorf("no protocol row:\n%s", out)
	}
	for _, not := range []string{"\ngroups |", "\npairs |"} {
		if strings.Contains(out, not) {
			t.Errorf("a run without groups has a %s row:\n%s", not, out)
		}
	}
}

// fleetSample reads a sample of config/samples/fleets as a result's spec.
func fleetSample(t *testing.T, name string) *results.Result {
	t.Helper()
	mb, err := manifest.ReadFile("../config/samples/fleets/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return &results.Result{Name: mb.Name, Phase: "Succeeded", Spec: &mb.Spec, Environment: results.Environment{Protocol: "MQTT 5.0"}}
}

// TestSummaryGroupPayloads: a group whose messages vary (publish.payload) has its distribution
// or template described instead of one size.
func TestSummaryGroupPayloads(t *testing.T) {
	r := fleetSample(t, "payload-mix.yaml")
	// The meters on a uniform distribution instead of the sample's normal one.
	meters := r.Spec.Groups[3].Publish.Payload.Size
	if r.Spec.Groups[3].Name != "meters" {
		t.Fatalf("group 3 is %s, not meters", r.Spec.Groups[3].Name)
	}
	lo, hi := int32(100), int32(900)
	uniform := *meters
	uniform.Distribution, uniform.Mean, uniform.StdDev, uniform.Min, uniform.Max = "uniform", nil, nil, &lo, &hi
	out := summary(t, r)
	for _, want := range []string{
		`\ngateways \| 20 publishers, MQTT 5.0 QoS 1, log-normal median 2 KiB, p99 32 KiB to devices/\{device\}/batch`,
		`\ntrackers \| 100 publishers, MQTT 5.0 QoS 1, weighted 3 sizes 64 B–4 KiB to devices/\{device\}/position`,
		`\nmeters \| 50 publishers, MQTT 5.0 QoS 1, normal 300±40 B to devices/\{device\}/reading`,
		`\nsensors \| 200 publishers, MQTT 5.0 QoS 1, JSON template ≤ \d+ B to devices/\{device\}/telemetry`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("summary lacks %s:\n%s", want, out)
		}
	}
	r.Spec.Groups[3].Publish.Payload.Size = &uniform
	if out := summary(t, r); !strings.Contains(out, "\nmeters | 50 publishers, MQTT 5.0 QoS 1, uniform 100–900 B to ") {
		t.Errorf("summary lacks the meters' uniform sizes:\n%s", out)
	}
}

// TestSummaryGroupNetworks: a group behind its own link names its profile and round trip; a group
// reaching the broker directly has no link in its row.
func TestSummaryGroupNetworks(t *testing.T) {
	r := fleetSample(t, "mixed-fleet.yaml")
	p, err := r.Plan()
	if err != nil {
		t.Fatal(err)
	}
	out := summary(t, r)
	for _, g := range p.Groups {
		row := regexp.MustCompile(`\n` + regexp.QuoteMeta(g.Name) + ` \| [^\n]*`).FindString(out)
		if row == "" {
			t.Fatalf("no row for group %s:\n%s", g.Name, out)
		}
		if g.Network == nil {
			if strings.Contains(row, "behind its own") {
				t.Errorf("group %s without a link of its own: %s", g.Name, row)
			}
			continue
		}
		want := fmt.Sprintf(", behind its own %s link (RTT %d ms)", g.Network.Profile, g.Network.Link.RTT().Milliseconds())
		if !strings.HasSuffix(row, want) {
			t.Errorf("group %s: row %q does not end in %q", g.Name, row, want)
		}
	}
	if !strings.Contains(out, ", behind its own nb-iot link (RTT 600 ms)\n") {
		t.Errorf("the sensors' NB-IoT link is not named:\n%s", out)
	}
}

// TestSummaryGroupRetained: the groups block counts the retained messages a group's new
// subscriptions brought and the deliveries of what was sent before it joined; the pairs block
// the retained messages of each pair.
func TestSummaryGroupRetained(t *testing.T) {
	r := fleetSample(t, "broadcast-retained.yaml")
	r.Sent, r.Received, r.Expected = 1, 500, 500
	r.Groups = []results.GroupResult{
		{Name: "updater", Protocol: "MQTT 5.0", QoS: 1, Publishers: 1, Sent: 1, Acked: 1},
		{Name: "online", Protocol: "MQTT 5.0", QoS: 1, Subscribers: 500, Received: 500, Expected: 500, Lost: int64p(0), Duplicates: int64p(0)},
		{Name: "late", Protocol: "MQTT 5.0", QoS: 1, Subscribers: 100, Lost: int64p(0), Duplicates: int64p(0),
			Retained: &results.RetainedFigures{Expected: 100, Received: 98}, BeforeJoining: 3},
	}
	r.Pairs = []results.PairResult{
		{From: "updater", To: "online", Expected: 500, Received: 500},
		{From: "updater", To: "late", Retained: 98},
	}
	out := summary(t, r)
	for _, want := range []string{
		"\nlate | received 0 of 0 expected, lost 0, dup 0, retained 98 of 100, 3 before it joined\n",
		"\nonline | received 500 of 500 expected, lost 0, dup 0\n",
		"\npairs | updater → online | expected 500, received 500, lost 0, dup 0\n",
		"\nupdater → late | expected 0, received 0, lost 0, dup 0, retained 98\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}
