package gateway

import "github.com/prometheus/client_golang/prometheus"

// Metric names of a gateway; docs/metrics.md defines them.
const (
	MetricClients     = "msgbench_gateway_clients"
	MetricMessagesIn  = "msgbench_gateway_messages_in_total"
	MetricMessagesOut = "msgbench_gateway_messages_out_total"
	MetricDropped     = "msgbench_gateway_dropped_total"
)

// NewCollector serves gw's Totals as Prometheus metrics with the given labels (benchmark,
// namespace, mode), read at scrape time from the counters the gateway keeps anyway.
func NewCollector(gw Gateway, labels prometheus.Labels) prometheus.Collector {
	return &collector{gw: gw,
		clients: prometheus.NewDesc(MetricClients, "Client sessions open at the gateway now.", nil, labels),
		in:      prometheus.NewDesc(MetricMessagesIn, "Messages from clients passed to the broker.", nil, labels),
		out:     prometheus.NewDesc(MetricMessagesOut, "Messages from the broker passed to clients.", nil, labels),
		dropped: prometheus.NewDesc(MetricDropped, "Messages, datagrams, requests or connections the gateway refused or could not pass on.", nil, labels),
	}
}

type collector struct {
	gw                        Gateway
	clients, in, out, dropped *prometheus.Desc
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.clients
	ch <- c.in
	ch <- c.out
	ch <- c.dropped
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	t := c.gw.Totals()
	ch <- prometheus.MustNewConstMetric(c.clients, prometheus.GaugeValue, float64(t.Clients))
	ch <- prometheus.MustNewConstMetric(c.in, prometheus.CounterValue, float64(t.MessagesIn))
	ch <- prometheus.MustNewConstMetric(c.out, prometheus.CounterValue, float64(t.MessagesOut))
	ch <- prometheus.MustNewConstMetric(c.dropped, prometheus.CounterValue, float64(t.Dropped))
}
