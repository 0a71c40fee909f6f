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
// (empty ones too), so a dashboard can select on any. The series of the figures of its clients
// are per client group besides (label group): their protocol and qos are that group's, a flat
// spec's one group being named default (plan).
type MetricLabels struct {
	Benchmark, Namespace string
	Worker               int
	Protocol             string
	QoS                  int32
	// Suite, Point and Repetition name a suite's run (empty for a lone benchmark).
	Suite, Point, Repetition string
}

// LabelsOf are the labels of worker w of the run p plans: its benchmark's name (p.Benchmark),
// and its first group's protocol and QoS (those of every client of a flat spec; a per-group
// series has its own group's).
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
	// Every figure of the clients is per client group: the group's name, protocol and QoS are
	// variable labels, not the worker's constant ones.
	perGroup := prometheus.Labels{}
	for k, v := range cl {
		if k != "protocol" && k != "qos" {
			perGroup[k] = v
		}
	}
	for name, h := range help {
		if name == MetricPhase {
			c.descs[name] = prometheus.NewDesc(name, h, []string{"phase"}, cl)
			continue
		}
		c.descs[name] = prometheus.NewDesc(name, h, groupLabels, perGroup)
	}
	return c
}

// groupLabels are the variable labels of a client group's series, in groupFigures.labels' order.
var groupLabels = []string{"group", "protocol", "qos"}

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
	for i := range f.groups {
		c.collectGroup(ch, &f.groups[i])
	}
}

// collectGroup sends one client group's series.
func (c *collector) collectGroup(ch chan<- prometheus.Metric, g *groupFigures) {
	labels := g.labels()
	metric := func(name string, t prometheus.ValueType, v int64) {
		ch <- prometheus.MustNewConstMetric(c.descs[name], t, float64(v), labels...)
	}
	metric(MetricConnections, prometheus.GaugeValue, g.open)
	for name, v := range map[string]int64{
		MetricSent: g.sent, MetricAcked: g.acked, MetricReceived: g.received, MetricExpected: g.expected,
		MetricErrors: g.errors, MetricDuplicates: g.dups, MetricOutOfOrder: g.ooo,
		MetricWireSent: g.wireSent, MetricWireRecv: g.wireRecv,
	} {
		metric(name, prometheus.CounterValue, v)
	}
	if g.lost != nil {
		metric(MetricLost, prometheus.CounterValue, *g.lost)
	}
	for i, name := range histogramNames {
		m, err := promhist.NewMetric(c.descs[name], g.hist[i], labels...)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(c.descs[name], err)
			continue
		}
		ch <- m
	}
}

// figures are what a scrape reports of a worker, per client group of the plan (a flat spec's
// one, default, or spec.groups' in the spec's order): counted so far while it runs, its
// result's own once it has drained.
type figures struct {
	groups []groupFigures
}

// groupFigures are one client group's figures in a worker.
type groupFigures struct {
	name, protocol                                     string // labels group and protocol
	qos                                                int32
	sent, acked, received, expected, errors, dups, ooo int64
	wireSent, wireRecv                                 int64
	open                                               int64  // sessions open now
	lost                                               *int64 // known once drained
	hist                                               [4]*dto.Histogram
}

// labels are g's values of groupLabels.
func (g *groupFigures) labels() []string {
	return []string{g.name, g.protocol, strconv.Itoa(int(g.qos))}
}

// groupOf are the labels of the run's client group gr, its figures still to count.
func groupOf(gr *groupRun) groupFigures {
	return groupFigures{name: gr.g.Name, protocol: string(gr.g.Protocol), qos: gr.g.QoS}
}

// histogramNames are the latency metrics and histogramKeys the result's histograms they come
// from, in the order of figures.hist.
var (
	histogramNames = [4]string{MetricEndToEnd, MetricPublishAck, MetricConnect, MetricFirstMsg}
	histogramKeys  = [4]string{results.HistEndToEnd, results.HistPublishAck, results.HistConnect, results.HistFirstMessage}
)

// scratch is four histograms reused by every scrape (each is ~190 KB).
type scratch [4]*hdrhistogram.Histogram

// liveFigures reads a running worker, group by group: the recorder's shards of the group, the
// deliveries its subscriptions expect, and its clients' sessions.
func (s *scratch) liveFigures(r *run) *figures {
	expected := make([]int64, len(r.groups)) // by group index
	if r.fleet != nil {
		_, perGroup, _ := r.fleetExpected()
		copy(expected, perGroup)
	} else if len(expected) > 0 {
		expected[0], _ = r.expected()
	}
	for i := range s {
		if s[i] == nil {
			s[i] = results.NewHistogram()
		}
	}
	f := &figures{groups: make([]groupFigures, 0, len(r.groups))}
	for _, gr := range r.groups {
		if gr.remote {
			continue // another worker's
		}
		g := groupOf(gr)
		tot := groupCounts(r.rec, gr.index)
		g.sent, g.acked, g.received, g.errors, g.dups, g.ooo = tot.sent, tot.acked, tot.received, tot.errors, tot.dups, tot.ooo
		if gr.index < len(expected) {
			g.expected = expected[gr.index]
		}
		for _, c := range gr.pubs {
			g.addSession(c.live.Load())
		}
		for _, c := range gr.subs {
			g.addSession(c.live.Load())
		}
		for i := range s {
			s[i].Reset()
		}
		r.rec.mergeGroupInto(gr.index, s[0], s[1], s[2], s[3])
		for i := range s {
			g.hist[i] = promhist.Histogram(s[i])
		}
		f.groups = append(f.groups, g)
	}
	return f
}

