package controllers_test

import (
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/plan"
)

// planOf is mb's spec compiled as the operator compiles it before it builds anything: what the
// builders that decide from the protocol take.
func planOf(t testing.TB, mb *v1alpha1.MessagingBenchmark) *plan.Plan {
	t.Helper()
	p, err := plan.Compile(&mb.Spec, plan.Kubernetes)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
