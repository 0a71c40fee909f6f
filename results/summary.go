package results

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/plan"
)

// WriteSummary prints the headline figures of r as an aligned table for a terminal.
func WriteSummary(w io.Writer, r *Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "  %s\t%s\n", k, v) }
	fmt.Fprintf(tw, "%s: %s", r.Name, r.Phase)
	if r.Message != "" {
		fmt.Fprintf(tw, " (%s)", r.Message)
	}
	fmt.Fprintln(tw)
	if r.Spec != nil && len(r.Spec.Groups) > 0 {
		for _, l := range r.GroupLines() {
			row(l.Key, l.Text)
		}
	} else if r.Spec != nil {
		s := r.Spec
		row("protocol", fmt.Sprintf("%s, QoS %d, %d B payload, %d pub / %d sub on %d topics", protocolSpoken(r), s.QoS,
			s.Workload.PayloadBytes, s.Workload.Publishers, s.Workload.Subscribers, s.Workload.Topics))
	}
	if r.Environment.Broker != "" {
		row("broker", r.Environment.Broker)
	}
	if n := networkSummary(r.Network); n != "" {
		row("network", n)
	}
	if st := stepsSummary(r.NetworkTimeline()); st != "" {
		row("network steps", st)
	}
	if e := environmentSummary(r.Environment); e != "" {
		row("environment", e)
	}
	measured := fmt.Sprintf("%.2f s", r.MeasuredSeconds)
	if p, err := r.Plan(); err == nil && p != nil && p.Messages() == 0 {
		if asked := p.Timing.Duration; asked > 0 && r.MeasuredSeconds < asked.Seconds()-0.001 {
			measured += fmt.Sprintf(" of the %s asked", asked)
		}
	}
	row("measured", measured)
	msgs := fmt.Sprintf("sent %d, received %d of %d expected", r.Sent, r.Received, r.Expected)
	if r.Unsent > 0 {
		msgs = fmt.Sprintf("sent %d (%d more scheduled but unsent), received %d of %d expected", r.Sent, r.Unsent, r.Received, r.Expected)
	}
	if r.ReceivedAfterWindow > 0 {
		msgs += fmt.Sprintf(" (%d of them after the window, in the drain)", r.ReceivedAfterWindow)
	}
	row("messages", msgs)
	if c := churnSummary(r.Churn); c != "" {
		row("churn", c)
	}
	row("delivery", fmt.Sprintf("lost %s, duplicates %s, out of order %s, errors %d", opt(r.Lost), opt(r.Duplicates), opt(r.OutOfOrder), r.Errors))
	tp := fmt.Sprintf("%.0f msg/s sent, %.0f msg/s received in the window (%s/s payload)", r.Throughput.SentPerSecond,
		r.Throughput.ReceivedPerSecond, bytesHuman(r.Throughput.ReceivedBytesPerSecond))
	if r.Throughput.OfferedPerSecond > 0 {
		tp = fmt.Sprintf("%.0f msg/s offered, ", r.Throughput.OfferedPerSecond) + tp
	}
	row("throughput", tp)
	for _, l := range []struct {
		name string
		s    *LatencySummary
	}{{"end-to-end", r.Latency.EndToEnd}, {"publish ack", r.Latency.PublishAck}, {"publish delay", r.Latency.PublishDelay},
		{"connect", r.Latency.Connect}, {"first message", r.Latency.FirstMessage}} {
		if l.s == nil {
			continue
		}
		row(l.name, fmt.Sprintf("p50 %s  p90 %s  p99 %s  p99.9 %s  max %s  (n=%d)", us(l.s.P50Micros), us(l.s.P90Micros),
			us(l.s.P99Micros), us(l.s.P999Micros), us(l.s.MaxMicros), l.s.Count))
	}
	if cr := r.ConnectRamp; cr != nil && cr.Seconds > 0 {
		target := "all at once"
		if cr.TargetPerSecond > 0 {
			target = fmt.Sprintf("target %d/s", cr.TargetPerSecond)
		}
		row("connect rate", fmt.Sprintf("%.0f/s achieved, %d connections in %.2f s (%s)", cr.PerSecond, cr.Connections, cr.Seconds, target))
	}
	var wire []string
	if r.Wire.BytesPerMessage != nil {
		wire = append(wire, fmt.Sprintf("%.1f B/msg all traffic", *r.Wire.BytesPerMessage))
	}
	if r.Wire.PublishBytesPerMessage != nil {
		wire = append(wire, fmt.Sprintf("%.1f B/msg publisher uplink", *r.Wire.PublishBytesPerMessage))
	}
	if r.Wire.ConnectBytes != nil {
		wire = append(wire, fmt.Sprintf("%.0f B/connection set-up", *r.Wire.ConnectBytes))
	}
	if r.Wire.Retransmits != nil {
		wire = append(wire, fmt.Sprintf("%d TCP retransmits", *r.Wire.Retransmits))
	}
	if len(wire) > 0 {
		row("wire", strings.Join(wire, ", "))
	}
	if e := r.Environment; r.Wire.TLSHandshakes != nil { // what was negotiated, and how often resumed
		row("tls", fmt.Sprintf("%s, %s, %s; %d handshakes, %d resumed, %d with 0-RTT", e.TLSVersion, e.TLSGroup, e.TLSCipherSuite,
			*r.Wire.TLSHandshakes, derefInt(r.Wire.TLSResumed), derefInt(r.Wire.ZeroRTT)))
	}
	if d := r.Environment.Discovery; d != nil { // spec.mqttsn.discovery: what the searches found
		row("discovery", fmt.Sprintf("%s, searched at %s: %d found with %d SEARCHGW, first SEARCHGW → GWINFO %s / %s / %s (min/mean/max)",
			strings.Join(d.Gateways, ", "), strings.Join(d.Searched, ", "), d.Found, d.Searches,
			time.Duration(d.MinMicros)*time.Microsecond, (time.Duration(d.MeanMicros*1000)).Round(time.Microsecond), time.Duration(d.MaxMicros)*time.Microsecond))
	}
	res := fmt.Sprintf("load generator %.2f CPU-s, peak RSS %s", r.Resources.LoadgenCPUSeconds, bytesHuman(float64(r.Resources.LoadgenMaxRSSBytes)))
	if b := r.Resources.LoadgenBytesPerConnection; b != nil {
		res += fmt.Sprintf(" (%s per connection held)", bytesHuman(float64(*b)))
	}
	for _, c := range []struct {
		name string
		cpu  *float64
		rss  *int64
	}{{"broker", r.Resources.BrokerCPUSeconds, r.Resources.BrokerMaxRSSBytes}, {"gateway", r.Resources.GatewayCPUSeconds, r.Resources.GatewayMaxRSSBytes}} {
		if c.cpu != nil {
			// Below 0.1 s with 4 decimals: a light run's 3 ms (counted in ns) is 0.0030, not 0.00.
			res += fmt.Sprintf("; %s %.*f CPU-s", c.name, map[bool]int{true: 4, false: 2}[*c.cpu < 0.1], *c.cpu)
			if c.rss != nil {
				res += ", peak RSS " + bytesHuman(float64(*c.rss))
			}
		}
	}
	row("resources", res)
	if e := r.Energy; e != nil {
		row("energy", e.Summary())
	}
	for _, g := range r.Groups {
		if g.Energy != nil {
			row("energy", g.Name+": "+g.Energy.Summary())
		}
	}
	// Per device group and per pair of groups: a second column names the group, so that the
	// figures line up under each other.
	for i, l := range groupFigureLines(r) {
		k := ""
		if i == 0 {
			k = "groups"
		}
		row(k, l.Key+"\t"+l.Text)
	}
	for i, l := range pairFigureLines(r) {
		k := ""
		if i == 0 {
			k = "pairs"
		}
		row(k, l.Key+"\t"+l.Text)
	}
	for i, c := range r.Caveats {
		k := ""
		if i == 0 {
			k = "caveats"
		}
		row(k, c.Type+": "+c.Message)
	}
	for i, o := range r.Objectives {
		k := ""
		if i == 0 {
			k = "objectives"
		}
		v := "met (measured " + o.Measured + ")"
		if !o.Met {
			v = "MISSED: " + o.Reason
		}
		row(k, o.Objective+": "+v)
	}
	return tw.Flush()
}

