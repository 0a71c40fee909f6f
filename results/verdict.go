package results

import (
	"fmt"
	"strings"
	"time"

	"github.com/msgbench/msgbench/plan"
)

// UnsentTolerance is the share of an open-loop schedule that may go unsent before the run fails
// for not sustaining its offered load (at least one message per publisher is always tolerated).
// Below it the shortfall is a caveat. Beyond it the latency figures flatter the system: the
// unsent messages, which would have waited longest, have no latency at all.
const UnsentTolerance = 0.01

// Verdict is what a run's own counts allow it to claim, decided from the result alone.
type Verdict struct {
	// Failed runs measured nothing or less than the spec asked for; Reasons say why and what to
	// change, cause first.
	Failed  bool
	Reasons []string
	// Caveats bend part of the figures without failing the run.
	Caveats []Caveat
}

// Judge decides r's verdict: a run that measured nothing, a shorter window than asked, or an
// open-loop load it could not send is not a success, whatever its figures look like. It reads
// only r (spec and counts), so workers, the local runner and the operator judge alike.
func Judge(r *Result) Verdict {
	var v Verdict
	fail := func(format string, args ...any) {
		v.Failed = true
		v.Reasons = append(v.Reasons, fmt.Sprintf(format, args...))
	}
	if r.Spec == nil {
		return v
	}
	p, err := r.Plan()
	if err != nil {
		fail("the spec the result records does not compile: %v", err)
		return v
	}
	t := p.Timing
	switch {
	case r.Sent > 0:
	case p.Messages() > 0 && t.Warmup > 0 && r.MeasuredSeconds == 0:
		fail("measured nothing: the %d messages of workload.messages were all published during the %s warm-up, "+
			"which is left out of every figure; set workload.warmup=0s or raise workload.messages", p.Messages(), t.Warmup)
	case r.MeasuredSeconds == 0:
		fail("measured nothing: publishing stopped before the %s warm-up ended, so no message was sent in the measured window", t.Warmup)
	default:
		fail("measured nothing: no message was published in the %.2f s measured window", r.MeasuredSeconds)
	}
	if r.Sent > 0 && r.Expected > 0 && r.Received == 0 {
		fail("measured nothing at the subscribers: none of the %d deliveries the subscriptions expected arrived, "+
			"so no end-to-end figure exists; check the errors, the topics and the broker", r.Expected)
	}
	if r.Sent > 0 && r.Expected == 0 && r.Acked == 0 && r.Errors >= r.Sent {
		// Publish-only (an HTTP endpoint of the user's own, a run without subscribers): what the
		// other side accepted is all it measures.
		fail("measured nothing: none of the %d messages sent was accepted (%d errors: refused or unanswered); check the errors, "+
			"and an HTTP endpoint's acceptedStatuses", r.Sent, r.Errors)
	}
	if p.Messages() == 0 && r.Sent > 0 {
		if asked := t.Duration; asked > 0 && r.MeasuredSeconds < asked.Seconds()-0.001 {
			fail("measured %.2f s of the %s asked: publishing stopped early", r.MeasuredSeconds, asked)
			v.Caveats = append(v.Caveats, Caveat{Type: CaveatEndedEarly, Value: Float64(r.MeasuredSeconds), Limit: Float64(asked.Seconds()),
				Message: fmt.Sprintf("the measured window lasted %.2f s of the %s asked; rates are over %.2f s", r.MeasuredSeconds, asked, r.MeasuredSeconds)})
		}
	}
	if r.Unsent > 0 {
		scheduled := r.Sent + r.Unsent
		share := float64(r.Unsent) / float64(scheduled)
		what := fmt.Sprintf("the offered load was not sustained: %d of the %d messages the open-loop schedule put in the window "+
			"could not be sent before it ended (%.0f msg/s sent of %.0f msg/s asked)", r.Unsent, scheduled, r.Throughput.SentPerSecond, p.OfferedPerSecond())
		v.Caveats = append(v.Caveats, Caveat{Type: CaveatOfferedLoadNotSustained, Message: what, Value: Float64(100 * share), Limit: Float64(100 * UnsentTolerance)})
		if r.Unsent > unsentAllowance(r, p) {
			fail("%s; %s", what, unsentAdvice(r, p))
		}
	}
	if c := steadyStateCaveat(r, p); c != nil {
		v.Caveats = append(v.Caveats, *c)
	}
	return v
}

// Latency growth that marks a window as not a steady state: the mean end-to-end latency of the
// window's last third at least SteadyGrowthFactor times its first third's, and higher by at least
// SteadyGrowthFloor (loopback latencies of a few hundred microseconds double with a GC pause;
// that is noise, not a backlog).
const (
	SteadyGrowthFactor = 2.0
	SteadyGrowthFloor  = 50 * time.Millisecond
)

