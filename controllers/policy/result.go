package policy

import (
	"fmt"
	"math"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/results"
)

// MeasurementConditions judge a merged result for the status: whether an open loop sustained its
// offered load, and the caveats that bend its figures.
func MeasurementConditions(r *results.Result) []metav1.Condition {
	var cs []metav1.Condition
	if p, err := r.Plan(); err == nil && p != nil && p.OfferedPerSecond() > 0 && p.Messages() == 0 {
		c := metav1.Condition{Type: v1alpha1.ConditionOfferedLoadSustained, Status: metav1.ConditionTrue, Reason: "AllSent",
			Message: fmt.Sprintf("sent all %d messages the schedule put in the window (%.0f msg/s)", r.Sent, p.OfferedPerSecond())}
		if r.Unsent > 0 {
			c.Status, c.Reason = metav1.ConditionFalse, results.CaveatOfferedLoadNotSustained
			c.Message = fmt.Sprintf("%d of the %d messages the schedule put in the window were not sent (%.0f msg/s sent of %.0f msg/s asked)",
				r.Unsent, r.Sent+r.Unsent, r.Throughput.SentPerSecond, p.OfferedPerSecond())
		}
		cs = append(cs, c)
	}
	c := metav1.Condition{Type: v1alpha1.ConditionCaveats, Status: metav1.ConditionFalse, Reason: "None", Message: "nothing was seen that bends the figures"}
	if len(r.Caveats) > 0 {
		var types, msgs []string
		for _, cv := range r.Caveats {
			if !slices.Contains(types, cv.Type) {
				types = append(types, cv.Type)
			}
			msgs = append(msgs, cv.Type+": "+cv.Message)
		}
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, strings.Join(types, ","), strings.Join(msgs, "; ")
	}
	cs = append(cs, c)
	if r.ObjectivesMet != nil {
		o := metav1.Condition{Type: v1alpha1.ConditionObjectivesMet, Status: metav1.ConditionTrue, Reason: "ObjectivesMet"}
		var lines []string
		for _, ob := range r.Objectives {
			switch {
			case !ob.Met:
				lines = append(lines, ob.Objective+": "+ob.Reason)
			case *r.ObjectivesMet:
				lines = append(lines, ob.Objective+": measured "+ob.Measured)
			}
		}
		if !*r.ObjectivesMet {
			o.Status, o.Reason = metav1.ConditionFalse, "ObjectivesMissed"
		}
		o.Message = strings.Join(lines, "; ")
		cs = append(cs, o)
	}
	return cs
}

// Summarize takes the headline numbers of a result for the status (integers: no floats in the API).
func Summarize(r *results.Result) *v1alpha1.ResultSummary {
	s := &v1alpha1.ResultSummary{Sent: r.Sent, Received: r.Received, ReceivedPerSecond: int64(r.Throughput.ReceivedPerSecond)}
	if r.Lost != nil {
		s.Lost = *r.Lost
	}
	if r.Duplicates != nil {
		s.Duplicates = *r.Duplicates
	}
	if l := r.Latency.EndToEnd; l != nil {
		s.LatencyP50Micros, s.LatencyP99Micros = &l.P50Micros, &l.P99Micros
	}
	if l := r.Latency.Connect; l != nil {
		s.ConnectP50Micros = &l.P50Micros
	}
	if b := r.Wire.BytesPerMessage; b != nil {
		v := int64(math.Round(*b))
		s.WireBytesPerMessage = &v
	}
	millis := func(sec *float64) *int64 {
		if sec == nil {
			return nil
		}
		v := int64(math.Round(*sec * 1000))
		if v == 0 && *sec > 0 {
			v = 1 // a measured CPU under half a millisecond is not a zero: whole ms round it up
		}
		return &v
	}
	s.BrokerCPUMillis, s.BrokerMaxRSSBytes = millis(r.Resources.BrokerCPUSeconds), r.Resources.BrokerMaxRSSBytes
	s.GatewayCPUMillis, s.GatewayMaxRSSBytes = millis(r.Resources.GatewayCPUSeconds), r.Resources.GatewayMaxRSSBytes
	s.Groups = summarizeGroups(r.Groups)
	return s
}

// maxGroupSummaries is the most groups the status lists (its schema's MaxItems, spec.groups').
const maxGroupSummaries = 32

// summarizeGroups are the headline numbers of a run's device groups, in the result's order
// (the spec's); nil for a run without groups.
func summarizeGroups(groups []results.GroupResult) []v1alpha1.GroupSummary {
	var out []v1alpha1.GroupSummary
	for _, g := range groups[:min(len(groups), maxGroupSummaries)] {
		gs := v1alpha1.GroupSummary{Name: g.Name, Sent: g.Sent, Received: g.Received}
		if g.Lost != nil {
			lost := *g.Lost
			gs.Lost = &lost
		}
		if l := g.Latency.EndToEnd; l != nil {
			p99 := l.P99Micros
			gs.EndToEndP99Micros = &p99
		}
		out = append(out, gs)
	}
	return out
}
