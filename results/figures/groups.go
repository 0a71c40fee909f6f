package figures

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/msgbench/msgbench/internal/similar"
	"github.com/msgbench/msgbench/results"
)

// A run with device groups (spec.groups, docs/fleets.md) has figures per group and per pair of
// groups (results.GroupResult, results.PairResult). They are named by the same paths, under the
// group or the pair: groups.<group>.<figure> (groups.sensors.latency.endToEnd.p99) and
// pairs.<from>.<to>.<figure> (pairs.sensors.backend.lost). Only the figures a group or a pair
// has in result.json can be named so: GroupFigures and PairFigures list them, by their names
// within the group or pair.

// Prefixes of the names of group and pair figures.
const (
	GroupPrefix = "groups."
	PairPrefix  = "pairs."
)

// Conditions under which a group's figures are absent.
const (
	noGroupPublishers  = "the group has no publishers"
	noGroupSubscribers = "the group has no subscribers"
)

// groupLatencyAbsent says when a group has no such latency.
var groupLatencyAbsent = map[string]string{
	results.HistEndToEnd:     noGroupSubscribers + ", or they received no message with msgbench's header (payload ≥ 16 bytes)",
	results.HistPublishAck:   noGroupPublishers + ", or nothing of theirs was acknowledged (QoS 0)",
	results.HistPublishDelay: noGroupPublishers + ", or they publish in closed loop",
	results.HistConnect:      "none of the group's clients connected",
	results.HistFirstMessage: noGroupPublishers + ", or no first message of theirs was received",
}

// groupLatencyOf says whose a group's latency is.
var groupLatencyOf = map[string]string{
	results.HistEndToEnd:     "at the group's subscribers",
	results.HistPublishAck:   "of the group's publishers",
	results.HistPublishDelay: "of the group's publishers",
	results.HistConnect:      "of the group's clients",
	results.HistFirstMessage: "of the group's publishers",
}

// groupValue is a figure's value in one group of r (r for the run's measured window).
type groupValue func(r *results.Result, g *results.GroupResult) (float64, bool)

// pairValue is a figure's value in one pair of groups.
type pairValue func(p *results.PairResult) (float64, bool)

func publishing(v func(g *results.GroupResult) float64) groupValue {
	return func(_ *results.Result, g *results.GroupResult) (float64, bool) { return v(g), g.Publishers > 0 }
}

func subscribing(v func(g *results.GroupResult) float64) groupValue {
	return func(_ *results.Result, g *results.GroupResult) (float64, bool) { return v(g), g.Subscribers > 0 }
}

// noRequests is when a group has no request figures.
const noRequests = "the group asks nothing (its publish has no replyTo)"

// noRetained is when a group has no retained figures.
const noRetained = "no retained message of the run (publish.retain) was due to or reached the group's subscriptions"

func retained(v func(f *results.RetainedFigures) int64) groupValue {
	return func(_ *results.Result, g *results.GroupResult) (float64, bool) {
		if g.Retained == nil {
			return 0, false
		}
		return f64(v(g.Retained)), true
	}
}

func groupPtr[T int64 | float64](get func(g *results.GroupResult) *T) groupValue {
	return func(_ *results.Result, g *results.GroupResult) (float64, bool) {
		if p := get(g); p != nil {
			return float64(*p), true
		}
		return 0, false
	}
}

// groupRate is a rate of the group's: absent without a measured window or without the clients
// that make it (publishers for sending rates, subscribers for receiving ones).
func groupRate(v func(t *results.Throughput) float64, receiving bool) groupValue {
	return func(r *results.Result, g *results.GroupResult) (float64, bool) {
		has := g.Publishers > 0
		if receiving {
			has = g.Subscribers > 0
		}
		return v(&g.Throughput), has && r.MeasuredSeconds > 0
	}
}

