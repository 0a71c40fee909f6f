package loadgen

import (
	"strconv"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/msgbench/msgbench/internal/promhist"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/plan"
	"github.com/msgbench/msgbench/results"
)

// MetricLabels identify one worker's series. Every series of a worker carries all of them
// (empty ones too), so a dashboard can select on any.
type MetricLabels struct {
	Benchmark, Namespace string
	Worker               int
	Protocol             string
	QoS                  int32
	// Suite, Point and Repetition name a suite's run (empty for a lone benchmark).
	Suite, Point, Repetition string
}

// LabelsOf are the labels of worker w of the run p plans: its benchmark's name (p.Benchmark),
// and its clients' protocol and QoS.
func LabelsOf(p *plan.Plan, w int) MetricLabels {
	b, g := p.Benchmark, &p.Groups[0]
	return MetricLabels{
		Benchmark: b.Name, Namespace: b.Namespace, Worker: w,
		Protocol: string(g.Protocol), QoS: g.QoS,
		Suite: b.Suite, Point: b.Point, Repetition: b.Repetition,
	}
}

func (l MetricLabels) prometheus() prometheus.Labels {
	return prometheus.Labels{
		"benchmark": l.Benchmark, "namespace": l.Namespace, "worker": strconv.Itoa(l.Worker),
		"protocol": l.Protocol, "qos": strconv.Itoa(int(l.QoS)),
		"suite": l.Suite, "point": l.Point, "repetition": l.Repetition,
	}
}

// Component are the labels of a broker's or gateway's series: the worker's without the worker,
// and which component (broker, gateway) they describe.
func (l MetricLabels) Component(component string) prometheus.Labels {
	p := l.prometheus()
	delete(p, "worker")
	p["component"] = component
	return p
}

// Phases in the order a run goes through them, for msgbench_phase.
var phases = []string{PhaseConnecting, PhaseReady, PhaseWarmup, PhaseMeasuring, PhaseDraining, PhaseDone}

// Metric names; docs/metrics.md defines each.
const (
	MetricSent        = "msgbench_messages_sent_total"
	MetricAcked       = "msgbench_messages_acked_total"
	MetricReceived    = "msgbench_messages_received_total"
	MetricExpected    = "msgbench_messages_expected_total"
	MetricLost        = "msgbench_messages_lost_total"
	MetricDuplicates  = "msgbench_messages_duplicate_total"
	MetricOutOfOrder  = "msgbench_messages_out_of_order_total"
	MetricErrors      = "msgbench_errors_total"
	MetricConnections = "msgbench_connections"
	MetricWireSent    = "msgbench_wire_sent_bytes_total"
	MetricWireRecv    = "msgbench_wire_received_bytes_total"
	MetricPhase       = "msgbench_phase"
	MetricEndToEnd    = "msgbench_end_to_end_latency_seconds"
	MetricPublishAck  = "msgbench_publish_ack_latency_seconds"
	MetricConnect     = "msgbench_connect_latency_seconds"
	MetricFirstMsg    = "msgbench_first_message_latency_seconds"
)

// collector serves a worker's progress as Prometheus metrics. It reads what the run keeps anyway
// (the recorder's shards, the clients' counters and sessions) when scraped, so the clients'
// paths do no extra work for it: no counter is incremented twice, no histogram observed twice.
type collector struct {
	m     *Monitor
	descs map[string]*prometheus.Desc

	mu      sync.Mutex // one scrape at a time uses the scratch histograms
	scratch scratch
}

// NewCollector returns the Prometheus collector of the worker m monitors. Until the run has
// drained, messages lost is absent: what has not arrived yet may still come. Once the run is
// over every counter is the worker's result's own figure.
func NewCollector(m *Monitor, l MetricLabels) prometheus.Collector {
	c := &collector{m: m, descs: map[string]*prometheus.Desc{}}
	cl := l.prometheus()
	help := map[string]string{
		MetricSent:        "Messages published in the measured window.",
		MetricAcked:       "Messages of the measured window the broker acknowledged (QoS 1/2; Kafka acks).",
		MetricReceived:    "Deliveries of measured messages to this worker's subscribers, duplicates included.",
		MetricExpected:    "Deliveries the subscriptions call for, for the messages published so far (every subscriber of a topic expects every measured message on it).",
		MetricLost:        "Expected deliveries that never arrived; present only once the run has drained (the result's lost).",
		MetricDuplicates:  "Deliveries of a message the subscriber already had.",
		MetricOutOfOrder:  "Deliveries that arrived after a later message of the same publisher.",
		MetricErrors:      "Errors: failed publishes, foreign messages on the run's topics, sessions that dropped.",
		MetricConnections: "Client sessions open now (publishers and subscribers).",
		MetricWireSent:    "Bytes the clients' sockets wrote (headers, handshakes and retransmissions included), since they connected.",
		MetricWireRecv:    "Bytes the clients' sockets read, since they connected.",
		MetricPhase:       "1 for the phase the worker is in, 0 for the others.",
		MetricEndToEnd:    "End-to-end latency of measured deliveries: publish call to the subscriber's handler.",
		MetricPublishAck:  "Publish to acknowledgement latency of measured messages (QoS 1/2, Kafka acks).",
		MetricConnect:     "Connect latency: dial to the protocol's connection acknowledgement, every client.",
		MetricFirstMsg:    "Publisher connect start to its first message's delivery.",
	}
	for name, h := range help {
		var vars []string
		if name == MetricPhase {
			vars = []string{"phase"}
		}
		c.descs[name] = prometheus.NewDesc(name, h, vars, cl)
	}
	return c
}

