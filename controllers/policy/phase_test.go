package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

func TestDecide(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	before, after := now.Add(time.Minute), now.Add(-time.Second) // deadlines ahead and passed
	const (
		pending, provisioning, starting = v1alpha1.PhasePending, v1alpha1.PhaseProvisioning, v1alpha1.PhaseStarting
		running, collecting, succeeded  = v1alpha1.PhaseRunning, v1alpha1.PhaseCollecting, v1alpha1.PhaseSucceeded
		failed                          = v1alpha1.PhaseFailed
	)
	for _, c := range []struct {
		name     string
		shown    v1alpha1.Phase
		p        Pass
		deadline time.Time
		want     Shown
		failure  string // a part of the failure message
	}{
		{"a new run waits for its broker: Provisioning", pending, Pass{Phase: provisioning, Waiting: "waiting for the broker"}, before,
			Shown{Phase: provisioning, Waiting: "waiting for the broker"}, ""},
		{"phases are shown one at a time", pending, Pass{Phase: running, Waiting: "1/2 workers finished"}, before,
			Shown{Phase: provisioning, Waiting: "1/2 workers finished", Requeue: true}, ""},
		{"a skipped phase is named when nothing is awaited", provisioning, Pass{Phase: collecting}, before,
			Shown{Phase: starting, Waiting: "phase Starting", Requeue: true}, ""},
		{"collected: Succeeded after Collecting", collecting, Pass{Phase: succeeded}, before, Shown{Phase: succeeded}, ""},
		{"Succeeded is shown after Collecting even past the deadline", collecting, Pass{Phase: succeeded}, after, Shown{Phase: succeeded}, ""},
		{"a step's failure fails the run", running, Pass{Phase: running, Failure: "worker 1 was deleted"}, before,
			Shown{Phase: failed, Failure: "worker 1 was deleted"}, "worker 1 was deleted"},
		{"a failure wins over the deadline", running, Pass{Phase: running, Failure: "broker gone"}, after,
			Shown{Phase: failed, Failure: "broker gone"}, "broker gone"},
		{"stuck at the deadline: Failed, naming the phase and the wait", starting, Pass{Phase: starting, Waiting: "waiting for worker pods to run: 0 (Pending)"}, after,
			Shown{Phase: failed}, "timed out after 5m0s in phase Starting: waiting for worker pods to run: 0 (Pending)"},
		{"a transient error never moves the phase back", running, Pass{Phase: starting, Waiting: "connecting", Transient: true}, before,
			Shown{Phase: running, Waiting: "connecting"}, ""},
		{"a transient error is retried, not judged stuck", running, Pass{Phase: running, Waiting: "asking workers", Transient: true}, after,
			Shown{Phase: running, Waiting: "asking workers"}, ""},
		{"a transient error still advances one phase", pending, Pass{Phase: starting, Transient: true}, before,
			Shown{Phase: provisioning, Waiting: "phase Provisioning", Requeue: true}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Decide(c.shown, c.p, now, c.deadline, 5*time.Minute)
			if c.failure != "" {
				if got.Phase != failed || !strings.Contains(got.Failure, c.failure) {
					t.Fatalf("decide = %+v, want Failed with %q", got, c.failure)
				}
				return
			}
			if got != c.want {
				t.Errorf("decide = %+v, want %+v", got, c.want)
			}
		})
	}
}
