package figures

import (
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/results"
)

// sample builds a result the way a worker does (raw counts, histograms, then Finalize) from
// samples whose percentiles are known by hand:
//   - endToEnd: 1, 2, … 1000 µs, so pN is 10·N µs (p999 999), min 1, max 1000, mean 500.5;
//   - publishAck: 2, 4, … 2000 µs, twice those;
//   - connect: 10, 20, … 1000 µs (100 clients): p50 500, p90 900, p95 950, p99 990, p999 and
//     max 1000, min 10, mean 505;
//   - firstMessage: one sample of 1234 µs;
//   - publishDelay: none (it is open loop, but say it was never late enough to record).
//
// All values are below 2048, where a 3-digit HdrHistogram is exact.
func sample(t *testing.T) *results.Result {
	t.Helper()
	spec := &v1alpha1.MessagingBenchmarkSpec{Workload: v1alpha1.WorkloadSpec{Publishers: 5, Subscribers: 2, PayloadBytes: 100, Rate: 60}}
	r := &results.Result{Name: "s", Spec: spec, Phase: "Succeeded", MeasuredSeconds: 10,
		Sent: 500, Acked: 498, Received: 990, ReceivedInWindow: 990, Expected: 1000, Lost: results.Int64(20), Duplicates: results.Int64(10), OutOfOrder: results.Int64(3),
		Errors: 2, Unsent: 7,
		Wire: results.Wire{BytesSent: 60000, BytesReceived: 138495, WindowBytes: 198495, BytesDuringWindow: 198495, Connections: 7, ConnectBytesTotal: 700, PublishBytesTotal: 75000, PublishMessageCount: 500,
			SegmentsSent: results.Int64(400), SegmentsReceived: results.Int64(600), Retransmits: results.Int64(4)},
		Resources: results.Resources{LoadgenCPUSeconds: 1.5, LoadgenMaxRSSBytes: 50 << 20, BrokerCPUSeconds: results.Float64(0.75), BrokerMaxRSSBytes: results.Int64(8 << 20)},
		Energy: &results.Energy{Millijoules: 100000, PerMessageMillijoules: results.Float64(250), MeanMilliamps: 12.5, DeviceMilliampsP99: 20,
			BatteryDays: results.Float64(16.6)},
	}
	h := map[string]*hdrhistogram.Histogram{}
	for _, n := range []string{results.HistEndToEnd, results.HistPublishAck, results.HistConnect, results.HistFirstMessage} {
		h[n] = results.NewHistogram()
	}
	for v := int64(1); v <= 1000; v++ {
		results.RecordMicros(h[results.HistEndToEnd], v)
		results.RecordMicros(h[results.HistPublishAck], 2*v)
	}
	for v := int64(10); v <= 1000; v += 10 {
		results.RecordMicros(h[results.HistConnect], v)
	}
	results.RecordMicros(h[results.HistFirstMessage], 1234)
	if err := r.Finalize(h); err != nil {
		t.Fatal(err)
	}
	return r
}

// absent marks a figure the sample has no value for.
const absent = -1e300

func TestEveryFigureAgainstAResult(t *testing.T) {
	want := map[string]float64{
		"sent": 500, "acked": 498, "received": 990, "expected": 1000, "lost": 20, "lostPercent": 2,
		"duplicates": 10, "outOfOrder": 3, "errors": 2, "unsent": 7, "measuredSeconds": 10,
		"throughput.offeredPerSecond": 60, "throughput.sentPerSecond": 50, "throughput.receivedPerSecond": 99,
		"throughput.sentBytesPerSecond": 5000, "throughput.receivedBytesPerSecond": 9900,

		"latency.endToEnd.p50": 500, "latency.endToEnd.p90": 900, "latency.endToEnd.p95": 950, "latency.endToEnd.p99": 990,
		"latency.endToEnd.p999": 999, "latency.endToEnd.max": 1000, "latency.endToEnd.min": 1, "latency.endToEnd.mean": 500.5,
		"latency.publishAck.p50": 1000, "latency.publishAck.p90": 1800, "latency.publishAck.p95": 1900, "latency.publishAck.p99": 1980,
		"latency.publishAck.p999": 1998, "latency.publishAck.max": 2000, "latency.publishAck.min": 2, "latency.publishAck.mean": 1001,
		"latency.publishDelay.p50": absent, "latency.publishDelay.p90": absent, "latency.publishDelay.p95": absent, "latency.publishDelay.p99": absent,
		"latency.publishDelay.p999": absent, "latency.publishDelay.max": absent, "latency.publishDelay.min": absent, "latency.publishDelay.mean": absent,
		"latency.connect.p50": 500, "latency.connect.p90": 900, "latency.connect.p95": 950, "latency.connect.p99": 990,
		"latency.connect.p999": 1000, "latency.connect.max": 1000, "latency.connect.min": 10, "latency.connect.mean": 505,
		"latency.firstMessage.p50": 1234, "latency.firstMessage.p90": 1234, "latency.firstMessage.p95": 1234, "latency.firstMessage.p99": 1234,
		"latency.firstMessage.p999": 1234, "latency.firstMessage.max": 1234, "latency.firstMessage.min": 1234, "latency.firstMessage.mean": 1234,

		"wire.bytesSent": 60000, "wire.bytesReceived": 138495, "wire.bytesPerMessage": 200.5, "wire.bytesPerSecond": 19849.5, "wire.connectBytes": 100,
		"wire.publishBytesPerMessage": 150, "wire.segmentsSent": 400, "wire.segmentsReceived": 600, "wire.retransmits": 4,
		"wire.datagramsSent": absent, "wire.datagramsReceived": absent,
		"resources.loadgenCPUSeconds": 1.5, "resources.loadgenMaxRSSBytes": 50 << 20, "resources.brokerCPUSeconds": 0.75,
		"resources.brokerMaxRSSBytes": 8 << 20, "resources.brokerCPUPerMessage": 0.75 / 990,
		"energy.perMessage": 0.25, "energy.total": 100, "energy.meanCurrent": 0.0125, "energy.deviceCurrentP99": 0.02,
		"energy.batteryDays": 16.6, "energy.batteryDaysP99": absent,
	}
	r := sample(t)
	seen := map[string]bool{}
	for _, f := range All() {
		seen[f.Name] = true
		w, ok := want[f.Name]
		if !ok {
			t.Errorf("%s: no expected value in the table", f.Name)
			continue
		}
		got, present := f.Value(r)
		switch {
		case w == absent && present:
			t.Errorf("%s = %v, want absent", f.Name, got)
		case w != absent && !present:
			t.Errorf("%s absent, want %v", f.Name, w)
		case w != absent && got != w:
			t.Errorf("%s = %v, want %v", f.Name, got, w)
		}
		if _, ok := f.Value(nil); ok {
			t.Errorf("%s present in a nil result", f.Name)
		}
		if l, err := Lookup(f.Name); err != nil || l.Name != f.Name {
			t.Errorf("Lookup(%s) = %v, %v", f.Name, l.Name, err)
		}
		if f.Definition == "" || f.Kind == "" {
			t.Errorf("%s: no definition or kind", f.Name)
		}
		if (f.Kind == Duration) != (f.Histogram != "") {
			t.Errorf("%s: kind %s but histogram %q", f.Name, f.Kind, f.Histogram)
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("%s in the table but not a figure", name)
		}
	}
}

