package objectives

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/results"
)

func TestParseGroupObjectives(t *testing.T) {
	for _, c := range []struct {
		expr, figure, group, to string
		value                   float64
	}{
		{"groups.sensors.latency.endToEnd.p99 <= 2s", "groups.sensors.latency.endToEnd.p99", "sensors", "", 2e6},
		{"groups.backend.lost == 0", "groups.backend.lost", "backend", "", 0},
		{"groups.sensors.throughput.sentPerSecond >= 100", "groups.sensors.throughput.sentPerSecond", "sensors", "", 100},
		{"groups.edge-sensors-2.lost<=5", "groups.edge-sensors-2.lost", "edge-sensors-2", "", 5},
		{"groups.0a.sent >= 1k", "groups.0a.sent", "0a", "", 1000},
		{"groups.backend.lostPercent <= 0.1%", "groups.backend.lostPercent", "backend", "", 0.1},
		{"groups.sensors.wire.connectBytes <= 1KiB", "groups.sensors.wire.connectBytes", "sensors", "", 1024},
		{"pairs.sensors.edge-backend.lost == 0", "pairs.sensors.edge-backend.lost", "sensors", "edge-backend", 0},
		{"pairs.sensors.backend.endToEnd.p99 <= 50ms", "pairs.sensors.backend.endToEnd.p99", "sensors", "backend", 50e3},
	} {
		o, err := Parse(c.expr)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.expr, err)
			continue
		}
		if o.Figure.Name != c.figure || o.Figure.Group != c.group || o.Figure.To != c.to || o.Value != c.value {
			t.Errorf("Parse(%q) = %s (group %q to %q) %v", c.expr, o.Figure.Name, o.Figure.Group, o.Figure.To, o.Value)
		}
	}
	for _, c := range []struct{ expr, want string }{
		{"groups.-a.lost == 0", "not of the form"},
		{"groups.a-.lost == 0", "not of the form"},
		{"groups.a_b.lost == 0", "not of the form"},
		{"groups.sensors.lost <= 1%", "(for a share, groups.sensors.lostPercent <= 1%)"},
		{"groups.sensors.latency.endToEnd.p99 <= 2", "a latency needs a unit"},
		{"groups.sensors.resources.loadgenCPUSeconds <= 1", "resources.loadgenCPUSeconds is a figure of the whole run"},
		{"pairs.a.b.latency.endToEnd.p99 <= 1s", "did you mean pairs.a.b.endToEnd.p99?"},
	} {
		if _, err := Parse(c.expr); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want it to say %q", c.expr, err, c.want)
		}
	}
}

// TestFormIsTheCRDPattern: the API server checks objectives with the CRD's pattern, Parse with
// form; an objective one accepts and the other refuses would pass the API and fail the run, or
// be refused with no reason.
func TestFormIsTheCRDPattern(t *testing.T) {
	data, err := os.ReadFile("../../config/crd/bases/msgbench.io_messagingbenchmarks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema struct {
						Properties struct {
							Spec struct {
								Properties struct {
									Objectives struct {
										Items struct{ Pattern string }
									}
								}
							}
						}
					} `json:"openAPIV3Schema"`
				}
			}
		}
	}
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	pattern := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties.Spec.Properties.Objectives.Items.Pattern
	api, err := regexp.Compile(pattern)
	if err != nil || pattern == "" {
		t.Fatalf("CRD pattern %q: %v", pattern, err)
	}
	for _, e := range []string{
		"lost == 0", " latency.endToEnd.p99<=50ms ", "groups.sensors.lost == 0", "groups.edge-sensors.lost == 0",
		"groups.a-b-c.latency.endToEnd.p99 <= 2s", "pairs.edge-a.edge-b.endToEnd.p99 <= 1s", "groups.0.sent > 1",
		"groups.-a.lost == 0", "groups.a-.lost == 0", "groups.a--b.lost == 0", "groups..lost == 0", "groups.a_b.lost == 0",
		"1lost == 0", "lost = 0", "lost", "lost-1 == 0",
	} {
		if a, f := api.MatchString(e), form.MatchString(e); a != f {
			t.Errorf("%q: the CRD's pattern matches %v, form %v", e, a, f)
		}
	}
	if !api.MatchString("groups.edge-sensors.lost == 0") {
		t.Error("the CRD refuses a group name with '-'")
	}
}

