package resources_test

import (
	"testing"
	"time"

	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/internal/manifest"
)

// TestSpecConfigMapKeepsZeroWarmup: the workers parse the spec ConfigMap with the API's
// defaults, so a warm-up of 0s must be written out, not left for the 5 s default.
func TestSpecConfigMapKeepsZeroWarmup(t *testing.T) {
	for _, c := range []struct {
		workload string
		want     time.Duration
	}{
		{"{publishers: 2, topics: 2, rate: 100, messages: 100, warmup: 0s}", 0},
		{"{publishers: 2, topics: 2, rate: 100, duration: 2s, warmup: 300ms}", 300 * time.Millisecond},
		{"{publishers: 2, topics: 2, rate: 100, duration: 2s}", 5 * time.Second}, // the default stays the default
	} {
		mb, err := manifest.Parse([]byte("apiVersion: msgbench.io/v1alpha1\nkind: MessagingBenchmark\nmetadata: {name: w, namespace: bench}\nspec:\n  protocol: mqtt\n  workload: " + c.workload + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		cm, err := resources.SpecConfigMap(mb)
		if err != nil {
			t.Fatal(err)
		}
		worker, err := manifest.Parse([]byte(cm.Data["benchmark.yaml"]))
		if err != nil {
			t.Fatalf("%s: the workers cannot parse the spec ConfigMap: %v", c.workload, err)
		}
		if got := worker.Spec.Workload.Warmup.Duration; got != c.want {
			t.Errorf("%s: the workers' warm-up is %s, want %s", c.workload, got, c.want)
		}
	}
}
