// Package plantest compiles benchmarks for tests of the parts that take a plan.
package plantest

import (
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/plan"
)

// Kubernetes is mb compiled as the operator compiles it before it builds anything; the test
// fails when it does not compile.
func Kubernetes(t testing.TB, mb *v1alpha1.MessagingBenchmark) *plan.Plan {
	t.Helper()
	p, err := plan.CompileBenchmark(mb, plan.Kubernetes)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
