package controllers

import (
	"context"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/plan"
)

// Metrics are the operator's own metrics beyond controller-runtime's: benchmarks by phase
// (counted from the cache at every scrape, so an operator restart cannot skew them) and the
// durations of finished runs.
type Metrics struct {
	reader   client.Reader
	byPhase  *prometheus.Desc
	duration *prometheus.HistogramVec
}

// NewMetrics registers the metrics with controller-runtime's registry.
func NewMetrics(reader client.Reader) *Metrics {
	m := &Metrics{
		reader: reader,
		byPhase: prometheus.NewDesc("msgbench_benchmarks", "MessagingBenchmarks by phase.",
			[]string{"phase"}, nil),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "msgbench_benchmark_run_duration_seconds",
			Help:    "Time from creation to Succeeded or Failed of the benchmarks this operator finished.",
			Buckets: prometheus.ExponentialBuckets(10, 2, 12),
		}, []string{"protocol", "phase"}),
	}
	metrics.Registry.MustRegister(m, m.duration)
	return m
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) { ch <- m.byPhase }

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	var list v1alpha1.MessagingBenchmarkList
	if err := m.reader.List(context.Background(), &list); err != nil {
		return
	}
	counts := map[string]float64{}
	for _, p := range []v1alpha1.Phase{v1alpha1.PhasePending, v1alpha1.PhaseProvisioning, v1alpha1.PhaseStarting,
		v1alpha1.PhaseRunning, v1alpha1.PhaseCollecting, v1alpha1.PhaseSucceeded, v1alpha1.PhaseFailed} {
		counts[string(p)] = 0
	}
	for _, mb := range list.Items {
		p := string(mb.Status.Phase)
		if p == "" {
			p = string(v1alpha1.PhasePending)
		}
		counts[p]++
	}
	for p, n := range counts {
		ch <- prometheus.MustNewConstMetric(m.byPhase, prometheus.GaugeValue, n, p)
	}
}

// Finished observes a run that just reached Succeeded or Failed; p is its plan, nil when the spec
// did not compile for Kubernetes (then the spec as admitted names the protocol).
func (m *Metrics) Finished(mb *v1alpha1.MessagingBenchmark, p *plan.Plan) {
	end := mb.Status.CompletionTime
	if end == nil {
		return
	}
	if p == nil {
		p, _ = plan.Compile(&mb.Spec, plan.Admitted)
	}
	m.duration.WithLabelValues(protocols(p), string(mb.Status.Phase)).Observe(end.Sub(mb.CreationTimestamp.Time).Seconds())
}

// protocols names the protocols of the plan's groups, in their order, each once, joined by "+"
// (a flat spec's one protocol); "" without a plan.
func protocols(p *plan.Plan) string {
	if p == nil {
		return ""
	}
	var names []string
	for _, g := range p.Groups {
		if !slices.Contains(names, string(g.Protocol)) {
			names = append(names, string(g.Protocol))
		}
	}
	return strings.Join(names, "+")
}