func opt(p *int64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprint(*p)
}

func us(v int64) string {
	switch {
	case v >= 10_000_000:
		return fmt.Sprintf("%.1fs", float64(v)/1e6)
	case v >= 10_000:
		return fmt.Sprintf("%.1fms", float64(v)/1e3)
	default:
		return fmt.Sprintf("%dµs", v)
	}
}

func bytesHuman(v float64) string {
	switch {
	case v >= 1<<30:
		return fmt.Sprintf("%.1f GiB", v/(1<<30))
	case v >= 1<<20:
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	default:
		return fmt.Sprintf("%.0f B", v)
	}
}

// protocolSpoken is the protocol as the clients spoke it: "MQTT 5.0", "HTTP/3 + TLS 1.3
// (X25519MLKEM768)"; from the spec for results that predate Environment.Protocol.
func protocolSpoken(r *Result) string {
	var g *plan.Group
	if p, err := r.Plan(); err == nil && p != nil {
		g = &p.Groups[0]
	}
	return spokenBy(r, g, r.Environment.Protocol)
}

// spokenBy is proto (g's own label when "") with the TLS the run negotiated, or the TLS g asked
// for when the result does not say.
func spokenBy(r *Result, g *plan.Group, proto string) string {
	e := r.Environment
	if proto == "" && g != nil {
		proto = g.ProtocolLabel()
	}
	switch {
	case e.TLSVersion != "":
		proto += " + " + e.TLSVersion
		if e.TLSGroup != "" {
			proto += " (" + e.TLSGroup + ")"
		}
	case g != nil && g.TLS.Enabled:
		proto += " + TLS " + g.TLSVersion
	}
	return proto
}