// buildGroup lists the figures of one group, named within it, in All's order.
func buildGroup() []Figure {
	window := ", or " + noWindow
	fs := []Figure{
		{Name: "sent", Kind: Count, Definition: "messages the group's publishers published in the measured window", AbsentWhen: noGroupPublishers,
			group: publishing(func(g *results.GroupResult) float64 { return f64(g.Sent) })},
		{Name: "acked", Kind: Count, Definition: "of the messages the group sent, those the broker acknowledged", AbsentWhen: noGroupPublishers,
			group: publishing(func(g *results.GroupResult) float64 { return f64(g.Acked) })},
		{Name: "received", Kind: Count, Definition: "deliveries to the group's subscribers in the measured window, from every group they subscribe to, duplicates included", AbsentWhen: noGroupSubscribers,
			group: subscribing(func(g *results.GroupResult) float64 { return f64(g.Received) })},
		{Name: "expected", Kind: Count, Definition: "deliveries the group's subscriptions call for", AbsentWhen: noGroupSubscribers,
			group: subscribing(func(g *results.GroupResult) float64 { return f64(g.Expected) })},
		{Name: "lost", Kind: Count, Definition: "expected − unique deliveries at the group's subscribers", AbsentWhen: noGroupSubscribers,
			group: groupPtr(func(g *results.GroupResult) *int64 { return g.Lost })},
		{Name: "lostPercent", Kind: Percent, Definition: "lost / expected × 100 of the group (derived; not a field of result.json)", AbsentWhen: noGroupSubscribers + ", or expected is 0",
			group: func(_ *results.Result, g *results.GroupResult) (float64, bool) {
				if g.Lost == nil || g.Expected <= 0 {
					return 0, false
				}
				return float64(*g.Lost) / float64(g.Expected) * 100, true
			}},
		{Name: "duplicates", Kind: Count, Definition: "deliveries of a message the group's subscriber already had", AbsentWhen: noGroupSubscribers,
			group: groupPtr(func(g *results.GroupResult) *int64 { return g.Duplicates })},
		{Name: "outOfOrder", Kind: Count, Definition: "deliveries to the group's subscribers that arrived after a later message of the same publisher", AbsentWhen: noGroupSubscribers,
			group: groupPtr(func(g *results.GroupResult) *int64 { return g.OutOfOrder })},
		{Name: "errors", Kind: Count, Definition: "failed operations of the group's clients",
			group: func(_ *results.Result, g *results.GroupResult) (float64, bool) { return f64(g.Errors), true }},
		{Name: "unsent", Kind: Count, Definition: "open loop: messages of the group's schedule in the measured window that could not be sent before it ended", AbsentWhen: noGroupPublishers,
			group: publishing(func(g *results.GroupResult) float64 { return f64(g.Unsent) })},
		{Name: "retained.expected", Kind: Count, Definition: "retained messages the group's new subscriptions should have brought: one per topic a subscription matched on which the run's retained message had surely arrived when it subscribed (not in expected)", AbsentWhen: noRetained,
			group: retained(func(f *results.RetainedFigures) int64 { return f.Expected })},
		{Name: "retained.received", Kind: Count, Definition: "retained messages the group's new subscriptions brought (not in received)", AbsentWhen: noRetained,
			group: retained(func(f *results.RetainedFigures) int64 { return f.Received })},
		{Name: "beforeJoining", Kind: Count, Definition: "deliveries to a group that joins late (start) of messages sent before all its members had subscribed: neither expected nor received", AbsentWhen: noGroupSubscribers,
			group: subscribing(func(g *results.GroupResult) float64 { return f64(g.BeforeJoining) })},

		{Name: "throughput.offeredPerSecond", Kind: Rate, Definition: "the group's publish rate asked for (publish.rate, or count / publish.interval)", AbsentWhen: noGroupPublishers + ", or they publish in closed loop",
			group: func(_ *results.Result, g *results.GroupResult) (float64, bool) {
				return g.Throughput.OfferedPerSecond, g.Publishers > 0 && g.Throughput.OfferedPerSecond > 0
			}},
		{Name: "throughput.sentPerSecond", Kind: Rate, Definition: "the group's sent / measuredSeconds", AbsentWhen: noGroupPublishers + window,
			group: groupRate(func(t *results.Throughput) float64 { return t.SentPerSecond }, false)},
		{Name: "throughput.receivedPerSecond", Kind: Rate, Definition: "deliveries to the group's subscribers in the measured window / measuredSeconds", AbsentWhen: noGroupSubscribers + window,
			group: groupRate(func(t *results.Throughput) float64 { return t.ReceivedPerSecond }, true)},
		{Name: "throughput.sentBytesPerSecond", Kind: ByteRate, Definition: "payload bytes the group's publishers sent per second", AbsentWhen: noGroupPublishers + window,
			group: groupRate(func(t *results.Throughput) float64 { return t.SentBytesPerSecond }, false)},
		{Name: "throughput.receivedBytesPerSecond", Kind: ByteRate, Definition: "payload bytes the group's subscribers received per second", AbsentWhen: noGroupSubscribers + window,
			group: groupRate(func(t *results.Throughput) float64 { return t.ReceivedBytesPerSecond }, true)},
	}
	for _, h := range results.HistogramNames {
		for _, st := range latencyStats {
			get := st.get
			fs = append(fs, Figure{
				Name: "latency." + h + "." + st.name, Kind: Duration, Definition: st.what + " of the " + latencies[h].def + ", " + groupLatencyOf[h],
				AbsentWhen: groupLatencyAbsent[h], Quantile: st.quantile,
				group: func(_ *results.Result, g *results.GroupResult) (float64, bool) {
					if s := latencyOf(&g.Latency, h); s != nil {
						return get(s), true
					}
					return 0, false
				},
			})
		}
	}
	asked := func(v func(q *results.RequestFigures) int64) groupValue {
		return func(_ *results.Result, g *results.GroupResult) (float64, bool) {
			if g.Requests == nil {
				return 0, false
			}
			return f64(v(g.Requests)), true
		}
	}
	fs = append(fs, []Figure{
		{Name: "requests.expected", Kind: Count, Definition: "answers the group's requests call for: one per delivery of a measured request to a responding group's subscription", AbsentWhen: noRequests,
			group: asked(func(q *results.RequestFigures) int64 { return q.Expected })},
		{Name: "requests.answered", Kind: Count, Definition: "answers the group's devices got (once each)", AbsentWhen: noRequests,
			group: asked(func(q *results.RequestFigures) int64 { return q.Answered })},
		{Name: "requests.lost", Kind: Count, Definition: "requests.expected − requests.answered: the request or its answer was lost", AbsentWhen: noRequests,
			group: asked(func(q *results.RequestFigures) int64 { return q.Lost })},
		{Name: "requests.duplicates", Kind: Count, Definition: "answers a device already had", AbsentWhen: noRequests,
			group: asked(func(q *results.RequestFigures) int64 { return q.Duplicates })},
	}...)
	for _, st := range latencyStats {
		get := st.get
		fs = append(fs, Figure{
			Name: "requests.roundTrip." + st.name, Kind: Duration, Definition: st.what + " of the round trip: a request's intended send time → its answer at the device, on the device's clock",
			AbsentWhen: noRequests + ", or no answer came", Quantile: st.quantile,
			group: func(_ *results.Result, g *results.GroupResult) (float64, bool) {
				if g.Requests == nil || g.Requests.RoundTrip == nil {
					return 0, false
				}
				return get(g.Requests.RoundTrip), true
			},
		})
	}
	for _, f := range energyFigures {
		get := f.get
		fs = append(fs, Figure{Name: "energy." + f.name, Kind: f.kind, Definition: f.what, AbsentWhen: f.absent,
			group: func(_ *results.Result, g *results.GroupResult) (float64, bool) { return get(g.Energy) }})
	}
	return append(fs, []Figure{
		{Name: "wire.bytesSent", Kind: Bytes, Definition: "bytes the group's sockets sent, set-up included",
			group: func(_ *results.Result, g *results.GroupResult) (float64, bool) { return f64(g.Wire.BytesSent), true }},
		{Name: "wire.bytesReceived", Kind: Bytes, Definition: "bytes the group's sockets received, set-up included",
			group: func(_ *results.Result, g *results.GroupResult) (float64, bool) {
				return f64(g.Wire.BytesReceived), true
			}},
		{Name: "wire.connectBytes", Kind: Bytes, Definition: "mean bytes per connection of the group until its session was usable (handshakes)", AbsentWhen: "none of the group's clients connected",
			group: groupPtr(func(g *results.GroupResult) *float64 { return g.Wire.ConnectBytes })},
	}...)
}

