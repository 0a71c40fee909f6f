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
