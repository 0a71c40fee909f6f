package localrun

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"

	"github.com/msgbench/msgbench/loadgen/control"
)

// workerMetrics serves the worker processes' live metrics as the run's own (--metrics): on each
// scrape it fetches every worker's (the control protocol's GET /metrics) and passes them on as
// they are, native histograms included. A worker that does not answer (it has exited) is
// represented by the last metrics it gave; refresh, called before the workers exit, makes those
// the final values, which stay after the run like in-process workers' do.
type workerMetrics struct {
	c  *control.Client
	ws []*workerProc

	mu   sync.Mutex
	last [][]*dto.MetricFamily // by worker
}

func newWorkerMetrics(c *control.Client, ws []*workerProc) *workerMetrics {
	return &workerMetrics{c: c, ws: ws, last: make([][]*dto.MetricFamily, len(ws))}
}

// hubs holds, per registry (Options.Metrics), the one collector of every run's worker processes'
// metrics: it cannot be unregistered (it describes nothing), so runs come and go inside it.
var hubs sync.Map // prometheus.Registerer → *metricsHub

type metricsHub struct {
	mu      sync.Mutex
	sources map[string]*workerMetrics // by the run's labels: a run of the same labels replaces one
}

// registerWorkerMetrics makes m's metrics part of reg's, replacing those of an earlier run with
// the same labels.
func registerWorkerMetrics(reg prometheus.Registerer, key string, m *workerMetrics) error {
	h, loaded := hubs.LoadOrStore(reg, &metricsHub{sources: map[string]*workerMetrics{}})
	hub := h.(*metricsHub)
	hub.mu.Lock()
	hub.sources[key] = m
	hub.mu.Unlock()
	if loaded {
		return nil
	}
	return reg.Register(hub)
}

// Describe describes nothing: the metrics are the workers', known when they answer (an
// unchecked collector).
func (h *metricsHub) Describe(chan<- *prometheus.Desc) {}

func (h *metricsHub) Collect(ch chan<- prometheus.Metric) {
	h.mu.Lock()
	sources := make([]*workerMetrics, 0, len(h.sources))
	for _, m := range h.sources {
		sources = append(sources, m)
	}
	h.mu.Unlock()
	for _, m := range sources {
		m.collect(ch)
	}
}

func (m *workerMetrics) collect(ch chan<- prometheus.Metric) {
	m.refresh()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, mfs := range m.last {
		for _, mf := range mfs {
			for _, metric := range mf.GetMetric() {
				ch <- forwarded{desc: forwardedDesc(mf, metric), m: metric}
			}
		}
	}
}

// refresh fetches every running worker's metrics.
func (m *workerMetrics) refresh() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i, w := range m.ws {
		select {
		case <-w.exited:
			continue
		default:
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			mfs, err := m.c.Metrics(ctx, w.addr)
			if err != nil {
				return // the last ones stand
			}
			m.mu.Lock()
			m.last[i] = mfs
			m.mu.Unlock()
		}()
	}
	wg.Wait()
}

// forwardedDesc is a worker's metric's description: its name and help, its labels as constant
// labels (the registry takes the metric's type and labels from what Write writes).
func forwardedDesc(mf *dto.MetricFamily, metric *dto.Metric) *prometheus.Desc {
	labels := prometheus.Labels{}
	for _, l := range metric.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	return prometheus.NewDesc(mf.GetName(), mf.GetHelp(), nil, labels)
}

// forwarded is one metric as a worker wrote it.
type forwarded struct {
	desc *prometheus.Desc
	m    *dto.Metric
}

func (f forwarded) Desc() *prometheus.Desc { return f.desc }

func (f forwarded) Write(out *dto.Metric) error {
	proto.Reset(out)
	proto.Merge(out, f.m)
	return nil
}
