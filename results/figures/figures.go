// Package figures names the figures of a result document (results.Result) that objectives and
// suite statistics can refer to, by the path a user writes: "lost", "throughput.receivedPerSecond",
// "latency.endToEnd.p99". The names follow result.json's field names, so what a user reads in a
// result is what they write in an objective. A run with device groups also has figures per group
// and per pair of groups, named under them: "groups.sensors.latency.endToEnd.p99",
// "pairs.sensors.backend.lost" (GroupFigures, PairFigures).
package figures

import (
	"errors"
	"fmt"
	"strings"

	"github.com/msgbench/msgbench/results"
)

// Kind is what a figure measures, which decides how an objective writes its value.
type Kind string

// Kinds of figures.
const (
	// Duration is a latency in microseconds; objectives write it as a Go duration (50ms).
	Duration Kind = "duration"
	// Count is a number of messages, segments, datagrams or errors.
	Count Kind = "count"
	// Rate is messages per second.
	Rate Kind = "rate"
	// ByteRate is payload bytes per second.
	ByteRate Kind = "byteRate"
	// Bytes is a number of bytes.
	Bytes Kind = "bytes"
	// Seconds is a length of time or CPU time in seconds.
	Seconds Kind = "seconds"
	// Percent is a share in percent (0–100).
	Percent Kind = "percent"
	// Energy is joules; objectives write it with its unit (5mJ, 0.2J, 300uJ).
	Energy Kind = "energy"
	// Current is amperes; objectives write it with its unit (10mA, 5uA).
	Current Kind = "current"
	// Days is a length of time in days (a battery's life).
	Days Kind = "days"
)

// Unit is the unit a figure of this kind is stored in, for documentation and messages.
func (k Kind) Unit() string {
	switch k {
	case Duration:
		return "µs"
	case Rate:
		return "messages/s"
	case ByteRate:
		return "bytes/s"
	case Bytes:
		return "bytes"
	case Seconds:
		return "s"
	case Percent:
		return "%"
	case Energy:
		return "J"
	case Current:
		return "A"
	case Days:
		return "days"
	}
	return "count"
}

// Figure is one nameable figure of a result.
type Figure struct {
	// Name is the path a user writes, e.g. "latency.endToEnd.p99".
	Name string
	// Kind says what the value measures and its unit (Kind.Unit).
	Kind Kind
	// Definition says in one line what the figure is (after docs/results.md).
	Definition string
	// AbsentWhen says when a result has no such figure, empty when every result has it.
	AbsentWhen string
	// Histogram is, for latency figures, the key in results.Result.Histograms the figure is a
	// statistic of; such a figure can be pooled exactly over several runs by merging their
	// histograms (stats.Point does). Empty for every other figure.
	Histogram string
	// Quantile is, for latency figures, the percentile (0–100) the figure is: 99.9 for p999,
	// 0 for min, 100 for max; -1 for the mean, which is no percentile.
	Quantile float64
	// Group is, for a figure of one device group (groups.<group>.<figure>), the group's name, and
	// for one of a pair of groups (pairs.<from>.<to>.<figure>) the publishing group's; empty for
	// the run's own figures. To is a pair's subscribing group, Base the figure's name within the
	// group or pair (latency.endToEnd.p99). Such a figure has no Histogram: a result keeps the
	// run's histograms only.
	Group, To, Base string

	value func(r *results.Result) (float64, bool)
	// group and pair are the values of GroupFigures and PairFigures in one group or pair.
	group groupValue
	pair  pairValue
}

// Value returns the figure's value in r, in the unit of its Kind, and false when r has no such
// figure (not measured, e.g. no subscribers, or r is nil).
func (f Figure) Value(r *results.Result) (float64, bool) {
	if r == nil || f.value == nil {
		return 0, false
	}
	return f.value(r)
}

