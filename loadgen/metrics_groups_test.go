package loadgen_test

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/loadgen"
	"github.com/msgbench/msgbench/plan"
	"github.com/msgbench/msgbench/results"
)

// scrape is one scrape of a worker's collector through a pedantic registry (which refuses a
// series whose labels its description does not announce): by metric name, every series.
func scrape(t *testing.T, reg *prometheus.Registry) map[string][]*dto.Metric {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	out := map[string][]*dto.Metric{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf.GetMetric()
	}
	return out
}

func labelsOf(m *dto.Metric) map[string]string {
	l := map[string]string{}
	for _, p := range m.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	return l
}

// value is the value of metric's series of group (a counter, gauge or histogram's count); false
// when there is none.
func value(series map[string][]*dto.Metric, metric, group string) (float64, map[string]string, bool) {
	for _, m := range series[metric] {
		l := labelsOf(m)
		if l["group"] != group {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), l, true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), l, true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), l, true
		}
	}
	return 0, nil, false
}

// groupsOf are the values of label group of metric's series, sorted.
func groupsOf(series map[string][]*dto.Metric, metric string) []string {
	var gs []string
	for _, m := range series[metric] {
		gs = append(gs, labelsOf(m)["group"])
	}
	sort.Strings(gs)
	return gs
}

// monitored runs spec with a Monitor whose collector is scraped every 50 ms while it runs; it
// returns the result, the registry and the scrapes taken while the window was being measured.
func monitored(t *testing.T, src, addr string) (*results.Result, *prometheus.Registry, []map[string][]*dto.Metric) {
	t.Helper()
	mb, err := manifest.Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.CompileBenchmark(mb, plan.Local)
	if err != nil {
		t.Fatal(err)
	}
	m := &loadgen.Monitor{}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(loadgen.NewCollector(m, loadgen.LabelsOf(p, 0)))
	var mu sync.Mutex
	var live []map[string][]*dto.Metric
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			mfs, err := reg.Gather()
			if err != nil {
				t.Errorf("live scrape: %v", err)
				return
			}
			if m.Snapshot().Phase != loadgen.PhaseMeasuring {
				continue
			}
			s := map[string][]*dto.Metric{}
			for _, mf := range mfs {
				s[mf.GetName()] = mf.GetMetric()
			}
			mu.Lock()
			live = append(live, s)
			mu.Unlock()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := loadgen.Run(ctx, loadgen.Options{Spec: &mb.Spec, Name: mb.Name, Address: addr, Monitor: m})
	close(stop)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if res.Phase != "Succeeded" {
		t.Fatalf("phase %s: %s", res.Phase, res.Message)
	}
	if len(live) == 0 {
		t.Fatal("no scrape while measuring")
	}
	return res, reg, live
}

const metricsFleetSpec = `
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: metrics-fleet}
spec:
  protocol: mqtt
  qos: 1
  topics:
    - {name: telemetry, pattern: "metrics-fleet/{index}/telemetry", count: 4}
  groups:
    - name: sensors
      count: 4
      publish: {topics: telemetry, payloadBytes: 32, rate: 200}
    - name: edge-backend
      count: 2
      subscribe: {filter: "metrics-fleet/+/telemetry", share: backend}
    - name: dashboards
      count: 2
      qos: 0
      subscribe: {filter: "metrics-fleet/#"}
  workload: {warmup: 500ms, duration: 2s}
`

