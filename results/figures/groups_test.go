package figures

import (
	"strings"
	"testing"

	"github.com/msgbench/msgbench/results"
)

// fleetResult is a run with device groups as the load generator writes it (the shape of
// config/samples/fleets/telemetry-fan-in.yaml's result): sensors publish, edge-backend
// subscribes to them.
func fleetResult() *results.Result {
	lat := func(base int64) *results.LatencySummary {
		return &results.LatencySummary{Count: 100, MinMicros: base, MeanMicros: float64(base) * 2.5, P50Micros: 2 * base, P90Micros: 3 * base,
			P95Micros: 4 * base, P99Micros: 5 * base, P999Micros: 6 * base, MaxMicros: 7 * base}
	}
	return &results.Result{Name: "fleet", Phase: "Succeeded", MeasuredSeconds: 5, Sent: 1000, Received: 990, Expected: 1000, Lost: results.Int64(10),
		Groups: []results.GroupResult{
			{Name: "sensors", Publishers: 2000, Sent: 1000, Acked: 999, Unsent: 3, Errors: 1,
				Throughput: results.Throughput{OfferedPerSecond: 200, SentPerSecond: 200, SentBytesPerSecond: 12800},
				Latency:    results.Latencies{PublishAck: lat(10), PublishDelay: lat(20), Connect: lat(30), FirstMessage: lat(40)},
				Wire:       results.GroupWire{BytesSent: 169780, BytesReceived: 26800, Connections: 2000, ConnectBytes: results.Float64(36.4)},
				Requests:   &results.RequestFigures{Expected: 1000, Answered: 990, Lost: 10, Duplicates: 1, RoundTrip: lat(200)},
				Energy: &results.Energy{Millijoules: 5e6, PerMessageMillijoules: results.Float64(5000), MeanMilliamps: 0.02, DeviceMilliampsP99: 0.05,
					BatteryDays: results.Float64(10417), BatteryDaysP99: results.Float64(4167)}},
			{Name: "edge-backend", Subscribers: 2, Received: 990, Expected: 1000, Lost: results.Int64(12), Duplicates: results.Int64(2), OutOfOrder: results.Int64(1),
				Retained: &results.RetainedFigures{Expected: 2, Received: 1}, BeforeJoining: 4,
				Throughput: results.Throughput{ReceivedPerSecond: 198, ReceivedBytesPerSecond: 12672},
				Latency:    results.Latencies{EndToEnd: lat(100), Connect: lat(50)},
				Wire:       results.GroupWire{BytesSent: 4946, BytesReceived: 118924, Connections: 2, ConnectBytes: results.Float64(42)}},
		},
		Pairs: []results.PairResult{{From: "sensors", To: "edge-backend", Expected: 1000, Received: 988, Lost: 12, Duplicates: 2, OutOfOrder: 1, Retained: 1, EndToEnd: lat(100)}},
	}
}

