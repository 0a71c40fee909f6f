package resources_test

import (
	"testing"

	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/plan/plantest"
)

// TestWorkerPortRange: a worker pod that holds more clients than the default ephemeral port
// range has ports for (28,232 to the broker's one address) gets the wide range; others keep the
// node's default.
func TestWorkerPortRange(t *testing.T) {
	for _, c := range []struct {
		name, spec string
		wide       bool
	}{
		{"20 × 50,000: 25,000 topics of 1 publisher and 1 subscriber on each worker",
			"workers: {replicas: 20}\n  workload: {publishers: 500000, subscribers: 500000, topics: 500000, rate: 10000}", true},
		{"40 × 25,000 fits the default range", "workers: {replicas: 40}\n  workload: {publishers: 500000, subscribers: 500000, topics: 500000, rate: 10000}", false},
		{"28,232 on one worker fit exactly", "workers: {replicas: 1}\n  workload: {publishers: 14116, subscribers: 14116, topics: 14116, rate: 100}", false},
		{"28,233 do not", "workers: {replicas: 1}\n  workload: {publishers: 14117, subscribers: 14116, topics: 14116, rate: 100}", true},
		{"a small run", "workers: {replicas: 2}\n  workload: {publishers: 5, subscribers: 0, topics: 3, rate: 10}", false},
	} {
		mb, err := manifest.Parse([]byte("apiVersion: msgbench.io/v1alpha1\nkind: MessagingBenchmark\nmetadata: {name: w, namespace: bench}\nspec:\n  protocol: mqtt\n  " + c.spec + "\n"))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		job := resources.WorkersJob(mb, plantest.Kubernetes(t, mb), resources.DefaultConfig())
		sc := job.Spec.Template.Spec.SecurityContext
		wide := sc != nil && len(sc.Sysctls) == 1 && sc.Sysctls[0].Name == "net.ipv4.ip_local_port_range" && sc.Sysctls[0].Value == resources.WidePortRange
		if wide != c.wide || (!wide && sc != nil && len(sc.Sysctls) > 0) {
			t.Errorf("%s: sysctls %+v, want the wide port range: %v", c.name, sc.Sysctls, c.wide)
		}
	}
}
