package suite

import (
	"slices"
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

func TestNext(t *testing.T) {
	sched := Schedule(3, 2, v1alpha1.OrderSequential, 0) // p0r1 p0r2 p1r1 p1r2 p2r1 p2r2
	states := func(s ...State) func(Run) State {
		return func(r Run) State {
			i := slices.Index(sched, r)
			if i < len(s) {
				return s[i]
			}
			return NotStarted
		}
	}
	S, F, R := Succeeded, Failed, Running
	for _, c := range []struct {
		name        string
		state       func(Run) State
		concurrency int32
		suspend     bool
		policy      v1alpha1.FailurePolicy
		start       []Run
		phase       v1alpha1.SuitePhase
		done        bool
	}{
		{"a new suite starts its first run only", states(), 1, false, "Continue", []Run{{0, 1}}, v1alpha1.SuiteRunning, false},
		{"one running: nothing more with concurrency 1", states(R), 1, false, "Continue", nil, v1alpha1.SuiteRunning, false},
		{"the next after the one before finished", states(S), 1, false, "Continue", []Run{{0, 2}}, v1alpha1.SuiteRunning, false},
		{"concurrency 3 fills up to 3", states(S, R), 3, false, "Continue", []Run{{1, 1}, {1, 2}}, v1alpha1.SuiteRunning, false},
		{"a failure is recorded and the suite goes on", states(S, F), 1, false, "Continue", []Run{{1, 1}}, v1alpha1.SuiteRunning, false},
		{"Stop: nothing more after a failure, Failed once none runs", states(S, F), 1, false, "Stop", nil, v1alpha1.SuiteFailed, true},
		{"Stop: the running ones finish first", states(F, R), 2, false, "Stop", nil, v1alpha1.SuiteRunning, false},
		{"suspended: nothing starts", states(S), 1, true, "Continue", nil, v1alpha1.SuiteSuspended, false},
		{"suspended while one runs: it finishes", states(S, R), 1, true, "Continue", nil, v1alpha1.SuiteRunning, false},
		{"suspended before anything ran", states(), 1, true, "Continue", nil, v1alpha1.SuiteSuspended, false},
		{"all finished: Succeeded even with failed runs", states(S, F, S, S, S, F), 1, false, "Continue", nil, v1alpha1.SuiteSucceeded, true},
		{"every run failed: Failed, it measured nothing", states(F, F, F, F, F, F), 1, false, "Continue", nil, v1alpha1.SuiteFailed, true},
		{"a resumed operator starts the first missing run, not a finished one", states(S, S, NotStarted, S), 1, false, "Continue", []Run{{1, 1}}, v1alpha1.SuiteRunning, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := Next(sched, c.state, c.concurrency, c.suspend, c.policy)
			if !slices.Equal(p.Start, c.start) || p.Phase != c.phase || p.Done != c.done {
				t.Errorf("Next = start %v phase %s done %v; want %v %s %v", p.Start, p.Phase, p.Done, c.start, c.phase, c.done)
			}
		})
	}
}