// steadyStateCaveat says when the end-to-end latency climbed through the window (a broker or
// link that does not keep up queues more every second, so the latency grows without bound): the
// percentiles then describe how fast the backlog grew, not a steady state. Nil otherwise, and
// with fewer than three timeline intervals of deliveries in the window.
func steadyStateCaveat(r *Result, p *plan.Plan) *Caveat {
	var in []TimelinePoint
	for _, tp := range r.Timeline {
		if tp.EndToEndCount > 0 && tp.T <= r.MeasuredSeconds+1e-9 {
			in = append(in, tp)
		}
	}
	if len(in) < 3 {
		return nil
	}
	third := len(in) / 3
	mean := func(ps []TimelinePoint) float64 {
		var sum float64
		var n int64
		for _, p := range ps {
			sum += p.EndToEndMeanMicros * float64(p.EndToEndCount)
			n += p.EndToEndCount
		}
		return sum / float64(n)
	}
	first, last := mean(in[:third]), mean(in[len(in)-third:])
	if last < SteadyGrowthFactor*first || last-first < float64(SteadyGrowthFloor.Microseconds()) {
		return nil
	}
	return &Caveat{Type: CaveatNotSteadyState, Value: Float64(last / 1000), Limit: Float64(first / 1000),
		Message: fmt.Sprintf("not a steady state: the mean end-to-end latency climbed from %.1f ms in the first third of the window to %.1f ms in its last: "+
			"a backlog grew through the window (the broker or the link did not keep up), so the latency percentiles describe its growth, and a longer window would show more; "+
			"lower %s", first/1000, last/1000, loadFields(r, p, "or the fleet"))}
}

// unsentAdvice is what to change when the open-loop schedule went unsent: the load the spec
// asks for, in its own fields — unless clients failed, whose errors (which come first in the
// message) stopped the publishers: a broker that refuses a payload or a client says so, and a
// lower rate would not help.
func unsentAdvice(r *Result, p *plan.Plan) string {
	if r.Errors > 0 {
		return fmt.Sprintf("the publishers stopped on the run's %d errors (their cause comes first), not for want of capacity: fix that cause, not the load", r.Errors)
	}
	if len(r.Spec.Groups) == 0 {
		return fmt.Sprintf("the link or broker cannot carry workload.rate=%.0f: lower it, or set workload.rate=0 (closed loop) to measure the most it carries", p.OfferedPerSecond())
	}
	return "the link or broker cannot carry the load the groups offer: lower " + loadFields(r, p, "") +
		", or leave a group's publish.rate and publish.interval out (closed loop) to measure the most it carries"
}

// loadFields names the fields that set the run's open-loop load, with their values: workload.rate
// in a flat spec; each publishing group's publish.rate or publish.interval ("raise" for an
// interval) with spec.groups. more is appended to a flat spec's ("or the fleet").
func loadFields(r *Result, p *plan.Plan, more string) string {
	if r.Spec == nil || len(r.Spec.Groups) == 0 {
		s := fmt.Sprintf("workload.rate (%.0f msg/s)", p.OfferedPerSecond())
		if more != "" {
			s += " " + more
		}
		return s
	}
	var fields []string
	for _, g := range r.Spec.Groups {
		switch pub := g.Publish; {
		case pub == nil:
		case pub.Interval != nil:
			fields = append(fields, fmt.Sprintf("spec.groups[%s]'s load (raise publish.interval, %s a message per device, or lower count, %d devices)", g.Name, pub.Interval.Duration, g.Count))
		case pub.Rate != nil && *pub.Rate > 0:
			fields = append(fields, fmt.Sprintf("spec.groups[%s].publish.rate (%d msg/s)", g.Name, *pub.Rate))
		}
	}
	if len(fields) == 0 {
		return "the groups' load"
	}
	return strings.Join(fields, " or ")
}

// Apply records v in r: the phase, the reasons after r's message (once), the caveats
// (once per type and message).
func (v Verdict) Apply(r *Result) {
	for _, c := range v.Caveats {
		r.AddCaveat(c)
	}
	if !v.Failed {
		return
	}
	r.Phase = "Failed"
	// The errors the run already reports come first: they are the cause (a broker gone), the
	// reasons what followed from it (the window ended early).
	for _, reason := range v.Reasons {
		if r.Message == "" {
			r.Message = reason
		} else if !strings.Contains(r.Message, reason) {
			r.Message += "; " + reason
		}
	}
	for i := range r.Workers {
		if r.Workers[i].Phase == "" || len(r.Workers) == 1 {
			r.Workers[i].Phase = r.Phase
		}
	}
}

// unsentAllowance is how many unsent messages still count as a sustained load (a caveat, not a
// failure): the largest of UnsentTolerance of the schedule, one message per publisher (due as the
// window closed while the previous one was in flight), and the messages the schedule calls for
// in the plan's StallAllowance plus the load generator's own longest stall in the window (measured by a
// probe in its process, which a broker or link cannot inflate). Nothing the system under test
// does widens it: the old rule (twice the slowest acknowledgement) grew with the very stall it
// should catch, so a broker frozen for 8 s in a 5 s run passed.
func unsentAllowance(r *Result, p *plan.Plan) int64 {
	scheduled := r.Sent + r.Unsent
	stall := p.StallAllowance() + time.Duration(r.Resources.LoadgenStallMicros)*time.Microsecond
	return max(int64(UnsentTolerance*float64(scheduled)), int64(p.Publishers()), int64(p.OfferedPerSecond()*stall.Seconds()))
}

// AddCaveat adds c unless a caveat of the same type and message is there already.
func (r *Result) AddCaveat(c Caveat) {
	for _, have := range r.Caveats {
		if have.Type == c.Type && have.Message == c.Message {
			return
		}
	}
	r.Caveats = append(r.Caveats, c)
}

// Plan is the plan of the spec r records — the spec the run ran, compiled as admitted — from
// which the verdict, the summary and the reports read what was asked; nil without a spec.
func (r *Result) Plan() (*plan.Plan, error) {
	if r.Spec == nil {
		return nil, nil
	}
	return plan.Compile(r.Spec, plan.Admitted)
}
