package manifest

import (
	"os"
	"strings"
	"testing"
)

// fleetWithObjectives is config/samples/fleets/telemetry-fan-in.yaml, its subscribing group
// renamed edge-backend (a group name with '-'), with objectives.
func fleetWithObjectives(t *testing.T, objectives ...string) []byte {
	t.Helper()
	data, err := os.ReadFile("../../config/samples/fleets/telemetry-fan-in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(string(data), "    - name: backend\n", "    - name: edge-backend\n", 1)
	if doc == string(data) {
		t.Fatal("the sample has no group named backend")
	}
	doc += "  objectives:\n"
	for _, o := range objectives {
		doc += "  - " + o + "\n"
	}
	return []byte(doc)
}

// TestObjectivesOnDeviceGroups: objectives on a device group or a pair of groups pass the
// schema (also with '-' in a group's name) and are checked against the spec's groups before
// anything runs.
func TestObjectivesOnDeviceGroups(t *testing.T) {
	mb, err := Parse(fleetWithObjectives(t, "groups.sensors.latency.endToEnd.p99 <= 2s", "groups.edge-backend.lost == 0",
		"groups.sensors.throughput.sentPerSecond >= 100", "pairs.sensors.edge-backend.endToEnd.p99<=2s", "pairs.sensors.edge-backend.lostPercent <= 0.1%"))
	if err != nil {
		t.Fatal(err)
	}
	if len(mb.Spec.Objectives) != 5 {
		t.Errorf("objectives %v", mb.Spec.Objectives)
	}
	for _, c := range []struct{ objective, want string }{
		{"groups.sensor.lost == 0", `spec.objectives[0]: objective "groups.sensor.lost == 0": no device group sensor (did you mean sensors?); the run's groups are sensors, edge-backend`},
		{"groups.backend.lost == 0", "no device group backend (did you mean edge-backend?)"},
		{"pairs.edge-backend.sensors.lost == 0", "group edge-backend does not publish: a pair of groups is pairs.<publishing group>.<subscribing group>.<figure>"},
		{"pairs.sensors.sensors.lost == 0", "group sensors does not subscribe"},
		{"groups.sensors.latency.endToEnd.p99 <= 2", "a latency needs a unit"},
		{"groups.sensors.measuredSeconds >= 1", "measuredSeconds is a figure of the whole run"},
		{"groups.edge-.lost == 0", "spec.objectives[0]"}, // the schema's pattern: a name ends in a letter or digit
	} {
		_, err := Parse(fleetWithObjectives(t, c.objective))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want it to say %q", c.objective, err, c.want)
		}
	}
	flat := "apiVersion: msgbench.io/v1alpha1\nkind: MessagingBenchmark\nmetadata: {name: x}\nspec:\n  protocol: mqtt\n  objectives: [\"groups.default.lost == 0\"]\n"
	if _, err := Parse([]byte(flat)); err == nil || !strings.Contains(err.Error(), "no device group default: the run has no device groups (spec.groups)") {
		t.Errorf("a flat spec: %v", err)
	}
	// A suite's statistics have no group figures: refused, not never met.
	if _, err := ParseSuite([]byte(strings.Replace(suiteYAML, `"lost == 0"`, `"groups.default.lost == 0"`, 1))); err == nil ||
		!strings.Contains(err.Error(), "spec.objectives[0]") || !strings.Contains(err.Error(), "template's spec.objectives") {
		t.Errorf("a suite: %v", err)
	}
}
