package loadgen

import (
	"strconv"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/promhist"
	"github.com/msgbench/msgbench/internal/wire"
	"github.com/msgbench/msgbench/loadgen/drivers"
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

// LabelsOf are the labels of worker w of mb (a suite's run carries its suite, point and
// repetition in labels and annotations).
func LabelsOf(mb *v1alpha1.MessagingBenchmark, w int) MetricLabels {
	return MetricLabels{
		Benchmark: mb.Name, Namespace: mb.Namespace, Worker: w,
		Protocol: string(mb.Spec.Protocol), QoS: mb.Spec.QoS,
		Suite: mb.Labels[v1alpha1.LabelSuite], Point: mb.Annotations[v1alpha1.AnnotationPoint],
		Repetition: mb.Annotations[v1alpha1.AnnotationRepetition],
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
	counter := func(name string, v int64) {
		ch <- prometheus.MustNewConstMetric(c.descs[name], prometheus.CounterValue, float64(v))
	}
	gauge := func(name string, v int64) {
		ch <- prometheus.MustNewConstMetric(c.descs[name], prometheus.GaugeValue, float64(v))
	}
	snap := c.m.Snapshot()
	for _, p := range phases {
		v := 0.0
		if p == snap.Phase {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(c.descs[MetricPhase], prometheus.GaugeValue, v, p)
	}
	if f := c.m.final.Load(); f != nil {
		// The result's own figures: they add sessions that dropped to the errors, and lost is
		// known now.
		res := f.res
		gauge(MetricConnections, 0)
		counter(MetricSent, res.Sent)
		counter(MetricAcked, res.Acked)
		counter(MetricReceived, res.Received)
		counter(MetricExpected, res.Expected)
		counter(MetricErrors, res.Errors)
		counter(MetricWireSent, res.Wire.BytesSent)
		counter(MetricWireRecv, res.Wire.BytesReceived)
		counter(MetricDuplicates, deref(res.Duplicates))
		counter(MetricOutOfOrder, deref(res.OutOfOrder))
		if res.Lost != nil {
			counter(MetricLost, *res.Lost)
		}
		c.histograms(ch, f.hist)
		return
	}
	r := c.m.run.Load()
	if r == nil {
		return
	}
	live := r.live()
	gauge(MetricConnections, live.open)
	{
		tot := r.rec.counts()
		expected, _ := r.expected()
		counter(MetricSent, tot.sent)
		counter(MetricAcked, tot.acked)
		counter(MetricReceived, tot.received)
		counter(MetricExpected, expected)
		counter(MetricErrors, tot.errors)
		counter(MetricWireSent, live.wire.BytesSent)
		counter(MetricWireRecv, live.wire.BytesReceived)
		counter(MetricDuplicates, tot.dups)
		counter(MetricOutOfOrder, tot.ooo)
	}
	c.mu.Lock()
	hist := c.scratch.histograms(r.rec)
	c.mu.Unlock()
	c.histograms(ch, hist)
}

// histogramNames are the latency metrics, in the order of a [4]*dto.Histogram.
var histogramNames = [4]string{MetricEndToEnd, MetricPublishAck, MetricConnect, MetricFirstMsg}

func (c *collector) histograms(ch chan<- prometheus.Metric, hist [4]*dto.Histogram) {
	for i, name := range histogramNames {
		m, err := promhist.NewMetric(c.descs[name], hist[i])
		if err != nil {
			ch <- prometheus.NewInvalidMetric(c.descs[name], err)
			continue
		}
		ch <- m
	}
}

// scratch is four histograms reused by every scrape (each is ~190 KB).
type scratch [4]*hdrhistogram.Histogram

// histograms merges the recorder's latency figures so far and converts them.
func (s *scratch) histograms(rec *recorder) [4]*dto.Histogram {
	for i := range s {
		if s[i] == nil {
			s[i] = results.NewHistogram()
		}
		s[i].Reset()
	}
	rec.mergeInto(s[0], s[1], s[2], s[3])
	var out [4]*dto.Histogram
	for i := range s {
		out[i] = promhist.Histogram(s[i])
	}
	return out
}

// final is a finished worker's figures: its result and its latency histograms, converted once
// (a suite's many finished runs keep a few hundred bytes each, not their clients).
type final struct {
	res  *results.Result
	hist [4]*dto.Histogram
}

// finish stores the result and lets go of the run.
func (m *Monitor) finish(r *run, res *results.Result) {
	if m == nil {
		return
	}
	var s scratch
	m.final.Store(&final{res: res, hist: s.histograms(r.rec)})
	m.run.Store(nil)
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// liveState is what the clients' sessions say now.
type liveState struct {
	open int64
	wire wire.Counters
}

// live reads every client's session: open or not, and its wire counters so far.
func (r *run) live() liveState {
	var st liveState
	add := func(p *drivers.Session) {
		if p == nil {
			return
		}
		s := *p
		st.wire.Add(s.Counters())
		select {
		case <-s.Done():
		default:
			st.open++
		}
	}
	for _, p := range r.pubs {
		add(p.live.Load())
	}
	for _, s := range r.subs {
		add(s.live.Load())
	}
	return st
}