// buildPair lists the figures of one pair of groups, named within it.
func buildPair() []Figure {
	count := func(v func(p *results.PairResult) int64) pairValue {
		return func(p *results.PairResult) (float64, bool) { return f64(v(p)), true }
	}
	fs := []Figure{
		{Name: "expected", Kind: Count, Definition: "deliveries of the publishing group's measured messages the subscribing group's subscriptions call for",
			pair: count(func(p *results.PairResult) int64 { return p.Expected })},
		{Name: "received", Kind: Count, Definition: "of those, the ones that arrived (once)",
			pair: count(func(p *results.PairResult) int64 { return p.Received })},
		{Name: "lost", Kind: Count, Definition: "expected − received",
			pair: count(func(p *results.PairResult) int64 { return p.Lost })},
		{Name: "lostPercent", Kind: Percent, Definition: "lost / expected × 100 of the pair (derived; not a field of result.json)",
			pair: func(p *results.PairResult) (float64, bool) {
				if p.Expected <= 0 {
					return 0, false
				}
				return float64(p.Lost) / float64(p.Expected) * 100, true
			}},
		{Name: "duplicates", Kind: Count, Definition: "deliveries of a message the subscriber already had",
			pair: count(func(p *results.PairResult) int64 { return p.Duplicates })},
		{Name: "outOfOrder", Kind: Count, Definition: "deliveries that arrived after a later message of the same publisher",
			pair: count(func(p *results.PairResult) int64 { return p.OutOfOrder })},
		{Name: "retained", Kind: Count, Definition: "retained messages of the publishing group that the subscribing group's new subscriptions brought (not in received)",
			pair: count(func(p *results.PairResult) int64 { return p.Retained })},
	}
	for _, st := range latencyStats {
		get := st.get
		fs = append(fs, Figure{
			Name: "endToEnd." + st.name, Kind: Duration, Definition: st.what + " of the end-to-end latency of the pair's messages",
			AbsentWhen: "no message of the pair with msgbench's header (payload ≥ 16 bytes) was received", Quantile: st.quantile,
			pair: func(p *results.PairResult) (float64, bool) {
				if p.EndToEnd == nil {
					return 0, false
				}
				return get(p.EndToEnd), true
			},
		})
	}
	return fs
}