// TestMetricsPerDeviceGroup: a run with spec.groups serves every figure of its clients per group
// (label group, with the group's own protocol and qos), while it runs and at the end, when each
// group's series are its figures in result.json's groups[]; msgbench_phase stays the worker's.
func TestMetricsPerDeviceGroup(t *testing.T) {
	t.Parallel() // its own broker
	b := startMosquitto(t, "")
	res, reg, live := monitored(t, metricsFleetSpec, b.Addr)
	want := []string{"dashboards", "edge-backend", "sensors"}
	perGroup := []string{loadgen.MetricSent, loadgen.MetricAcked, loadgen.MetricReceived, loadgen.MetricExpected,
		loadgen.MetricDuplicates, loadgen.MetricOutOfOrder, loadgen.MetricErrors, loadgen.MetricConnections,
		loadgen.MetricWireSent, loadgen.MetricWireRecv, loadgen.MetricEndToEnd, loadgen.MetricPublishAck,
		loadgen.MetricConnect, loadgen.MetricFirstMsg}
	// While it runs: a series per group, sessions open in each, messages counted where they go.
	last := live[len(live)-1]
	for _, metric := range perGroup {
		if got := groupsOf(last, metric); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("live %s: groups %v, want %v", metric, got, want)
		}
	}
	if _, _, ok := value(last, loadgen.MetricLost, "sensors"); ok {
		t.Error("live: lost before the run drained")
	}
	for g, n := range map[string]float64{"sensors": 4, "edge-backend": 2, "dashboards": 2} {
		if open, _, _ := value(last, loadgen.MetricConnections, g); open != n {
			t.Errorf("live: %s has %v sessions open, want %v", g, open, n)
		}
	}
	var sent, received float64
	for _, s := range live {
		v, _, _ := value(s, loadgen.MetricSent, "sensors")
		sent = max(sent, v)
		v, _, _ = value(s, loadgen.MetricReceived, "dashboards")
		received = max(received, v)
	}
	if sent == 0 || received == 0 {
		t.Errorf("live: sensors sent %v, dashboards received %v", sent, received)
	}
	if v, _, _ := value(last, loadgen.MetricSent, "dashboards"); v != 0 {
		t.Errorf("live: dashboards sent %v", v)
	}

	// At the end: each group's series are its result's figures.
	final := scrape(t, reg)
	for _, name := range want {
		g := res.Group(name)
		if g == nil {
			t.Fatalf("no group %s in the result", name)
		}
		figures := map[string]int64{
			loadgen.MetricSent: g.Sent, loadgen.MetricAcked: g.Acked, loadgen.MetricReceived: g.Received,
			loadgen.MetricExpected: g.Expected, loadgen.MetricErrors: g.Errors,
			loadgen.MetricWireSent: g.Wire.BytesSent, loadgen.MetricWireRecv: g.Wire.BytesReceived,
		}
		if g.Lost != nil {
			figures[loadgen.MetricLost], figures[loadgen.MetricDuplicates] = *g.Lost, *g.Duplicates
		}
		if l := g.Latency.EndToEnd; l != nil {
			figures[loadgen.MetricEndToEnd] = l.Count
		}
		if l := g.Latency.PublishAck; l != nil {
			figures[loadgen.MetricPublishAck] = l.Count
		}
		if l := g.Latency.Connect; l != nil {
			figures[loadgen.MetricConnect] = l.Count
		}
		for metric, w := range figures {
			v, labels, ok := value(final, metric, name)
			if !ok || v != float64(w) {
				t.Errorf("final %s{group=%q} = %v (%v), result.json has %d", metric, name, v, ok, w)
				continue
			}
			qos := map[string]string{"sensors": "1", "edge-backend": "1", "dashboards": "0"}[name] // dashboards: groups[].qos
			if labels["protocol"] != "mqtt" || labels["qos"] != qos || labels["benchmark"] != "metrics-fleet" || labels["worker"] != "0" {
				t.Errorf("final %s{group=%q}: labels %v", metric, name, labels)
			}
		}
	}
	if v, _, ok := value(final, loadgen.MetricLost, "sensors"); ok {
		t.Errorf("final: sensors, which subscribe to nothing, lost %v", v)
	}
	if g := res.Group("dashboards"); g.Received == 0 || g.Received != g.Expected || res.Group("sensors").Sent == 0 {
		t.Errorf("the run: dashboards received %d of %d", g.Received, g.Expected)
	}
	// msgbench_phase is the worker's: its first group's protocol and qos, no group.
	for _, m := range final[loadgen.MetricPhase] {
		if l := labelsOf(m); l["group"] != "" || l["protocol"] != "mqtt" || l["qos"] != "1" {
			t.Errorf("phase labels %v", l)
		}
	}
}

// TestMetricsOfAFlatRun: a flat spec's series are its one group's, named default, with the
// spec's protocol and qos, and at the end equal to the result's totals, as before groups.
func TestMetricsOfAFlatRun(t *testing.T) {
	t.Parallel() // its own broker
	b := startMosquitto(t, "")
	src := `
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: metrics-flat}
spec:
  protocol: mqtt
  qos: 2
  workload: {publishers: 2, subscribers: 2, topics: 2, topicPrefix: metrics-flat-, payloadBytes: 64, rate: 200, warmup: 500ms, duration: 1500ms}
`
	res, reg, live := monitored(t, src, b.Addr)
	for _, s := range append(live, scrape(t, reg)) {
		for _, metric := range []string{loadgen.MetricSent, loadgen.MetricReceived, loadgen.MetricEndToEnd, loadgen.MetricConnections} {
			if got := groupsOf(s, metric); len(got) != 1 || got[0] != "default" {
				t.Fatalf("%s: groups %v, want [default]", metric, got)
			}
		}
	}
	final := scrape(t, reg)
	for metric, w := range map[string]int64{
		loadgen.MetricSent: res.Sent, loadgen.MetricAcked: res.Acked, loadgen.MetricReceived: res.Received,
		loadgen.MetricExpected: res.Expected, loadgen.MetricLost: *res.Lost, loadgen.MetricDuplicates: *res.Duplicates,
		loadgen.MetricErrors: res.Errors, loadgen.MetricWireSent: res.Wire.BytesSent, loadgen.MetricWireRecv: res.Wire.BytesReceived,
		loadgen.MetricEndToEnd: res.Latency.EndToEnd.Count, loadgen.MetricPublishAck: res.Latency.PublishAck.Count,
	} {
		v, labels, ok := value(final, metric, "default")
		if !ok || v != float64(w) {
			t.Errorf("%s = %v (%v), result.json has %d", metric, v, ok, w)
		}
		if labels["protocol"] != "mqtt" || labels["qos"] != "2" || labels["benchmark"] != "metrics-flat" {
			t.Errorf("%s: labels %v", metric, labels)
		}
	}
	if res.Sent == 0 || res.Received != res.Expected {
		t.Errorf("the run: sent %d, received %d of %d", res.Sent, res.Received, res.Expected)
	}
}
