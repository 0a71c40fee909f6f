// Package policy holds the operator's decisions as pure functions over what it observed — pods,
// the Job, Strimzi's objects, a merged result, the phase shown before — so that each is
// table-tested without an API server (as cert-manager's certificates/policies). The controllers
// observe, call these, and act on the answer.
package policy

import (
	"fmt"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// Pass is what one reconcile pass found: the phase its last step works in, what that step waits
// for, and how it ended.
type Pass struct {
	Phase   v1alpha1.Phase
	Waiting string
	// Failure ends the run (a step's fail(...)); transient is an error worth retrying (an API
	// conflict, a worker that did not answer).
	Failure   string
	Transient bool
}

// Shown is what the benchmark's status says after a pass.
type Shown struct {
	Phase   v1alpha1.Phase
	Waiting string // the status message while not finished
	Failure string // set when the run is Failed: the message
	Requeue bool   // reconcile again at once: a phase was skipped and is shown first
}

// Decide turns a pass into the status to show, given the phase shown before it and the run's
// deadline (creation + spec.timeout). It is the operator's whole policy on phases:
//   - a step's failure fails the run;
//   - a run still waiting at its deadline is stuck: it fails, naming the phase and what it waited
//     for (a finished run is never stuck);
//   - a transient error never moves the phase back (steps set the phase they work in, and an
//     earlier step's — Starting while Running — must not be written back);
//   - phases advance one at a time, so users and tools see Pending → Provisioning → Starting →
//     Running → Collecting → Succeeded even when the run could skip one.
func Decide(before v1alpha1.Phase, p Pass, now, deadline time.Time, timeout time.Duration) Shown {
	s := Shown{Phase: p.Phase, Waiting: p.Waiting}
	switch {
	case p.Failure != "":
		return Shown{Phase: v1alpha1.PhaseFailed, Failure: p.Failure}
	case p.Transient:
		if phaseOrder[s.Phase] < phaseOrder[before] {
			s.Phase = before
		}
	case s.Waiting == "" && s.Phase == v1alpha1.PhaseSucceeded:
	case now.After(deadline):
		return Shown{Phase: v1alpha1.PhaseFailed, Failure: fmt.Sprintf("timed out after %s in phase %s: %s", timeout, s.Phase, s.Waiting)}
	}
	if next := nextPhase(before); phaseOrder[s.Phase] > phaseOrder[next] {
		s.Phase, s.Requeue = next, true
		if s.Waiting == "" {
			s.Waiting = "phase " + string(next)
		}
	}
	return s
}

var phaseOrder = map[v1alpha1.Phase]int{"": 0, v1alpha1.PhasePending: 1, v1alpha1.PhaseProvisioning: 2, v1alpha1.PhaseStarting: 3,
	v1alpha1.PhaseRunning: 4, v1alpha1.PhaseCollecting: 5, v1alpha1.PhaseSucceeded: 6}

// nextPhase is the phase after p on the way to Succeeded.
func nextPhase(p v1alpha1.Phase) v1alpha1.Phase {
	for next, i := range phaseOrder {
		if i == phaseOrder[p]+1 {
			return next
		}
	}
	return v1alpha1.PhaseSucceeded
}