// Latency statistics, in the order All lists them. Names are those of result.json's
// LatencySummary without "Micros".
var latencyStats = []struct {
	name     string
	quantile float64
	what     string
	get      func(s *results.LatencySummary) float64
}{
	{"p50", 50, "median (50th percentile)", func(s *results.LatencySummary) float64 { return float64(s.P50Micros) }},
	{"p90", 90, "90th percentile", func(s *results.LatencySummary) float64 { return float64(s.P90Micros) }},
	{"p95", 95, "95th percentile", func(s *results.LatencySummary) float64 { return float64(s.P95Micros) }},
	{"p99", 99, "99th percentile", func(s *results.LatencySummary) float64 { return float64(s.P99Micros) }},
	{"p999", 99.9, "99.9th percentile", func(s *results.LatencySummary) float64 { return float64(s.P999Micros) }},
	{"max", 100, "maximum", func(s *results.LatencySummary) float64 { return float64(s.MaxMicros) }},
	{"min", 0, "minimum", func(s *results.LatencySummary) float64 { return float64(s.MinMicros) }},
	{"mean", -1, "mean", func(s *results.LatencySummary) float64 { return s.MeanMicros }},
}

// Latency histograms: definition (docs/results.md) and when a run has none.
var latencies = map[string]struct{ def, absent string }{
	results.HistEndToEnd:     {"end-to-end latency: subscriber receive time − intended send time", "no message with msgbench's header (payload ≥ 16 bytes) was received"},
	results.HistPublishAck:   {"publish-ack latency: broker acknowledgement − actual send time", "nothing was acknowledged (QoS 0)"},
	results.HistPublishDelay: {"publish delay: actual − intended send time", "closed loop (workload.rate 0)"},
	results.HistConnect:      {"connect latency: start of the dial → session usable, per client", "no client connected"},
	results.HistFirstMessage: {"first-message latency: a publisher's start of the dial → its first message at a subscriber", "no first message was received"},
}

// LatencySummary returns r's summary of the named histogram (a key of results.HistogramNames),
// nil when it was not measured.
func LatencySummary(r *results.Result, histogram string) *results.LatencySummary {
	return latencyOf(&r.Latency, histogram)
}

// Conditions under which groups of figures are absent.
const (
	noSubscribers = "the run has no subscribers"
	noWindow      = "the measured window never opened (measuredSeconds 0)"
)

// subscribed is false when the spec asks for no subscribers: then every receiving figure is
// meaningless (lost would be a vacuous 0). A result without spec is taken as it is.
func subscribed(r *results.Result) bool {
	p, err := r.Plan()
	if err != nil || p == nil {
		return true
	}
	for _, g := range p.Groups {
		if g.Subscribers > 0 {
			return true
		}
	}
	return false
}

func always(v func(r *results.Result) float64) func(*results.Result) (float64, bool) {
	return func(r *results.Result) (float64, bool) { return v(r), true }
}

func ifSubscribed(v func(r *results.Result) float64) func(*results.Result) (float64, bool) {
	return func(r *results.Result) (float64, bool) { return v(r), subscribed(r) }
}

func ptr[T int64 | float64](get func(r *results.Result) *T) func(*results.Result) (float64, bool) {
	return func(r *results.Result) (float64, bool) {
		p := get(r)
		if p == nil {
			return 0, false
		}
		return float64(*p), true
	}
}

func subscribedPtr(get func(r *results.Result) *int64) func(*results.Result) (float64, bool) {
	p := ptr(get)
	return func(r *results.Result) (float64, bool) {
		if !subscribed(r) {
			return 0, false
		}
		return p(r)
	}
}

// rate is absent when there was no measured window: Finalize then leaves every rate 0 as
// unknown, not as measured.
func rate(v func(r *results.Result) float64, receiving bool) func(*results.Result) (float64, bool) {
	return func(r *results.Result) (float64, bool) {
		if r.MeasuredSeconds <= 0 || (receiving && !subscribed(r)) {
			return 0, false
		}
		return v(r), true
	}
}

func f64(v int64) float64 { return float64(v) }

