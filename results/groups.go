package results

import (
	"fmt"
	"sort"
)

// GroupResult is one device group's figures in a run with spec.groups (docs/fleets.md): what
// its publishers sent, what its subscribers received of what the subscriptions call for, their
// latencies and their sockets' bytes. Definitions as the run's own (docs/results.md), over the
// group's clients only.
type GroupResult struct {
	Name        string `json:"name"`
	Protocol    string `json:"protocol"`
	QoS         int32  `json:"qos"`
	Publishers  int    `json:"publishers"`
	Subscribers int    `json:"subscribers"`
	// Sent, Acked, Unsent: its publishers' measured messages. Received, Expected, Lost,
	// Duplicates, OutOfOrder: its subscribers' deliveries, from every group that publishes to
	// what they subscribe to.
	Sent       int64  `json:"sent"`
	Acked      int64  `json:"acked"`
	Unsent     int64  `json:"unsent"`
	Received   int64  `json:"received"`
	Expected   int64  `json:"expected"`
	Lost       *int64 `json:"lost"`
	Duplicates *int64 `json:"duplicates"`
	OutOfOrder *int64 `json:"outOfOrder"`
	Errors     int64  `json:"errors"`
	// ReceivedInWindow counts its subscribers' deliveries that arrived in the measured window
	// (the run's receivedInWindow, for the group): throughput.receivedPerSecond's numerator.
	ReceivedInWindow int64 `json:"receivedInWindow"`
	// Retained counts the retained messages its subscriptions brought, apart from the others:
	// expected is one per topic a subscription matched on which this run's retained message had
	// surely arrived (acknowledged; written, at QoS 0) when it subscribed. Nil when none.
	Retained *RetainedFigures `json:"retained,omitempty"`
	// BeforeJoining counts deliveries to a group that joins late (spec.groups[].start) of
	// messages sent before every member had subscribed: neither expected nor received.
	BeforeJoining int64 `json:"beforeJoining,omitempty"`
	// Requests are the answers to the group's requests (publish.replyTo); nil when it asks none.
	Requests *RequestFigures `json:"requests,omitempty"`
	// Throughput is over the run's measured window (measuredSeconds); its payload bytes are the
	// group's payload size.
	Throughput Throughput `json:"throughput"`
	// Latency: endToEnd of the messages its subscribers received; publishAck and publishDelay of
	// its publishers; connect of its clients.
	Latency Latencies `json:"latency"`
	Wire    GroupWire `json:"wire"`
	// Network describes the group's own link (spec.groups[].network) as resolved; absent when
	// its clients take the run's.
	Network map[string]any `json:"network,omitempty"`
	// Energy is what the group's radios spent, for a group behind a link of its own with
	// network.radio.energy (Result.Energy says how it is counted).
	Energy *Energy `json:"energy,omitempty"`
}

// GroupWire is what a group's sockets carried, both ways, over the whole run.
type GroupWire struct {
	BytesSent     int64 `json:"bytesSent"`
	BytesReceived int64 `json:"bytesReceived"`
	Connections   int64 `json:"connections"`
	// ConnectBytes is the mean bytes a connection took until usable (handshakes, CONNECT and
	// CONNACK).
	ConnectBytes *float64 `json:"connectBytes"`
}

// RetainedFigures are the retained messages a group's new subscriptions should have brought and
// those that came.
type RetainedFigures struct {
	Expected int64 `json:"expected"`
	Received int64 `json:"received"`
}

// RequestFigures are the answers to a requesting group's messages (publish.replyTo, MQTT 5
// request/response): Expected is one per delivery of a measured request to a responding group's
// subscription, Answered the answers that came (once each), Lost the difference. RoundTrip is
// request sent → answer received, both on the requester's clock.
type RequestFigures struct {
	Expected   int64           `json:"expected"`
	Answered   int64           `json:"answered"`
	Lost       int64           `json:"lost"`
	Duplicates int64           `json:"duplicates"`
	Errors     int64           `json:"errors,omitempty"`
	RoundTrip  *LatencySummary `json:"roundTrip"`
}

