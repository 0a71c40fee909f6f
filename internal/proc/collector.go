package proc

import "github.com/prometheus/client_golang/prometheus"

// Metric names of a component's (broker's, gateway's) usage; docs/metrics.md defines them.
const (
	MetricCPU     = "msgbench_component_cpu_seconds_total"
	MetricRSS     = "msgbench_component_resident_memory_bytes"
	MetricPeakRSS = "msgbench_component_peak_resident_memory_bytes"
)

// NewCollector serves usage() — a broker's or gateway's processes — as Prometheus metrics with
// the given labels (component, benchmark, namespace); read at scrape time. A failed read yields
// no sample (the process is gone or not started yet).
func NewCollector(usage func() (Usage, error), labels prometheus.Labels) prometheus.Collector {
	return &collector{usage: usage,
		cpu:  prometheus.NewDesc(MetricCPU, "CPU time (user and system) the component's processes used since they started.", nil, labels),
		rss:  prometheus.NewDesc(MetricRSS, "Resident memory of the component's processes now.", nil, labels),
		peak: prometheus.NewDesc(MetricPeakRSS, "Peak resident memory of the component's processes (VmHWM; summed over processes).", nil, labels),
	}
}

type collector struct {
	usage          func() (Usage, error)
	cpu, rss, peak *prometheus.Desc
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) { ch <- c.cpu; ch <- c.rss; ch <- c.peak }

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	u, err := c.usage()
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.cpu, prometheus.CounterValue, u.CPU.Seconds())
	if u.RSS > 0 {
		ch <- prometheus.MustNewConstMetric(c.rss, prometheus.GaugeValue, float64(u.RSS))
	}
	ch <- prometheus.MustNewConstMetric(c.peak, prometheus.GaugeValue, float64(u.PeakRSS))
}