// build lists every figure in a stable order: delivery, throughput, latency, wire, resources.
func build() []Figure {
	fs := []Figure{
		{Name: "sent", Kind: Count, Definition: "messages published in the measured window (warm-up excluded)",
			value: always(func(r *results.Result) float64 { return f64(r.Sent) })},
		{Name: "acked", Kind: Count, Definition: "of the messages sent, those the broker acknowledged (QoS ≥ 1 / Kafka acks ≥ 1)",
			value: always(func(r *results.Result) float64 { return f64(r.Acked) })},
		{Name: "received", Kind: Count, Definition: "deliveries to subscribers in the measured window, duplicates included", AbsentWhen: noSubscribers,
			value: ifSubscribed(func(r *results.Result) float64 { return f64(r.Received) })},
		{Name: "expected", Kind: Count, Definition: "deliveries the subscriptions call for: every subscriber of a topic expects every measured message published to it", AbsentWhen: noSubscribers,
			value: ifSubscribed(func(r *results.Result) float64 { return f64(r.Expected) })},
		{Name: "lost", Kind: Count, Definition: "expected − unique deliveries (payloads under 16 bytes: expected − received, floored at 0)", AbsentWhen: noSubscribers,
			value: subscribedPtr(func(r *results.Result) *int64 { return r.Lost })},
		{Name: "lostPercent", Kind: Percent, Definition: "lost / expected × 100 (derived; not a field of result.json)", AbsentWhen: noSubscribers + ", or expected is 0",
			value: func(r *results.Result) (float64, bool) {
				if !subscribed(r) || r.Lost == nil || r.Expected <= 0 {
					return 0, false
				}
				return float64(*r.Lost) / float64(r.Expected) * 100, true
			}},
		{Name: "duplicates", Kind: Count, Definition: "deliveries of a message the subscriber already had", AbsentWhen: noSubscribers + ", or payloads are under 16 bytes",
			value: subscribedPtr(func(r *results.Result) *int64 { return r.Duplicates })},
		{Name: "outOfOrder", Kind: Count, Definition: "deliveries that arrived after a later message of the same publisher", AbsentWhen: noSubscribers + ", or payloads are under 16 bytes",
			value: subscribedPtr(func(r *results.Result) *int64 { return r.OutOfOrder })},
		{Name: "errors", Kind: Count, Definition: "failed operations: refused publishes, dropped connections, messages on the run's topics that the run did not send",
			value: always(func(r *results.Result) float64 { return f64(r.Errors) })},
		{Name: "unsent", Kind: Count, Definition: "open loop: messages the schedule put in the measured window that could not be sent before it ended (0 in closed loop)",
			value: always(func(r *results.Result) float64 { return f64(r.Unsent) })},
		{Name: "measuredSeconds", Kind: Seconds, Definition: "length of the window actually measured, over which every rate is computed",
			value: always(func(r *results.Result) float64 { return r.MeasuredSeconds })},

		{Name: "throughput.offeredPerSecond", Kind: Rate, Definition: "workload.rate, the load asked for", AbsentWhen: "closed loop (workload.rate 0)",
			value: func(r *results.Result) (float64, bool) {
				return r.Throughput.OfferedPerSecond, r.Throughput.OfferedPerSecond > 0
			}},
		{Name: "throughput.sentPerSecond", Kind: Rate, Definition: "sent / measuredSeconds", AbsentWhen: noWindow,
			value: rate(func(r *results.Result) float64 { return r.Throughput.SentPerSecond }, false)},
		{Name: "throughput.receivedPerSecond", Kind: Rate, Definition: "received / measuredSeconds", AbsentWhen: noSubscribers + ", or " + noWindow,
			value: rate(func(r *results.Result) float64 { return r.Throughput.ReceivedPerSecond }, true)},
		{Name: "throughput.sentBytesPerSecond", Kind: ByteRate, Definition: "payload bytes sent per second (no headers): the application's throughput", AbsentWhen: noWindow,
			value: rate(func(r *results.Result) float64 { return r.Throughput.SentBytesPerSecond }, false)},
		{Name: "throughput.receivedBytesPerSecond", Kind: ByteRate, Definition: "payload bytes received per second (no headers)", AbsentWhen: noSubscribers + ", or " + noWindow,
			value: rate(func(r *results.Result) float64 { return r.Throughput.ReceivedBytesPerSecond }, true)},
	}

	for _, h := range results.HistogramNames {
		l := latencies[h]
		for _, st := range latencyStats {
			get := st.get
			fs = append(fs, Figure{
				Name: "latency." + h + "." + st.name, Kind: Duration, Definition: st.what + " of the " + l.def,
				AbsentWhen: l.absent, Histogram: h, Quantile: st.quantile,
				value: func(r *results.Result) (float64, bool) {
					s := LatencySummary(r, h)
					if s == nil {
						return 0, false
					}
					return get(s), true
				},
			})
		}
	}

	// Segment counts come from TCP_INFO, datagram counts from UDP sockets.
	const tcpOnly, udpOnly = "the protocol runs over UDP (MQTT-SN, QUIC)", "the protocol runs over TCP"
	fs = append(fs, []Figure{
		{Name: "wire.bytesSent", Kind: Bytes, Definition: "bytes the clients' sockets sent, below TLS/QUIC encryption, set-up included",
			value: always(func(r *results.Result) float64 { return f64(r.Wire.BytesSent) })},
		{Name: "wire.bytesReceived", Kind: Bytes, Definition: "bytes the clients' sockets received, below TLS/QUIC encryption, set-up included",
			value: always(func(r *results.Result) float64 { return f64(r.Wire.BytesReceived) })},
		{Name: "wire.bytesPerMessage", Kind: Bytes, Definition: "windowBytes / received: the whole cost of moving one message of the window, both directions, bytes and messages from the same window (from its start to the end of the drain)", AbsentWhen: "nothing was received",
			value: ptr(func(r *results.Result) *float64 { return r.Wire.BytesPerMessage })},
		{Name: "wire.bytesPerSecond", Kind: ByteRate, Definition: "bytesDuringWindow / measuredSeconds: every byte the sockets carried per second in the measured window, headers above TCP/UDP included — IPSJ 2022's \"throughput\" (derived; not a field of result.json)", AbsentWhen: noWindow,
			value: func(r *results.Result) (float64, bool) {
				if r.MeasuredSeconds <= 0 || r.Wire.BytesDuringWindow <= 0 {
					return 0, false
				}
				return float64(r.Wire.BytesDuringWindow) / r.MeasuredSeconds, true
			}},
		{Name: "wire.connectBytes", Kind: Bytes, Definition: "mean bytes per client until its session was usable (handshakes)", AbsentWhen: "no client connected",
			value: ptr(func(r *results.Result) *float64 { return r.Wire.ConnectBytes })},
		{Name: "wire.publishBytesPerMessage", Kind: Bytes, Definition: "bytes written by publisher sockets per message sent: the device's uplink cost per message", AbsentWhen: "no publisher had all its measured messages acknowledged",
			value: ptr(func(r *results.Result) *float64 { return r.Wire.PublishBytesPerMessage })},
		{Name: "wire.segmentsSent", Kind: Count, Definition: "TCP segments sent over the connections' lives (TCP_INFO)", AbsentWhen: tcpOnly,
			value: ptr(func(r *results.Result) *int64 { return r.Wire.SegmentsSent })},
		{Name: "wire.segmentsReceived", Kind: Count, Definition: "TCP segments received over the connections' lives (TCP_INFO)", AbsentWhen: tcpOnly,
			value: ptr(func(r *results.Result) *int64 { return r.Wire.SegmentsReceived })},
		{Name: "wire.retransmits", Kind: Count, Definition: "TCP segments retransmitted over the connections' lives (TCP_INFO)", AbsentWhen: tcpOnly,
			value: ptr(func(r *results.Result) *int64 { return r.Wire.Retransmits })},
		{Name: "wire.datagramsSent", Kind: Count, Definition: "UDP datagrams sent (MQTT-SN, QUIC)", AbsentWhen: udpOnly,
			value: ptr(func(r *results.Result) *int64 { return r.Wire.DatagramsSent })},
		{Name: "wire.datagramsReceived", Kind: Count, Definition: "UDP datagrams received (MQTT-SN, QUIC)", AbsentWhen: udpOnly,
			value: ptr(func(r *results.Result) *int64 { return r.Wire.DatagramsReceived })},

		{Name: "resources.loadgenCPUSeconds", Kind: Seconds, Definition: "CPU time of the load generator over the measured window (summed over worker pods)",
			value: always(func(r *results.Result) float64 { return r.Resources.LoadgenCPUSeconds })},
		{Name: "resources.loadgenMaxRSSBytes", Kind: Bytes, Definition: "peak resident memory of the load-generator process (the largest worker's)",
			value: always(func(r *results.Result) float64 { return f64(r.Resources.LoadgenMaxRSSBytes) })},
		{Name: "resources.brokerCPUSeconds", Kind: Seconds, Definition: "CPU time of the broker's processes over the measured window", AbsentWhen: brokerNotOurs,
			value: ptr(func(r *results.Result) *float64 { return r.Resources.BrokerCPUSeconds })},
		{Name: "resources.brokerCPUPerMessage", Kind: Seconds, Definition: "broker CPU time per delivered message: brokerCPUSeconds / receivedInWindow, both over the measured window (derived; not a field of result.json): what the broker spends to move one message, comparable across brokers and loads",
			AbsentWhen: brokerNotOurs + ", or nothing was received",
			value: func(r *results.Result) (float64, bool) {
				if r.Resources.BrokerCPUSeconds == nil || r.ReceivedInWindow <= 0 {
					return 0, false
				}
				return *r.Resources.BrokerCPUSeconds / float64(r.ReceivedInWindow), true
			}},
		{Name: "resources.brokerMaxRSSBytes", Kind: Bytes, Definition: "peak resident memory of the broker's processes", AbsentWhen: brokerNotOurs,
			value: ptr(func(r *results.Result) *int64 { return r.Resources.BrokerMaxRSSBytes })},
	}...)
	for _, f := range energyFigures {
		get := f.get
		fs = append(fs, Figure{Name: "energy." + f.name, Kind: f.kind, Definition: f.what, AbsentWhen: f.absent,
			value: func(r *results.Result) (float64, bool) { return get(r.Energy) }})
	}
	return fs
}

