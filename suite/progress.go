package suite

import "github.com/msgbench/msgbench/api/v1alpha1"

// State is what became of one run, as observed (its child benchmark's phase, or a record that
// it finished).
type State int

// Run states.
const (
	NotStarted State = iota // no child yet
	Running                 // a child not finished
	Succeeded
	Failed
)

// Plan is what to do next, decided from the schedule and the runs' states: which runs to start
// now, the counts, and whether the suite is over.
type Plan struct {
	Start   []Run // in schedule order
	Counts  v1alpha1.SuiteRunCounts
	Done    bool // every run finished, or the suite stopped at a failure and nothing runs
	Stopped bool // failurePolicy Stop met a failed run: nothing more starts
	Phase   v1alpha1.SuitePhase
}

// Next decides which runs start now: the first runs of the schedule not started yet, while
// fewer than concurrency run and the suite is neither suspended nor stopped by a failure under
// failurePolicy Stop. A run starts only once the run before it in the schedule has started, so
// with concurrency 1 exactly one run measures at a time, in order. It only reads.
func Next(schedule []Run, state func(Run) State, concurrency int32, suspend bool, policy v1alpha1.FailurePolicy) Plan {
	p := Plan{Counts: v1alpha1.SuiteRunCounts{Total: int32(len(schedule))}}
	var pending []Run
	for _, r := range schedule {
		switch state(r) {
		case Running:
			p.Counts.Running++
		case Succeeded:
			p.Counts.Succeeded++
		case Failed:
			p.Counts.Failed++
		default:
			pending = append(pending, r)
		}
	}
	finished := p.Counts.Succeeded + p.Counts.Failed
	p.Stopped = policy == v1alpha1.FailureStop && p.Counts.Failed > 0
	if !suspend && !p.Stopped {
		for _, r := range pending {
			if p.Counts.Running+int32(len(p.Start)) >= max(concurrency, 1) {
				break
			}
			p.Start = append(p.Start, r)
		}
	}
	switch {
	case p.Counts.Running == 0 && len(p.Start) == 0 && (len(pending) == 0 || p.Stopped):
		p.Done = true
		p.Phase = v1alpha1.SuiteSucceeded
		// Stopped at a failure, or no run measured anything: a suite that measured nothing is
		// not Succeeded. Some failed runs among successful ones are counted, not a failure.
		if p.Stopped || p.Counts.Succeeded == 0 {
			p.Phase = v1alpha1.SuiteFailed
		}
	case suspend && p.Counts.Running == 0:
		p.Phase = v1alpha1.SuiteSuspended
	case finished == 0 && p.Counts.Running == 0 && len(p.Start) == 0:
		p.Phase = v1alpha1.SuitePending
	default:
		p.Phase = v1alpha1.SuiteRunning
	}
	return p
}