func TestGroupFigures(t *testing.T) {
	r := fleetResult()
	want := map[string]float64{
		"groups.sensors.requests.answered": 990, "groups.sensors.requests.lost": 10, "groups.sensors.requests.roundTrip.p99": 1000,
		"groups.edge-backend.requests.expected": absent, "groups.edge-backend.requests.roundTrip.p50": absent,
		"groups.sensors.sent": 1000, "groups.sensors.acked": 999, "groups.sensors.unsent": 3, "groups.sensors.errors": 1,
		"groups.sensors.received": absent, "groups.sensors.expected": absent, "groups.sensors.lost": absent, "groups.sensors.lostPercent": absent,
		"groups.sensors.throughput.offeredPerSecond": 200, "groups.sensors.throughput.sentPerSecond": 200, "groups.sensors.throughput.sentBytesPerSecond": 12800,
		"groups.sensors.throughput.receivedPerSecond": absent, "groups.sensors.latency.publishAck.p99": 50, "groups.sensors.latency.publishDelay.max": 140, "groups.sensors.latency.connect.p50": 60,
		"groups.sensors.latency.firstMessage.mean": 100, "groups.sensors.latency.endToEnd.p99": absent,
		"groups.sensors.energy.perMessage": 5, "groups.sensors.energy.meanCurrent": 0.00002, "groups.sensors.energy.batteryDaysP99": 4167,
		"groups.edge-backend.energy.perMessage": absent,
		"groups.sensors.wire.bytesSent":         169780, "groups.sensors.wire.bytesReceived": 26800, "groups.sensors.wire.connectBytes": 36.4,

		"groups.edge-backend.sent": absent, "groups.edge-backend.throughput.sentPerSecond": absent, "groups.edge-backend.throughput.offeredPerSecond": absent,
		"groups.edge-backend.received": 990, "groups.edge-backend.expected": 1000, "groups.edge-backend.lost": 12, "groups.edge-backend.lostPercent": 1.2,
		"groups.edge-backend.duplicates": 2, "groups.edge-backend.outOfOrder": 1, "groups.edge-backend.errors": 0,
		"groups.edge-backend.throughput.receivedPerSecond": 198, "groups.edge-backend.throughput.receivedBytesPerSecond": 12672,
		"groups.edge-backend.latency.endToEnd.p99": 500, "groups.edge-backend.latency.endToEnd.p999": 600, "groups.edge-backend.latency.endToEnd.min": 100,
		"groups.edge-backend.latency.publishAck.p99": absent, "groups.edge-backend.retained.expected": 2, "groups.edge-backend.retained.received": 1, "groups.edge-backend.beforeJoining": 4,
		"groups.sensors.retained.received": absent, "groups.sensors.beforeJoining": absent,

		"pairs.sensors.edge-backend.expected": 1000, "pairs.sensors.edge-backend.received": 988, "pairs.sensors.edge-backend.lost": 12,
		"pairs.sensors.edge-backend.lostPercent": 1.2, "pairs.sensors.edge-backend.duplicates": 2, "pairs.sensors.edge-backend.outOfOrder": 1,
		"pairs.sensors.edge-backend.retained": 1, "pairs.sensors.edge-backend.endToEnd.p99": 500, "pairs.sensors.edge-backend.endToEnd.mean": 250,
		"pairs.edge-backend.sensors.lost": absent, // no such delivery
	}
	for name, w := range want {
		f, err := Lookup(name)
		if err != nil {
			t.Errorf("Lookup(%s): %v", name, err)
			continue
		}
		if f.Name != name || f.Histogram != "" {
			t.Errorf("%s: name %q histogram %q", name, f.Name, f.Histogram)
		}
		v, ok := f.Value(r)
		switch {
		case w == absent && ok:
			t.Errorf("%s = %v, want absent", name, v)
		case w != absent && (!ok || v != w):
			t.Errorf("%s = %v %v, want %v", name, v, ok, w)
		}
	}
	// Every group figure reads some group of the result, absent or not, and has the kind of the
	// run's figure of the same name.
	for _, g := range GroupFigures() {
		f, err := Lookup("groups.sensors." + g.Name)
		if err != nil {
			t.Fatal(err)
		}
		if f.Group != "sensors" || f.To != "" || f.Base != g.Name {
			t.Errorf("%s: group %q to %q base %q", f.Name, f.Group, f.To, f.Base)
		}
		if run, err := Lookup(g.Name); groupOnly[g.Name] != (err != nil) || err == nil && (run.Kind != g.Kind || run.Quantile != g.Quantile) {
			t.Errorf("%s: the run's figure of that name: %+v, %v", g.Name, run, err)
		}
		_, ok1 := f.Value(r)
		f2, _ := Lookup("groups.edge-backend." + g.Name)
		if _, ok2 := f2.Value(r); !ok1 && !ok2 {
			t.Errorf("%s: absent in both groups", g.Name)
		}
	}
	for _, p := range PairFigures() {
		f, err := Lookup("pairs.sensors.edge-backend." + p.Name)
		if err != nil {
			t.Fatal(err)
		}
		if f.Group != "sensors" || f.To != "edge-backend" {
			t.Errorf("%s: group %q to %q", f.Name, f.Group, f.To)
		}
		if _, ok := f.Value(r); !ok {
			t.Errorf("%s absent", f.Name)
		}
	}
	// A run's measured window that never opened leaves the groups' rates unknown.
	r.MeasuredSeconds = 0
	f, _ := Lookup("groups.sensors.throughput.sentPerSecond")
	if v, ok := f.Value(r); ok {
		t.Errorf("no window: sentPerSecond = %v", v)
	}
	// A run without groups has none of them.
	f, _ = Lookup("groups.default.sent")
	if v, ok := f.Value(&results.Result{Sent: 5}); ok {
		t.Errorf("flat run: groups.default.sent = %v", v)
	}
}