// Describe implements prometheus.Collector.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	phase := c.m.phaseNow()
	for _, p := range phases {
		v := 0.0
		if p == phase {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(c.descs[MetricPhase], prometheus.GaugeValue, v, p)
	}
	f := c.m.final.Load()
	if f == nil {
		r := c.m.run.Load()
		if r == nil {
			return // not started: nothing counted yet
		}
		c.mu.Lock()
		f = c.scratch.liveFigures(r)
		c.mu.Unlock()
	}
	metric := func(name string, t prometheus.ValueType, v int64) {
		ch <- prometheus.MustNewConstMetric(c.descs[name], t, float64(v))
	}
	metric(MetricConnections, prometheus.GaugeValue, f.open)
	for name, v := range map[string]int64{
		MetricSent: f.sent, MetricAcked: f.acked, MetricReceived: f.received, MetricExpected: f.expected,
		MetricErrors: f.errors, MetricDuplicates: f.dups, MetricOutOfOrder: f.ooo,
		MetricWireSent: f.wireSent, MetricWireRecv: f.wireRecv,
	} {
		metric(name, prometheus.CounterValue, v)
	}
	if f.lost != nil {
		metric(MetricLost, prometheus.CounterValue, *f.lost)
	}
	for i, name := range histogramNames {
		m, err := promhist.NewMetric(c.descs[name], f.hist[i])
		if err != nil {
			ch <- prometheus.NewInvalidMetric(c.descs[name], err)
			continue
		}
		ch <- m
	}
}

// figures are what a scrape reports of a worker: counted so far while it runs, its result's own
// once it has drained.
type figures struct {
	sent, acked, received, expected, errors, dups, ooo int64
	wireSent, wireRecv                                 int64
	open                                               int64  // sessions open now
	lost                                               *int64 // known once drained
	hist                                               [4]*dto.Histogram
}

// histogramNames are the latency metrics and histogramKeys the result's histograms they come
// from, in the order of figures.hist.
var (
	histogramNames = [4]string{MetricEndToEnd, MetricPublishAck, MetricConnect, MetricFirstMsg}
	histogramKeys  = [4]string{results.HistEndToEnd, results.HistPublishAck, results.HistConnect, results.HistFirstMessage}
)

// scratch is four histograms reused by every scrape (each is ~190 KB).
type scratch [4]*hdrhistogram.Histogram

// liveFigures reads a running worker: the recorder's shards, the expected deliveries, and its
// clients' sessions.
func (s *scratch) liveFigures(r *run) *figures {
	tot := r.rec.counts()
	expected, _ := r.expected()
	f := &figures{sent: tot.sent, acked: tot.acked, received: tot.received, expected: expected,
		errors: tot.errors, dups: tot.dups, ooo: tot.ooo}
	for _, c := range r.pubs {
		f.addSession(c.live.Load())
	}
	for _, c := range r.subs {
		f.addSession(c.live.Load())
	}
	for i := range s {
		if s[i] == nil {
			s[i] = results.NewHistogram()
		}
		s[i].Reset()
	}
	r.rec.mergeInto(s[0], s[1], s[2], s[3])
	for i := range s {
		f.hist[i] = promhist.Histogram(s[i])
	}
	return f
}

// addSession counts a client's session (nil: not connected yet): its wire bytes, and whether
// it is still open.
func (f *figures) addSession(p *drivers.Session) {
	if p == nil {
		return
	}
	sess := *p
	c := sess.Counters()
	f.wireSent += c.BytesSent
	f.wireRecv += c.BytesReceived
	select {
	case <-sess.Done():
	default:
		f.open++
	}
}

// resultFigures are a finished worker's figures, all from its result: errors include sessions
// that dropped, lost is known. A few hundred bytes, so a suite's finished runs keep neither their
// clients nor their results.
func resultFigures(res *results.Result) *figures {
	f := &figures{sent: res.Sent, acked: res.Acked, received: res.Received, expected: res.Expected,
		errors: res.Errors, wireSent: res.Wire.BytesSent, wireRecv: res.Wire.BytesReceived, lost: res.Lost}
	if res.Duplicates != nil {
		f.dups = *res.Duplicates
	}
	if res.OutOfOrder != nil {
		f.ooo = *res.OutOfOrder
	}
	hists, _ := res.DecodeHistograms() // the engine encoded them a moment ago
	for i, key := range histogramKeys {
		h := hists[key]
		if h == nil { // a figure with no sample (QoS 0 has no acknowledgements)
			h = results.NewHistogram()
		}
		f.hist[i] = promhist.Histogram(h)
	}
	return f
}

// finish puts the result's figures in place of the live ones and lets go of the run.
func (m *Monitor) finish(res *results.Result) {
	if m == nil {
		return
	}
	m.final.Store(resultFigures(res))
	m.run.Store(nil)
}