var (
	groupFigures = buildGroup()
	pairFigures  = buildPair()
	groupByName  = index(groupFigures)
	pairByName   = index(pairFigures)
)

func index(fs []Figure) map[string]Figure {
	m := make(map[string]Figure, len(fs))
	for _, f := range fs {
		m[f.Name] = f
	}
	return m
}

// GroupFigures returns the figures every device group has, named within the group (sent,
// latency.endToEnd.p99): groups.<group>.<name> names one of them in a run. The slice is a copy.
func GroupFigures() []Figure { return append([]Figure(nil), groupFigures...) }

// PairFigures returns the figures of a pair of groups, named within the pair (lost,
// endToEnd.p99): pairs.<from>.<to>.<name> names one of them. The slice is a copy.
func PairFigures() []Figure { return append([]Figure(nil), pairFigures...) }

// pairOf returns r's pair from → to, nil when it has none.
func pairOf(r *results.Result, from, to string) *results.PairResult {
	for i := range r.Pairs {
		if r.Pairs[i].From == from && r.Pairs[i].To == to {
			return &r.Pairs[i]
		}
	}
	return nil
}

// latencyOf returns l's summary of the named histogram, nil when not measured.
func latencyOf(l *results.Latencies, histogram string) *results.LatencySummary {
	switch histogram {
	case results.HistEndToEnd:
		return l.EndToEnd
	case results.HistPublishAck:
		return l.PublishAck
	case results.HistPublishDelay:
		return l.PublishDelay
	case results.HistConnect:
		return l.Connect
	case results.HistFirstMessage:
		return l.FirstMessage
	}
	return nil
}

// lookupGroup is Lookup of groups.<group>.<figure>.
func lookupGroup(name string) (Figure, error) {
	rest := strings.TrimPrefix(name, GroupPrefix)
	group, base, ok := strings.Cut(rest, ".")
	if !ok || group == "" || base == "" {
		return Figure{}, fmt.Errorf("unknown figure %s: a device group's figures are groups.<group>.<figure>, e.g. groups.sensors.latency.endToEnd.p99", name)
	}
	t, ok := groupByName[base]
	if !ok {
		return Figure{}, unknownWithin(name, GroupPrefix+group+".", base, groupFigures, "a device group")
	}
	f := t
	f.Name, f.Group, f.Base, f.group = name, group, base, nil
	f.value = func(r *results.Result) (float64, bool) {
		g := r.Group(group)
		if g == nil {
			return 0, false
		}
		return t.group(r, g)
	}
	return f, nil
}

// lookupPair is Lookup of pairs.<from>.<to>.<figure>.
func lookupPair(name string) (Figure, error) {
	parts := strings.SplitN(strings.TrimPrefix(name, PairPrefix), ".", 3)
	if len(parts) < 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return Figure{}, fmt.Errorf("unknown figure %s: the figures of a pair of device groups are pairs.<publishing group>.<subscribing group>.<figure>, e.g. pairs.sensors.backend.lost", name)
	}
	from, to, base := parts[0], parts[1], parts[2]
	t, ok := pairByName[base]
	if !ok {
		prefix := PairPrefix + from + "." + to + "."
		if _, ok := pairByName[strings.TrimPrefix(base, "latency.")]; ok {
			// A group's latencies are latency.endToEnd.…, a pair's (result.json's pairs[].endToEnd) not.
			return Figure{}, fmt.Errorf("unknown figure %s (did you mean %s%s? a pair's latency is endToEnd, as in result.json's pairs)", name, prefix, strings.TrimPrefix(base, "latency."))
		}
		return Figure{}, unknownWithin(name, prefix, base, pairFigures, "a pair of groups")
	}
	f := t
	f.Name, f.Group, f.To, f.Base, f.pair = name, from, to, base, nil
	f.value = func(r *results.Result) (float64, bool) {
		p := pairOf(r, from, to)
		if p == nil {
			return 0, false
		}
		return t.pair(p)
	}
	return f, nil
}