// GroupEnergy are the energy figures of device group g (groups.<g>.energy.*): suites compare
// them per point when the energy is a group's (a device group behind a link of its own).
func GroupEnergy(g string) []Figure {
	out := make([]Figure, 0, len(energyFigures))
	for _, e := range energyFigures {
		if f, err := Lookup(GroupPrefix + g + ".energy." + e.name); err == nil {
			out = append(out, f)
		}
	}
	return out
}

// noEnergy is when a result has no energy figures.
const noEnergy = "the devices' link has no radio power model (spec.network.radio.energy; locally only, docs/energy.md)"

// energyFigures are the figures of a results.Energy, the run's (energy.*) or a group's
// (groups.<group>.energy.*).
var energyFigures = []struct {
	name, what, absent string
	kind               Kind
	get                func(*results.Energy) (float64, bool)
}{
	{"perMessage", "the devices' radio energy in the window per message they delivered (sent and reached its subscribers, or received), in joules", noEnergy + ", or no message was delivered", Energy,
		func(e *results.Energy) (float64, bool) {
			if e == nil || e.PerMessageMillijoules == nil {
				return 0, false
			}
			return *e.PerMessageMillijoules / 1000, true
		}},
	{"total", "the devices' radio energy in the window, in joules", noEnergy, Energy,
		func(e *results.Energy) (float64, bool) {
			if e == nil {
				return 0, false
			}
			return e.Millijoules / 1000, true
		}},
	{"meanCurrent", "a device's mean radio current over the window, averaged over the devices, in amperes", noEnergy, Current,
		func(e *results.Energy) (float64, bool) {
			if e == nil {
				return 0, false
			}
			return e.MeanMilliamps / 1000, true
		}},
	{"deviceCurrentP99", "the 99th percentile of the devices' mean currents, in amperes", noEnergy, Current,
		func(e *results.Energy) (float64, bool) {
			if e == nil {
				return 0, false
			}
			return e.DeviceMilliampsP99 / 1000, true
		}},
	{"batteryDays", "the battery's life at the mean current (spec.network.radio.energy.batteryMilliampHours), in days", noEnergy + ", or no battery is given", Days,
		func(e *results.Energy) (float64, bool) {
			if e == nil || e.BatteryDays == nil {
				return 0, false
			}
			return *e.BatteryDays, true
		}},
	{"batteryDaysP99", "the battery's life at the devices' p99 current: the 1 % that run out first, in days", noEnergy + ", or no battery is given", Days,
		func(e *results.Energy) (float64, bool) {
			if e == nil || e.BatteryDaysP99 == nil {
				return 0, false
			}
			return *e.BatteryDaysP99, true
		}},
}