// environmentSummary is the machine and build that measured: "AMD EPYC 7B13, 8 cores, Linux
// 6.8.0-45-generic; msgbench v0.4.0 (commit 1a2b3c4d5e6f), go1.26.0".
func environmentSummary(e Environment) string {
	var machine []string
	if e.CPUModel != "" {
		machine = append(machine, e.CPUModel)
	}
	if e.CPUs > 0 {
		machine = append(machine, fmt.Sprintf("%d cores", e.CPUs))
	}
	if e.Kernel != "" {
		machine = append(machine, e.Kernel)
	}
	var build []string
	if e.MsgbenchVersion != "" {
		v := "msgbench " + e.MsgbenchVersion
		if c := e.MsgbenchCommit; c != "" && c != "unknown" {
			if len(c) > 12 && !strings.Contains(c, " ") {
				c = c[:12]
			}
			v += " (commit " + c + ")"
		}
		build = append(build, v)
	}
	if e.GoVersion != "" {
		build = append(build, e.GoVersion)
	}
	parts := []string{}
	for _, p := range [][]string{machine, build} {
		if len(p) > 0 {
			parts = append(parts, strings.Join(p, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// networkSummary is the emulated link as applied (Result.Network): "lte: RTT 60 ms; up 30ms,
// 0.1% loss, 50mbit/s; down …; MTU 1500". Empty without emulation.
func networkSummary(n any) string {
	m, ok := n.(map[string]any)
	if !ok || len(m) == 0 {
		return ""
	}
	var parts []string
	head := fmt.Sprint(m["profile"])
	if head == "" || head == "<nil>" {
		head = "custom"
	}
	if rtt, ok := m["rttMillis"].(float64); ok {
		head += fmt.Sprintf(": RTT %g ms", rtt)
	}
	parts = append(parts, head)
	for _, d := range []string{"up", "down"} {
		dm, ok := m[d].(map[string]any)
		if !ok {
			continue
		}
		var f []string
		if v := str(dm["delay"]); !zeroDuration(v) {
			f = append(f, v)
		}
		if v := str(dm["jitter"]); !zeroDuration(v) {
			f = append(f, "± "+v)
		}
		for _, k := range []struct{ key, what string }{{"lossPercent", "loss"}, {"duplicatePercent", "duplicates"}, {"corruptPercent", "corrupt"}, {"reorderPercent", "reorder"}} {
			if v := str(dm[k.key]); v != "" && v != "0" {
				f = append(f, v+"% "+k.what)
			}
		}
		if ge, ok := dm["gilbertElliott"].(map[string]any); ok {
			f = append(f, fmt.Sprintf("Gilbert-Elliott loss %.3g%% on average (p %s%%, r %s%%)",
				number(ge["stationaryLossPercent"]), str(ge["goodToBadPercent"]), str(ge["badToGoodPercent"])))
		}
		if v := str(dm["bandwidth"]); v != "" && v != "0" && v != "0bit" {
			f = append(f, v)
		}
		if len(f) == 0 {
			f = append(f, "unimpaired")
		}
		// What the link did, beside what it was asked to do: a loss model's rate and bursts.
		if pk, ok := m["packets"].(map[string]any); ok {
			if pd, ok := pk[d].(map[string]any); ok && number(pd["lost"]) > 0 {
				f = append(f, fmt.Sprintf("lost %.3g%% of %g packets in bursts of %.3g", number(pd["lostPercent"]), number(pd["packets"]), number(pd["meanLossBurst"])))
			}
		}
		parts = append(parts, d+" "+strings.Join(f, ", "))
	}
	if mtu, ok := m["mtuBytes"].(float64); ok && mtu > 0 {
		parts = append(parts, fmt.Sprintf("MTU %g", mtu))
	} else if mtu, ok := m["mtuBytes"].(int); ok && mtu > 0 {
		parts = append(parts, fmt.Sprintf("MTU %d", mtu))
	}
	if r, ok := m["radio"].(map[string]any); ok {
		parts = append(parts, fmt.Sprintf("radio: idle after %s, promotion %s, paging every %s; %g promotions (%g pagings, %g PSM wake-ups), %g packets held %.1f s in all",
			str(r["inactivityTimer"]), str(r["promotionDelay"]), str(r["pagingCycle"]),
			number(r["promotions"]), number(r["pagings"]), number(r["psmWakeups"]), number(r["heldPackets"]), number(r["holdMillis"])/1000))
	}
	return strings.Join(parts, "; ")
}

// zeroDuration reports whether a result's duration text is empty or zero ("0s", "0ms").
func zeroDuration(v string) bool {
	d, err := time.ParseDuration(v)
	return v == "" || err == nil && d == 0
}

// stepsSummary lists spec.network.timeline's steps as they took effect: "1.00 s outage; 1.80 s
// end of timeline[0]: back to spec.network". Empty without a timeline.
func stepsSummary(marks []NetworkStepMark) string {
	parts := make([]string, 0, len(marks))
	for _, m := range marks {
		parts = append(parts, fmt.Sprintf("%.2f s %s", m.At, m.Description))
	}
	return strings.Join(parts, "; ")
}

// number is a count or measure of a result's network map: uint64 as the run made it, float64
// as JSON reads it back.
func number(v any) float64 {
	switch n := v.(type) {
	case uint64:
		return float64(n)
	case float64:
		return n
	case int:
		return float64(n)
	}
	return 0
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// ProtocolSpoken is the summary's protocol as spoken ("MQTT 5.0 + TLS 1.3 (X25519MLKEM768)"),
// "" without a spec.
func (r *Result) ProtocolSpoken() string {
	if r.Spec == nil {
		return ""
	}
	return protocolSpoken(r)
}

// EnvironmentSummary is the summary's environment row: the machine and build that measured.
func (r *Result) EnvironmentSummary() string { return environmentSummary(r.Environment) }

// NetworkSummary is the summary's network row: the emulated link as applied ("" without one).
func (r *Result) NetworkSummary() string { return networkSummary(r.Network) }

// SummaryLine is one row of a summary: what it is about, and what it says.
type SummaryLine struct{ Key, Text string }

// GroupLines describe a run's device groups (spec.groups), one line each keyed by the group's
// name, as the summary's first rows give them: "2000 publishers, MQTT 5.0 QoS 1, 64 B to
// devices/{device}/telemetry (2000 topics), one every 10s each", "2 subscribers, MQTT 5.0 QoS 1,
// $share/backend/devices/+/telemetry". Nil for a run without device groups.
func (r *Result) GroupLines() []SummaryLine {
	if r.Spec == nil || len(r.Spec.Groups) == 0 {
		return nil
	}
	p, err := r.Plan()
	if err != nil || p == nil {
		// A recorded spec compiles; should one not, its groups are still named and counted.
		var out []SummaryLine
		for _, dg := range r.Spec.Groups {
			role := "publisher"
			if dg.Subscribe != nil {
				role = "subscriber"
			}
			out = append(out, SummaryLine{dg.Name, plural(int64(dg.Count), role)})
		}
		return out
	}
	var out []SummaryLine
	for i := range p.Groups {
		g := &p.Groups[i]
		f := g.Fleet
		if f == nil {
			continue
		}
		proto := g.ProtocolLabel()
		if gr := r.Group(g.Name); gr != nil && gr.Protocol != "" {
			proto = gr.Protocol
		}
		proto = fmt.Sprintf("%s QoS %d", spokenBy(r, g, proto), g.QoS)
		var text string
		if g.Publishers > 0 {
			size := fmt.Sprintf("%d B", g.PayloadBytes)
			if g.Payload != nil {
				size = payloadText(g.Payload)
			}
			text = fmt.Sprintf("%s, %s, %s to %s, %s", plural(int64(g.Publishers), "publisher"), proto, size, topicSet(f.Topics, 0), r.groupLoad(g))
		} else {
			sub, _ := p.Subscription(g, 0, "")
			if f.Topics != nil {
				sub = topicSet(f.Topics, int(g.Subscribers))
			}
			text = fmt.Sprintf("%s, %s, %s", plural(int64(g.Subscribers), "subscriber"), proto, sub)
		}
		if n := g.Network; n != nil {
			profile := string(n.Profile)
			if profile == "" {
				profile = "custom"
			}
			text += fmt.Sprintf(", behind its own %s link (RTT %g ms)", profile, float64(n.Link.RTT())/float64(time.Millisecond))
		}
		out = append(out, SummaryLine{g.Name, text})
	}
	return out
}

// payloadText describes a group's varied payload (publish.payload): "uniform 100–900 B", "normal
// 300±40 B", "log-normal median 2 KiB, p99 32 KiB", "weighted 3 sizes 64 B–4 KiB", "JSON
// template ≤ 180 B"; sizes count the header.
func payloadText(p *plan.Payload) string {
	if d := p.Size; d != nil {
		switch d.Kind {
		case plan.Uniform:
			return "uniform " + sizeRange(d.Min, d.Max)
		case plan.Normal:
			return fmt.Sprintf("normal %g±%g B", d.Mean, d.StdDev)
		case plan.LogNormal:
			const z99 = 2.3263478740408408 // the standard normal distribution's 99th percentile
			return fmt.Sprintf("log-normal median %s, p99 %s", sizeText(int(math.Round(math.Exp(d.Mu)))),
				sizeText(int(math.Round(math.Exp(d.Mu+z99*d.Sigma)))))
		case plan.Weighted:
			return fmt.Sprintf("weighted %s %s", plural(int64(len(d.Sizes)), "size"), sizeRange(d.Min, d.Max))
		}
		return fmt.Sprintf("%s %s", d.Kind, sizeRange(d.Min, d.Max))
	}
	if p.Template != nil {
		return "JSON template ≤ " + sizeText(p.MaxBytes)
	}
	return "≤ " + sizeText(p.MaxBytes)
}

// sizeText is a message size: "64 B", "2 KiB" (whole KiB or MiB only), "1500 B".
func sizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// sizeRange is "100–900 B", "64 B–4 KiB", or one size when lo is hi.
func sizeRange(lo, hi int) string {
	a, b := sizeText(lo), sizeText(hi)
	switch {
	case lo == hi:
		return b
	case strings.HasSuffix(a, " B") && strings.HasSuffix(b, " B"):
		return strings.TrimSuffix(a, " B") + "–" + b
	}
	return a + "–" + b
}

// topicSet is a topic group as a summary names it: its pattern, and how many topics it has
// ("devices/{device}/telemetry (2000 topics)"), one each when it has as many as devices.
func topicSet(t *plan.TopicSet, devices int) string {
	if t == nil {
		return "?"
	}
	switch {
	case t.Count <= 1:
		return t.Pattern
	case t.Count == devices:
		return fmt.Sprintf("%s (%d topics, one each)", t.Pattern, t.Count)
	}
	return fmt.Sprintf("%s (%d topics)", t.Pattern, t.Count)
}

// groupLoad is a publishing group's load as its spec puts it: "one every 10s each", "200 msg/s
// in all", closed loop; and "until 1000 sent" with a message count.
func (r *Result) groupLoad(g *plan.Group) string {
	var pub *v1alpha1.PublishSpec
	if i := g.Fleet.Index; i < len(r.Spec.Groups) && r.Spec.Groups[i].Name == g.Name {
		pub = r.Spec.Groups[i].Publish
	}
	var load string
	switch {
	case pub != nil && pub.Interval != nil:
		load = "one every " + pub.Interval.Duration.String() + " each"
	case g.Load.Rate > 0:
		load = fmt.Sprintf("%.6g msg/s in all", g.Load.Rate)
	default:
		load = "as fast as acknowledged (closed loop)"
	}
	if g.Load.Messages > 0 {
		load += fmt.Sprintf(" until %d sent", g.Load.Messages)
	}
	return load
}

func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// GroupFigureLines are a run's figures per device group, one line each keyed by the group's
// name: what its publishers sent and their publish-ack p99; what its subscribers received of
// what was expected, lost, duplicates, the retained messages its new subscriptions brought, the
// deliveries of what was sent before it joined, and their end-to-end p50 and p99; its connect p50
// and p99.
// Nil for a run without device groups.
func (r *Result) GroupFigureLines() []SummaryLine { return groupFigureLines(r) }

func groupFigureLines(r *Result) []SummaryLine {
	var out []SummaryLine
	for _, g := range r.Groups {
		var f []string
		if g.Publishers > 0 {
			sent := fmt.Sprintf("sent %d", g.Sent)
			if g.Unsent > 0 {
				sent += fmt.Sprintf(" (%d more unsent)", g.Unsent)
			}
			f = append(f, sent)
			if l := g.Latency.PublishAck; l != nil {
				f = append(f, "publish ack p99 "+us(l.P99Micros))
			}
			if q := g.Requests; q != nil {
				a := fmt.Sprintf("answered %d of %d, lost %d", q.Answered, q.Expected, q.Lost)
				if l := q.RoundTrip; l != nil {
					a += fmt.Sprintf(", round trip p50 %s p99 %s", us(l.P50Micros), us(l.P99Micros))
				}
				f = append(f, a)
			}
		}
		if g.Subscribers > 0 {
			f = append(f, fmt.Sprintf("received %d of %d expected, lost %s, dup %s", g.Received, g.Expected, opt(g.Lost), opt(g.Duplicates)))
			if g.OutOfOrder != nil && *g.OutOfOrder > 0 {
				f = append(f, fmt.Sprintf("out of order %d", *g.OutOfOrder))
			}
			if rt := g.Retained; rt != nil {
				f = append(f, fmt.Sprintf("retained %d of %d", rt.Received, rt.Expected))
			}
			if g.BeforeJoining > 0 {
				f = append(f, fmt.Sprintf("%d before it joined", g.BeforeJoining))
			}
			if l := g.Latency.EndToEnd; l != nil {
				f = append(f, fmt.Sprintf("e2e p50 %s p99 %s", us(l.P50Micros), us(l.P99Micros)))
			}
		}
		if l := g.Latency.Connect; l != nil {
			f = append(f, fmt.Sprintf("connect p50 %s p99 %s", us(l.P50Micros), us(l.P99Micros)))
		}
		if g.Errors > 0 {
			f = append(f, fmt.Sprintf("errors %d", g.Errors))
		}
		out = append(out, SummaryLine{g.Name, strings.Join(f, ", ")})
	}
	return out
}

// pairFigureLines are the delivery from each publishing group to each subscribing group: "sensors
// → backend": "expected 2000, received 2000, lost 0, dup 0, e2e p50 190µs p99 333µs".
func pairFigureLines(r *Result) []SummaryLine {
	var out []SummaryLine
	for _, p := range r.Pairs {
		text := fmt.Sprintf("expected %d, received %d, lost %d, dup %d", p.Expected, p.Received, p.Lost, p.Duplicates)
		if p.OutOfOrder > 0 {
			text += fmt.Sprintf(", out of order %d", p.OutOfOrder)
		}
		if p.Retained > 0 {
			text += fmt.Sprintf(", retained %d", p.Retained)
		}
		if l := p.EndToEnd; l != nil {
			text += fmt.Sprintf(", e2e p50 %s p99 %s", us(l.P50Micros), us(l.P99Micros))
		}
		if c := p.Clock; c != nil {
			if c.Uncorrected {
				text += " (two workers' clocks, uncorrected)"
			} else {
				text += fmt.Sprintf(" (across workers: clocks ±%s)", us(c.UncertaintyMicros))
			}
		}
		out = append(out, SummaryLine{p.From + " → " + p.To, text})
	}
	return out
}
