package controllers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// TestSuiteThatRunsNothingFails: a suite whose excludes remove every point fails at once —
// phase Failed, condition Completed false, a message naming the excludes — and creates no run
// (suite.Expand refuses it, as `msgbench run` does; #31).
func TestSuiteThatRunsNothingFails(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	startOperator(t, ns)
	spec := strings.Replace(suiteSpec, "repetitions: 2", "  exclude:\n  - {qos: 0}\n  - {qos: 1}\nrepetitions: 2", 1)
	createSuite(t, ns, "nothing", spec)
	s := waitSuite(t, ns, "nothing", time.Minute)
	c := meta.FindStatusCondition(s.Status.Conditions, v1alpha1.ConditionCompleted)
	if s.Status.Phase != v1alpha1.SuiteFailed || !strings.Contains(s.Status.Message, "spec.matrix.exclude") ||
		!strings.Contains(s.Status.Message, "{qos: 0}, {qos: 1}") || !strings.Contains(s.Status.Message, "nothing to run") ||
		c == nil || c.Status != metav1.ConditionFalse || c.Reason != "Failed" {
		t.Fatalf("phase %s, message %q, Completed %+v", s.Status.Phase, s.Status.Message, c)
	}
	var runs v1alpha1.MessagingBenchmarkList
	if err := env.Client.List(context.Background(), &runs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(runs.Items) != 0 {
		t.Errorf("%d runs created", len(runs.Items))
	}
}