// A run without subscribers has no receiving figures (lost == 0 would be vacuous), and one
// without a measured window no rates.
func TestAbsentFigures(t *testing.T) {
	r := sample(t)
	r.Spec.Workload.Subscribers = 0
	r.Spec.Workload.Rate = 0
	r.Throughput.OfferedPerSecond = 0
	for _, name := range []string{"received", "expected", "lost", "lostPercent", "duplicates", "outOfOrder",
		"throughput.receivedPerSecond", "throughput.receivedBytesPerSecond", "throughput.offeredPerSecond"} {
		f, _ := Lookup(name)
		if v, ok := f.Value(r); ok {
			t.Errorf("no subscribers, closed loop: %s = %v, want absent", name, v)
		}
	}
	for _, name := range []string{"sent", "throughput.sentPerSecond", "errors"} {
		f, _ := Lookup(name)
		if _, ok := f.Value(r); !ok {
			t.Errorf("no subscribers: %s absent", name)
		}
	}
	r.MeasuredSeconds = 0
	f, _ := Lookup("throughput.sentPerSecond")
	if v, ok := f.Value(r); ok {
		t.Errorf("no window: sentPerSecond = %v, want absent", v)
	}
	// A result without spec (hand-written) is taken as it is.
	r = sample(t)
	r.Spec = nil
	f, _ = Lookup("lost")
	if v, ok := f.Value(r); !ok || v != 20 {
		t.Errorf("no spec: lost = %v %v", v, ok)
	}
}

func TestStableOrderAndPooledShape(t *testing.T) {
	a, b := All(), All()
	a[0].Name = "changed"
	if b[0].Name != "sent" || All()[0].Name != "sent" {
		t.Error("All is not a stable copy")
	}
	f, _ := Lookup("latency.publishAck.p999")
	if f.Histogram != results.HistPublishAck || f.Quantile != 99.9 {
		t.Errorf("p999: histogram %q quantile %v", f.Histogram, f.Quantile)
	}
	if f, _ := Lookup("latency.connect.mean"); f.Quantile != -1 {
		t.Errorf("mean quantile %v", f.Quantile)
	}
}

func TestLookupErrors(t *testing.T) {
	for _, c := range []struct{ name, has string }{
		{"latency.e2e.p99", "latency figures are latency.<histogram>.<statistic>, e.g. latency.endToEnd.p99, with histogram one of endToEnd, publishAck, publishDelay, connect, firstMessage and statistic one of p50, p90, p95, p99, p999, max, min, mean"},
		{"latency.endToEnd.p99.9", "did you mean latency.endToEnd.p999?"},
		{"Lost", "unknown figure Lost (did you mean lost?)"},
		{"receivd", "did you mean received?"},
		{"throughput.received", "did you mean throughput.receivedBytesPerSecond or throughput.receivedPerSecond?"},
		{"throughput.received", "throughput figures are throughput.offeredPerSecond, throughput.sentPerSecond"},
		{"wire.bytes", "wire figures are wire.bytesSent"},
		{"bogus", "figures are sent, acked, received"},
		{"bogus", "latency.<histogram>.<statistic>"},
		{"foo.bar", "figures are sent, acked"},
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
