package controllers_test

import (
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// TestObjectiveOnAGroupTheSpecLacksFailsFirst: the API takes an objective on a device group
// whose name has '-' (the schema's pattern); one naming a group the spec does not have fails the
// run in its first step, naming the group and those there are, before anything starts.
func TestObjectiveOnAGroupTheSpecLacksFailsFirst(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	startOperator(t, ns)
	createBenchmark(t, ns, "group-objectives", `
protocol: mqtt
topics: [{name: telemetry, pattern: "devices/{index}/telemetry", count: 4}]
groups:
- {name: edge-sensors, count: 4, publish: {topics: telemetry, rate: 10}}
- {name: backend, count: 1, subscribe: {filter: devices/+/telemetry}}
workload: {duration: 2s, warmup: 0s}
objectives: ["groups.edge-sensors.throughput.sentPerSecond >= 1", "groups.edge-sensor.lost == 0"]`)
	mb := waitFinished(t, ns, "group-objectives", 30*time.Second)
	if mb.Status.Phase != v1alpha1.PhaseFailed ||
		!strings.Contains(mb.Status.Message, `spec.objectives[1]: objective "groups.edge-sensor.lost == 0": no device group edge-sensor (did you mean edge-sensors?); the run's groups are edge-sensors, backend`) ||
		strings.Contains(mb.Status.Message, "spec.objectives[0]") {
		t.Errorf("phase %s: %s", mb.Status.Phase, mb.Status.Message)
	}
}