// brokerNotOurs is when a result has no broker cost: msgbench did not start the broker's processes.
const brokerNotOurs = "msgbench does not run the broker's processes (embedded, external or Strimzi-managed Kafka)"

var (
	all    = build()
	byName = func() map[string]Figure {
		m := make(map[string]Figure, len(all))
		for _, f := range all {
			m[f.Name] = f
		}
		return m
	}()
)

// All returns every figure in a stable order (delivery, throughput, latency, wire, resources).
// The slice is a copy.
func All() []Figure { return append([]Figure(nil), all...) }

// Lookup returns the figure of that name: one of All, or of a device group
// (groups.<group>.<figure>, figure one of GroupFigures) or of a pair of groups
// (pairs.<from>.<to>.<figure>, figure one of PairFigures), whatever the group names; whether a
// run has those groups is Figure.Unmatched's to say. An unknown name is an error that says what
// the figures near it are called, so a user can correct an objective from the message alone.
func Lookup(name string) (Figure, error) {
	if f, ok := byName[name]; ok {
		return f, nil
	}
	switch {
	case strings.HasPrefix(name, GroupPrefix):
		return lookupGroup(name)
	case strings.HasPrefix(name, PairPrefix):
		return lookupPair(name)
	}
	return Figure{}, unknown(name)
}

