package resources_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/plan"
)

// TestSpecConfigMapHoldsThePlan: the workers, the gateway and the usage sidecar read the plan
// the operator compiled, exactly — a warm-up of 0s stays 0 (a re-admitted manifest once gave it
// the 5 s default) and the default stays the default.
func TestSpecConfigMapHoldsThePlan(t *testing.T) {
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
		compiled, err := plan.CompileBenchmark(mb, plan.Kubernetes)
		if err != nil {
			t.Fatal(err)
		}
		cm, err := resources.SpecConfigMap(mb, compiled)
		if err != nil {
			t.Fatal(err)
		}
		worker, err := plan.Unmarshal([]byte(cm.Data[plan.FileName]))
		if err != nil {
			t.Fatalf("%s: the workers cannot read the spec ConfigMap's plan: %v", c.workload, err)
		}
		if !reflect.DeepEqual(worker, compiled) {
			t.Errorf("%s: the workers' plan differs from the operator's:\n%+v\n%+v", c.workload, worker, compiled)
		}
		if got := worker.Timing.Warmup; got != c.want {
			t.Errorf("%s: the workers' warm-up is %s, want %s", c.workload, got, c.want)
		}
		if worker.Benchmark.Name != "w" || worker.Benchmark.Namespace != "bench" {
			t.Errorf("%s: the plan is not named for its benchmark: %+v", c.workload, worker.Benchmark)
		}
	}
}