func fleetSpec(objectives ...string) *v1alpha1.MessagingBenchmarkSpec {
	return &v1alpha1.MessagingBenchmarkSpec{Objectives: objectives, Groups: []v1alpha1.DeviceGroupSpec{
		{Name: "sensors", Count: 10, Publish: &v1alpha1.PublishSpec{Topics: "telemetry"}},
		{Name: "edge-backend", Count: 2, Subscribe: &v1alpha1.SubscribeSpec{Filter: "devices/+/telemetry"}},
	}}
}

func TestParseSpec(t *testing.T) {
	objs, err := ParseSpec(fleetSpec("lost == 0", "groups.sensors.sent >= 1", "groups.edge-backend.latency.endToEnd.p99 <= 1s", "pairs.sensors.edge-backend.lost == 0"))
	if err != nil || len(objs) != 4 {
		t.Fatalf("ParseSpec = %v, %v", objs, err)
	}
	_, err = ParseSpec(fleetSpec("groups.sensor.sent >= 1", "lost == 0", "pairs.edge-backend.sensors.lost == 0", "pairs.sensors.sensors.lost == 0",
		"pairs.sensors.nobody.lost == 0", "groups.sensors.sent >= 1x"))
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{
		`spec.objectives[0]: objective "groups.sensor.sent >= 1": no device group sensor (did you mean sensors?); the run's groups are sensors, edge-backend`,
		`spec.objectives[2]: objective "pairs.edge-backend.sensors.lost == 0": group edge-backend does not publish: a pair of groups is pairs.<publishing group>.<subscribing group>.<figure>`,
		`spec.objectives[3]: objective "pairs.sensors.sensors.lost == 0": group sensors does not subscribe: a pair of groups is pairs.<publishing group>.<subscribing group>.<figure>`,
		`spec.objectives[4]: objective "pairs.sensors.nobody.lost == 0": no device group nobody; the run's groups are sensors, edge-backend`,
		`spec.objectives[5]: objective "groups.sensors.sent >= 1x": 1x: groups.sensors.sent is a count`,
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("ParseSpec error:\n%v", err)
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("line %d: %s\nwant %s", i, lines[i], want[i])
		}
	}
	// A flat spec has no groups to name.
	flat := &v1alpha1.MessagingBenchmarkSpec{Objectives: []string{"groups.default.lost == 0", "lost == 0"}}
	if _, err := ParseSpec(flat); err == nil || !strings.Contains(err.Error(), `spec.objectives[0]: objective "groups.default.lost == 0": no device group default: the run has no device groups (spec.groups)`) {
		t.Errorf("flat spec: %v", err)
	}
	if objs, err := ParseSpec(nil); err != nil || objs != nil {
		t.Errorf("ParseSpec(nil) = %v, %v", objs, err)
	}
}

// TestParseAllRefusesGroupsForSuites: a suite's statistics have no group figures; its
// objectives on one are refused up front rather than never met.
func TestParseAllRefusesGroupsForSuites(t *testing.T) {
	objs, err := ParseAll([]string{"lost == 0", "groups.sensors.lost == 0", "pairs.a.b.lost == 0"})
	if len(objs) != 1 || err == nil {
		t.Fatalf("ParseAll = %v, %v", objs, err)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `spec.objectives[1]: objective "groups.sensors.lost == 0": a suite judges its points on statistics of the run's own figures`) ||
		!strings.HasPrefix(lines[1], `spec.objectives[2]: `) {
		t.Errorf("ParseAll error:\n%v", err)
	}
}

// fleet is the result of fleetSpec's run: sensors sent 1000, edge-backend lost 12 of them.
func fleet(objectives ...string) *results.Result {
	return &results.Result{Name: "fleet", Phase: "Succeeded", Spec: fleetSpec(objectives...), MeasuredSeconds: 5, Sent: 1000, Received: 988, Expected: 1000, Lost: results.Int64(12),
		Groups: []results.GroupResult{
			{Name: "sensors", Publishers: 10, Sent: 1000, Acked: 1000, Throughput: results.Throughput{SentPerSecond: 200},
				Latency: results.Latencies{PublishAck: &results.LatencySummary{Count: 1000, P99Micros: 900}}},
			{Name: "edge-backend", Subscribers: 2, Received: 988, Expected: 1000, Lost: results.Int64(12), Duplicates: results.Int64(0),
				Throughput: results.Throughput{ReceivedPerSecond: 197.6},
				Latency:    results.Latencies{EndToEnd: &results.LatencySummary{Count: 988, P99Micros: 2_500_000}}},
		},
		Pairs: []results.PairResult{{From: "sensors", To: "edge-backend", Expected: 1000, Received: 988, Lost: 12,
			EndToEnd: &results.LatencySummary{Count: 988, P99Micros: 2_500_000}}},
	}
}