// groupCounts sums the tallies of group g's shards (recorder.counts of one group).
func groupCounts(rec *recorder, g int) counts {
	var tot counts
	for i := g * rec.per; i < (g+1)*rec.per && i < len(rec.shards); i++ {
		sh := &rec.shards[i]
		sh.mu.Lock()
		tot.add(&sh.counts)
		sh.mu.Unlock()
	}
	return tot
}

// addSession counts a client's session (nil: not connected yet): its wire bytes, and whether
// it is still open.
func (g *groupFigures) addSession(p *drivers.Session) {
	if p == nil {
		return
	}
	sess := *p
	c := sess.Counters()
	g.wireSent += c.BytesSent
	g.wireRecv += c.BytesReceived
	select {
	case <-sess.Done():
	default:
		g.open++
	}
}

// resultFigures are a finished worker's figures, all from its result: errors include sessions
// that dropped, lost is known. A few hundred bytes per group, so a suite's finished runs keep
// neither their clients nor their results. A flat spec's one group is the result's totals and
// histograms; a run with spec.groups has its groups' figures in res.Groups, and its groups'
// histograms are read from r's recorder, which holds the same samples as the result (nil r:
// the groups' histograms are empty).
func resultFigures(res *results.Result, r *run) *figures {
	if len(res.Groups) == 0 {
		return &figures{groups: []groupFigures{flatResultFigures(res, r)}}
	}
	f := &figures{}
	for i := range res.Groups {
		rg := &res.Groups[i]
		g := groupFigures{name: rg.Name, protocol: specProtocol(res), qos: rg.QoS,
			sent: rg.Sent, acked: rg.Acked, received: rg.Received, expected: rg.Expected, errors: rg.Errors,
			wireSent: rg.Wire.BytesSent, wireRecv: rg.Wire.BytesReceived, lost: rg.Lost}
		if rg.Duplicates != nil {
			g.dups = *rg.Duplicates
		}
		if rg.OutOfOrder != nil {
			g.ooo = *rg.OutOfOrder
		}
		var hists map[string]*hdrhistogram.Histogram
		if gr := groupNamed(r, rg.Name); gr != nil {
			g.protocol = string(gr.g.Protocol)
			hists, _, _ = r.rec.mergedGroup(gr.index)
		}
		g.setHistograms(hists)
		f.groups = append(f.groups, g)
	}
	return f
}

// flatResultFigures is a flat spec's one group, default: the result's totals.
func flatResultFigures(res *results.Result, r *run) groupFigures {
	g := groupFigures{name: "default", protocol: specProtocol(res),
		sent: res.Sent, acked: res.Acked, received: res.Received, expected: res.Expected,
		errors: res.Errors, wireSent: res.Wire.BytesSent, wireRecv: res.Wire.BytesReceived, lost: res.Lost}
	switch {
	case r != nil && len(r.groups) > 0:
		g.name, g.protocol, g.qos = r.groups[0].g.Name, string(r.groups[0].g.Protocol), r.groups[0].g.QoS
	case res.Spec != nil:
		g.qos = res.Spec.QoS
	}
	if res.Duplicates != nil {
		g.dups = *res.Duplicates
	}
	if res.OutOfOrder != nil {
		g.ooo = *res.OutOfOrder
	}
	hists, _ := res.DecodeHistograms() // the engine encoded them a moment ago
	g.setHistograms(hists)
	return g
}

// specProtocol is the protocol of res's spec, for a group whose run is gone ("" without spec).
func specProtocol(res *results.Result) string {
	if res.Spec == nil {
		return ""
	}
	return string(res.Spec.Protocol)
}

// groupNamed is r's client group of that name, nil when there is none (or no r).
func groupNamed(r *run, name string) *groupRun {
	if r == nil {
		return nil
	}
	for _, gr := range r.groups {
		if gr.g.Name == name {
			return gr
		}
	}
	return nil
}

// setHistograms converts the histograms of histogramKeys; a missing one (QoS 0 has no
// acknowledgements) is empty.
func (g *groupFigures) setHistograms(hists map[string]*hdrhistogram.Histogram) {
	for i, key := range histogramKeys {
		h := hists[key]
		if h == nil {
			h = results.NewHistogram()
		}
		g.hist[i] = promhist.Histogram(h)
	}
}

// finish puts the result's figures in place of the live ones and lets go of the run.
func (m *Monitor) finish(res *results.Result) {
	if m == nil {
		return
	}
	m.final.Store(resultFigures(res, m.run.Load()))
	m.run.Store(nil)
}