// PairResult is the delivery from one publishing group to one subscribing group: what the
// subscriptions call for, what arrived once, lost (expected − received once), duplicates,
// reordering and the end-to-end latency, for the messages of From's publishers at To's
// subscribers only.
type PairResult struct {
	From       string `json:"from"`
	To         string `json:"to"`
	Expected   int64  `json:"expected"`
	Received   int64  `json:"received"`
	Lost       int64  `json:"lost"`
	Duplicates int64  `json:"duplicates"`
	OutOfOrder int64  `json:"outOfOrder"`
	// Retained counts the retained messages of From's publishers that To's new subscriptions
	// brought (not in Received).
	Retained int64           `json:"retained,omitempty"`
	EndToEnd *LatencySummary `json:"endToEnd"`
	// Clock says how From's send times were put on To's clock when the two groups ran in
	// different workers (processes or pods, each with its own clock); nil when one worker ran
	// both, and one clock took both times.
	Clock *PairClock `json:"clock,omitempty"`
}

// PairClock is the clock correction of a pair of groups run by different workers: the
// subscribing worker added CorrectionMicros (the difference of the two workers' measured clock
// offsets from the coordinator's) to each send time before it took the latency. Each offset is
// right to ± half the round trip it was measured over, so the pair's latencies are right to
// ± UncertaintyMicros (docs/measurement.md). Uncorrected: the offsets were not known, and the
// latencies mix two clocks.
type PairClock struct {
	CorrectionMicros  int64 `json:"correctionMicros"`
	UncertaintyMicros int64 `json:"uncertaintyMicros"`
	Uncorrected       bool  `json:"uncorrected,omitempty"`
}

// Group returns the group named name, nil when there is none.
func (r *Result) Group(name string) *GroupResult {
	for i := range r.Groups {
		if r.Groups[i].Name == name {
			return &r.Groups[i]
		}
	}
	return nil
}

// mergeGroups adds up the device-group figures of workers that each ran some of a run's groups
// (a group runs in one worker; loadgen.Options.Groups): a group's figures are its worker's, a
// pair's are the sum of the publishing worker's Expected and the subscribing worker's deliveries
// (and latency, clock and retained counts, which only it has). A subscribing group's Expected
// and Lost follow from its pairs. Nil, nil when no part has groups.
func mergeGroups(parts []*Result) ([]GroupResult, []PairResult, error) {
	var groups []GroupResult
	seen := map[string]int{}
	type key struct{ from, to string }
	pairs := map[key]*PairResult{}
	var order []key
	for i, p := range parts {
		for _, g := range p.Groups {
			if j, ok := seen[g.Name]; ok {
				return nil, nil, fmt.Errorf("merge: device group %s is in worker parts %d and %d: a group runs in one worker", g.Name, j, i)
			}
			seen[g.Name] = i
			groups = append(groups, g)
		}
		for _, pr := range p.Pairs {
			k := key{pr.From, pr.To}
			acc := pairs[k]
			if acc == nil {
				acc = &PairResult{From: pr.From, To: pr.To}
				pairs[k] = acc
				order = append(order, k)
			}
			acc.Expected += pr.Expected
			acc.Received += pr.Received
			acc.Duplicates += pr.Duplicates
			acc.OutOfOrder += pr.OutOfOrder
			acc.Retained += pr.Retained
			if pr.EndToEnd != nil && pr.EndToEnd.Count > 0 {
				acc.EndToEnd = pr.EndToEnd
			} else if acc.EndToEnd == nil {
				acc.EndToEnd = pr.EndToEnd
			}
			if pr.Clock != nil {
				acc.Clock = pr.Clock
			}
		}
	}
	if len(groups) == 0 && len(pairs) == 0 {
		return nil, nil, nil
	}
	// In the spec's order: the order of the parts' groups, which each keep it.
	if spec := parts[0].Spec; spec != nil && len(spec.Groups) > 0 {
		at := map[string]int{}
		for i, g := range spec.Groups {
			at[g.Name] = i
		}
		sort.SliceStable(groups, func(a, b int) bool { return at[groups[a].Name] < at[groups[b].Name] })
		sort.SliceStable(order, func(a, b int) bool {
			if at[order[a].from] != at[order[b].from] {
				return at[order[a].from] < at[order[b].from]
			}
			return at[order[a].to] < at[order[b].to]
		})
	}
	var out []PairResult
	expected, got := map[string]int64{}, map[string]int64{}
	for _, k := range order {
		pr := pairs[k]
		pr.Lost = max(0, pr.Expected-pr.Received)
		expected[pr.To] += pr.Expected
		got[pr.To] += pr.Received
		out = append(out, *pr)
	}
	for i := range groups {
		g := &groups[i]
		if g.Subscribers == 0 {
			continue
		}
		g.Expected = expected[g.Name]
		g.Lost = Int64(max(0, g.Expected-got[g.Name]))
	}
	return groups, out, nil
}