func TestJudgeGroupObjectives(t *testing.T) {
	r := fleet()
	for _, c := range []struct {
		expr    string
		met     bool
		missing bool
		line    string
	}{
		{"groups.sensors.throughput.sentPerSecond >= 100", true, false, "groups.sensors.throughput.sentPerSecond >= 100: met (measured 200)"},
		{"groups.sensors.latency.publishAck.p99 <= 1ms", true, false, "groups.sensors.latency.publishAck.p99 <= 1ms: met (measured 0.9ms)"},
		{"groups.edge-backend.latency.endToEnd.p99 <= 2s", false, false, "groups.edge-backend.latency.endToEnd.p99 <= 2s: measured 2.5s"},
		{"groups.edge-backend.lost == 0", false, false, "groups.edge-backend.lost == 0: measured 12"},
		{"groups.edge-backend.lostPercent <= 2%", true, false, "groups.edge-backend.lostPercent <= 2%: met (measured 1.2%)"},
		{"groups.edge-backend.duplicates == 0", true, false, "groups.edge-backend.duplicates == 0: met (measured 0)"},
		{"pairs.sensors.edge-backend.lost <= 20", true, false, "pairs.sensors.edge-backend.lost <= 20: met (measured 12)"},
		{"pairs.sensors.edge-backend.endToEnd.p99 <= 2s", false, false, "pairs.sensors.edge-backend.endToEnd.p99 <= 2s: measured 2.5s"},
		// A figure a group's role does not have, a group or a pair the result does not have.
		{"groups.edge-backend.sent >= 1", false, true, "groups.edge-backend.sent >= 1: not measured (absent when the group has no publishers)"},
		{"groups.sensors.lost == 0", false, true, "groups.sensors.lost == 0: not measured (absent when the group has no subscribers)"},
		{"groups.backend.lost == 0", false, true, "groups.backend.lost == 0: not measured: no device group backend (did you mean edge-backend?); the run's groups are sensors, edge-backend"},
		{"pairs.edge-backend.sensors.lost == 0", false, true, "pairs.edge-backend.sensors.lost == 0: not measured: no delivery from group edge-backend to group sensors: the subscriptions of sensors match none of the topics edge-backend publishes to, or it sent nothing measured"},
	} {
		outs := JudgeResult(mustParseSpec(t, c.expr), r)
		if len(outs) != 1 {
			t.Fatalf("%s: %d outcomes", c.expr, len(outs))
		}
		o := outs[0]
		if o.Met != c.met || o.Missing != c.missing || o.String() != c.line {
			t.Errorf("%s: met %v missing %v %q, want %v %v %q", c.expr, o.Met, o.Missing, o.String(), c.met, c.missing, c.line)
		}
	}
	// A run without groups.
	flat := &results.Result{Sent: 10}
	outs := JudgeResult(mustParseSpec(t, "groups.default.sent >= 1"), flat)
	if outs[0].Met || !strings.Contains(outs[0].Reason, "no device group default: the run has no device groups") {
		t.Errorf("flat run: %+v", outs[0])
	}
}

// mustParseSpec parses exprs whatever the groups are called.
func mustParseSpec(t *testing.T, exprs ...string) []Objective {
	t.Helper()
	objs, err := parseAll(exprs, nil)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func TestApplyGroupObjectives(t *testing.T) {
	r := fleet("groups.sensors.sent >= 1k", "groups.edge-backend.lost == 0", "pairs.sensors.edge-backend.endToEnd.p99 <= 3s")
	if err := Apply(r); err != nil {
		t.Fatal(err)
	}
	if r.ObjectivesMet == nil || *r.ObjectivesMet || len(r.Objectives) != 3 {
		t.Fatalf("objectives %+v met %v", r.Objectives, r.ObjectivesMet)
	}
	got := []results.ObjectiveResult{
		{Objective: "groups.sensors.sent >= 1k", Measured: "1k", Met: true},
		{Objective: "groups.edge-backend.lost == 0", Measured: "12", Reason: "measured 12"},
		{Objective: "pairs.sensors.edge-backend.endToEnd.p99 <= 3s", Measured: "2.5s", Met: true},
	}
	for i, w := range got {
		if r.Objectives[i] != w {
			t.Errorf("objective %d = %+v, want %+v", i, r.Objectives[i], w)
		}
	}
}
