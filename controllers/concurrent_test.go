package controllers_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// TestConcurrentReconciles runs several benchmarks that exist before the operator starts, so
// that its first reconciles run at once on as many workers as it has (8): under -race (make
// test), any write to the shared reconciler in a reconcile fails the test. All must succeed.
func TestConcurrentReconciles(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	const n = 8
	for i := 0; i < n; i++ {
		// Each gets its own topics on the suite's shared Mosquitto.
		createBenchmark(t, ns, fmt.Sprintf("at-once-%d", i), fmt.Sprintf(
			"protocol: mqtt\nqos: 1\nworkload: {publishers: 1, subscribers: 1, payloadBytes: 32, rate: 20, duration: 1s, warmup: 0s, topicPrefix: at-once-%d-}", i))
	}
	startKubelet(t, ns, nil)
	startOperator(t, ns)
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("at-once-%d", i)
		mb := waitFinished(t, ns, name, 90*time.Second)
		if mb.Status.Phase != v1alpha1.PhaseSucceeded || mb.Status.Summary == nil || mb.Status.Summary.Received == 0 {
			t.Errorf("%s: %s %q", name, mb.Status.Phase, mb.Status.Message)
		}
	}
}