func unknown(name string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "unknown figure %s", name)
	if near := nearest(name); len(near) > 0 {
		fmt.Fprintf(&b, " (did you mean %s?)", strings.Join(near, " or "))
	}
	group, _, _ := strings.Cut(name, ".")
	if group == "latency" {
		var stats []string
		for _, s := range latencyStats {
			stats = append(stats, s.name)
		}
		fmt.Fprintf(&b, "; latency figures are latency.<histogram>.<statistic>, e.g. latency.endToEnd.p99, with histogram one of %s and statistic one of %s",
			strings.Join(results.HistogramNames, ", "), strings.Join(stats, ", "))
		return errors.New(b.String())
	}
	// The figures of the same group (throughput., wire., resources.) when there is one, else
	// the top-level ones and the shape of the rest.
	var same, top []string
	for _, f := range all {
		g, _, dotted := strings.Cut(f.Name, ".")
		switch {
		case !dotted:
			top = append(top, f.Name)
		case g == group && strings.Contains(name, "."):
			same = append(same, f.Name)
		}
	}
	if len(same) > 0 {
		fmt.Fprintf(&b, "; %s figures are %s", group, strings.Join(same, ", "))
	} else {
		top = append(top, "throughput.*", "latency.<histogram>.<statistic>", "wire.*", "resources.*",
			"groups.<group>.<figure>", "pairs.<from>.<to>.<figure>")
		fmt.Fprintf(&b, "; figures are %s (docs/objectives.md lists them all)", strings.Join(top, ", "))
	}
	return errors.New(b.String())
}

// nearest returns the known names closest to name: the same but for case, those it begins
// (throughput.received), or those within a small edit distance (typos such as p99.9 for p999 or
// receivd for received).
func nearest(name string) []string {
	names := make([]string, len(all))
	for i, f := range all {
		names[i] = f.Name
	}
	return nearestIn(name, names)
}