// unknownWithin says that base is no figure of a group (or pair), naming the near ones with
// prefix, and the figures there are.
func unknownWithin(name, prefix, base string, fs []Figure, what string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "unknown figure %s", name)
	var names []string
	for _, f := range fs {
		names = append(names, f.Name)
	}
	if near := nearestIn(base, names); len(near) > 0 {
		for i := range near {
			near[i] = prefix + near[i]
		}
		fmt.Fprintf(&b, " (did you mean %s?)", strings.Join(near, " or "))
	} else if _, whole := byName[base]; whole {
		fmt.Fprintf(&b, "; %s is a figure of the whole run, which %s has not", base, what)
	}
	// The figures there are, latencies written once per histogram.
	var list []string
	seen := map[string]bool{}
	for _, f := range fs {
		n := f.Name
		if f.Kind == Duration {
			i := strings.LastIndex(n, ".")
			n = n[:i] + ".<statistic>"
		}
		if !seen[n] {
			seen[n] = true
			list = append(list, n)
		}
	}
	fmt.Fprintf(&b, "; %s has %s (docs/objectives.md)", what, strings.Join(list, ", "))
	return errors.New(b.String())
}

// nearestIn is nearest over names.
func nearestIn(name string, names []string) []string {
	var prefixed []string
	for _, n := range names {
		if strings.EqualFold(n, name) {
			return []string{n}
		}
		if strings.HasPrefix(strings.ToLower(n), strings.ToLower(name)) {
			prefixed = append(prefixed, n)
		}
	}
	if len(prefixed) > 0 && len(prefixed) <= 3 {
		sort.Strings(prefixed)
		return prefixed
	}
	best, bestD := []string(nil), 1+max(2, len(name)/6)
	for _, n := range names {
		d := similar.Distance(strings.ToLower(name), strings.ToLower(n))
		switch {
		case d < bestD:
			best, bestD = []string{n}, d
		case d == bestD:
			best = append(best, n)
		}
	}
	sort.Strings(best)
	if len(best) > 3 {
		return nil
	}
	return best
}

// Unmatched returns, for a figure of a device group or a pair of groups, an error when r does
// not have that group (naming it and the groups r has) or, for a pair, when r has no delivery
// from one group to the other; nil when it does, and for the run's own figures.
func (f Figure) Unmatched(r *results.Result) error {
	if f.Group == "" || r == nil {
		return nil
	}
	var names []string
	for _, g := range r.Groups {
		names = append(names, g.Name)
	}
	for _, n := range []string{f.Group, f.To} {
		if n != "" && !slices.Contains(names, n) {
			return UnknownGroup(n, names)
		}
	}
	if f.To != "" && pairOf(r, f.Group, f.To) == nil {
		return fmt.Errorf("no delivery from group %s to group %s: the subscriptions of %s match none of the topics %s publishes to, or it sent nothing measured", f.Group, f.To, f.To, f.Group)
	}
	return nil
}

// UnknownGroup is the error for a figure naming group when the run's device groups are groups:
// it names the group, the nearest one when there is a likely typo, and those there are.
func UnknownGroup(group string, groups []string) error {
	if len(groups) == 0 {
		return fmt.Errorf("no device group %s: the run has no device groups (spec.groups); groups.<group>.<figure> and pairs.<from>.<to>.<figure> name figures of a run with groups", group)
	}
	msg := fmt.Sprintf("no device group %s", group)
	near := nearestIn(group, groups)
	if len(near) == 0 { // a part of a name (backend for edge-backend), or a name and more
		for _, g := range groups {
			if strings.Contains(g, group) || strings.Contains(group, g) {
				near = append(near, g)
			}
		}
		if len(near) > 3 {
			near = nil
		}
	}
	if len(near) > 0 {
		msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(near, " or "))
	}
	return fmt.Errorf("%s; the run's groups are %s", msg, strings.Join(groups, ", "))
}
