package manifest

import (
	"strings"
	"testing"
)

const suiteYAML = `apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmarkSuite
metadata:
  name: qos-clients
spec:
  template:
    protocol: mqtt
    workload: {payloadBytes: 64, rate: 100, duration: 3s, warmup: 1s}
  matrix:
    axes:
    - field: qos
      values: [0, 1, 2]
    - name: clients
      fields: [workload.publishers, workload.subscribers, workload.topics]
      values: [1, 4]
  repetitions: 2
  objectives: ["lost == 0"]
`

func TestParseSuite(t *testing.T) {
	s, err := ParseSuite([]byte(suiteYAML), "workload.duration=5s")
	if err != nil {
		t.Fatal(err)
	}
	// Defaults of both the suite and its template, the override under the template.
	if s.Spec.Concurrency != 1 || s.Spec.Order != "sequential" || s.Spec.FailurePolicy != "Continue" ||
		s.Spec.Template.Workload.Duration.Duration.String() != "5s" || s.Spec.Template.Broker.Type != "mosquitto" || len(s.Spec.Matrix.Axes) != 2 {
		t.Errorf("parsed %+v", s.Spec)
	}
	for _, c := range []struct{ yaml, want string }{
		{strings.Replace(suiteYAML, "    - field: qos\n", "    - field: qos\n      fields: [qos]\n", 1), "set field (one spec field) or fields"},
		{strings.Replace(suiteYAML, "repetitions: 2", "repetitions: 0", 1), "spec.repetitions"},
		{strings.Replace(suiteYAML, `"lost == 0"`, `"lost is zero"`, 1), "spec.objectives[0]"},
		{strings.Replace(suiteYAML, "protocol: mqtt", "protocol: mqtt\n    qos: -1", 1), "spec.template.qos"},
		{strings.Replace(suiteYAML, "kind: MessagingBenchmarkSuite", "kind: MessagingBenchmark", 1), "want MessagingBenchmarkSuite"},
	} {
		if _, err := ParseSuite([]byte(c.yaml)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error with %q, got %v", c.want, err)
		}
	}
	// A --set is blamed as written, not under template.
	if _, err := ParseSuite([]byte(suiteYAML), "workload.rate=-3"); err == nil || !strings.Contains(err.Error(), "--set workload.rate=-3: ") {
		t.Errorf("override blame: %v", err)
	}
	if Kind([]byte(suiteYAML)) != "MessagingBenchmarkSuite" || Kind([]byte("a: b")) != "" {
		t.Error("Kind")
	}
}

// TestObjectivesTheParserCannotJudgeAreRefused: the schema checks an objective's shape only; a
// figure that does not exist or a latency without a unit is refused before anything runs.
func TestObjectivesTheParserCannotJudgeAreRefused(t *testing.T) {
	if _, err := ParseSuite([]byte(strings.Replace(suiteYAML, `"lost == 0"`, `"latency.endToEnd.p99 <= 50"`, 1))); err == nil ||
		!strings.Contains(err.Error(), "spec.objectives[0]") || !strings.Contains(err.Error(), "unit") {
		t.Errorf("a latency without a unit: %v", err)
	}
	mb := "apiVersion: msgbench.io/v1alpha1\nkind: MessagingBenchmark\nmetadata: {name: x}\nspec:\n  protocol: mqtt\n  objectives: [\"latency.e2e.p99 <= 5ms\"]\n"
	if _, err := Parse([]byte(mb)); err == nil || !strings.Contains(err.Error(), "unknown figure latency.e2e.p99") {
		t.Errorf("an unknown figure: %v", err)
	}
}