// groupOnly are the figures a group has and the run not.
var groupOnly = map[string]bool{"retained.expected": true, "retained.received": true, "beforeJoining": true,
	"requests.expected": true, "requests.answered": true, "requests.lost": true, "requests.duplicates": true}

func init() {
	for _, st := range latencyStats {
		groupOnly["requests.roundTrip."+st.name] = true
	}
}

func TestGroupLookupErrors(t *testing.T) {
	for _, c := range []struct{ name, has string }{
		{"groups.sensors", "a device group's figures are groups.<group>.<figure>, e.g. groups.sensors.latency.endToEnd.p99"},
		{"groups..lost", "groups.<group>.<figure>"},
		{"groups.sensors.latncy.endToEnd.p99", "did you mean groups.sensors.latency.endToEnd.p99?"},
		{"groups.sensors.recieved", "did you mean groups.sensors.received?"},
		{"groups.sensors.measuredSeconds", "measuredSeconds is a figure of the whole run, which a device group has not"},
		{"groups.sensors.wire.retransmits", "a device group has sent, acked, received"},
		{"groups.sensors.bogus", "latency.endToEnd.<statistic>, latency.publishAck.<statistic>"},
		{"pairs.a.b", "pairs.<publishing group>.<subscribing group>.<figure>"},
		{"pairs.a.b.latency.endToEnd.p99", "did you mean pairs.a.b.endToEnd.p99?"},
		{"pairs.a.b.sent", "a pair of groups has expected, received, lost, lostPercent, duplicates, outOfOrder, retained, endToEnd.<statistic>"},
		{"pairs.a.b.lots", "did you mean pairs.a.b.lost?"},
		{"group.sensors.lost", "figures are sent"},
		{"bogus", "groups.<group>.<figure>, pairs.<from>.<to>.<figure>"},
	} {
		_, err := Lookup(c.name)
		if err == nil || !strings.Contains(err.Error(), c.has) {
			t.Errorf("Lookup(%q) = %v, want it to say %q", c.name, err, c.has)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "unknown figure "+c.name) {
			t.Errorf("Lookup(%q) = %v, want it to name the figure first", c.name, err)
		}
	}
}

func TestUnmatched(t *testing.T) {
	r := fleetResult()
	for _, c := range []struct{ name, want string }{
		{"lost", ""},
		{"groups.sensors.sent", ""},
		{"groups.edge-backend.lost", ""},
		{"pairs.sensors.edge-backend.lost", ""},
		{"groups.sensor.sent", "no device group sensor (did you mean sensors?); the run's groups are sensors, edge-backend"},
		{"groups.gateway.sent", "no device group gateway; the run's groups are sensors, edge-backend"},
		{"pairs.sensors.backend.lost", "no device group backend (did you mean edge-backend?); the run's groups are sensors, edge-backend"},
		{"pairs.edge-backend.sensors.lost", "no delivery from group edge-backend to group sensors"},
	} {
		f, err := Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		err = f.Unmatched(r)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || err.Error() != c.want && !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	f, _ := Lookup("groups.default.lost")
	if err := f.Unmatched(&results.Result{}); err == nil || !strings.Contains(err.Error(), "no device group default: the run has no device groups (spec.groups)") {
		t.Errorf("flat run: %v", err)
	}
}
