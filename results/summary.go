package results

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteSummary prints the headline figures of r as an aligned table for a terminal.
func WriteSummary(w io.Writer, r *Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "  %s\t%s\n", k, v) }
	fmt.Fprintf(tw, "%s: %s", r.Name, r.Phase)
	if r.Message != "" {
		fmt.Fprintf(tw, " (%s)", r.Message)
	}
	fmt.Fprintln(tw)
	if r.Spec != nil {
		s := r.Spec
		proto := string(s.Protocol)
		if s.TLS != nil && s.TLS.Enabled {
			proto += " + TLS " + string(s.TLS.Version)
		}
		row("protocol", fmt.Sprintf("%s, QoS %d, %d B payload, %d pub / %d sub on %d topics", proto, s.QoS,
			s.Workload.PayloadBytes, s.Workload.Publishers, s.Workload.Subscribers, s.Workload.Topics))
	}
	if r.Environment.Broker != "" {
		row("broker", r.Environment.Broker)
	}
	measured := fmt.Sprintf("%.2f s", r.MeasuredSeconds)
	if r.Spec != nil && r.Spec.Workload.Messages == 0 {
		if asked := r.Spec.Workload.Duration.Duration; asked > 0 && r.MeasuredSeconds < asked.Seconds()-0.001 {
			measured += fmt.Sprintf(" of the %s asked", asked)
		}
	}
	row("measured", measured)
	msgs := fmt.Sprintf("sent %d, received %d of %d expected", r.Sent, r.Received, r.Expected)
	if r.Unsent > 0 {
		msgs = fmt.Sprintf("sent %d (%d more scheduled but unsent), received %d of %d expected", r.Sent, r.Unsent, r.Received, r.Expected)
	}
	row("messages", msgs)
	row("delivery", fmt.Sprintf("lost %s, duplicates %s, out of order %s, errors %d", opt(r.Lost), opt(r.Duplicates), opt(r.OutOfOrder), r.Errors))
	tp := fmt.Sprintf("%.0f msg/s sent, %.0f msg/s received (%s/s payload)", r.Throughput.SentPerSecond,
		r.Throughput.ReceivedPerSecond, bytesHuman(r.Throughput.ReceivedBytesPerSecond))
	if r.Throughput.OfferedPerSecond > 0 {
		tp = fmt.Sprintf("%.0f msg/s offered, ", r.Throughput.OfferedPerSecond) + tp
	}
	row("throughput", tp)
	for _, l := range []struct {
		name string
		s    *LatencySummary
	}{{"end-to-end", r.Latency.EndToEnd}, {"publish ack", r.Latency.PublishAck}, {"publish delay", r.Latency.PublishDelay},
		{"connect", r.Latency.Connect}, {"first message", r.Latency.FirstMessage}} {
		if l.s == nil {
			continue
		}
		row(l.name, fmt.Sprintf("p50 %s  p90 %s  p99 %s  p99.9 %s  max %s  (n=%d)", us(l.s.P50Micros), us(l.s.P90Micros),
			us(l.s.P99Micros), us(l.s.P999Micros), us(l.s.MaxMicros), l.s.Count))
	}
	var wire []string
	if r.Wire.BytesPerMessage != nil {
		wire = append(wire, fmt.Sprintf("%.1f B/msg all traffic", *r.Wire.BytesPerMessage))
	}
	if r.Wire.PublishBytesPerMessage != nil {
		wire = append(wire, fmt.Sprintf("%.1f B/msg publisher uplink", *r.Wire.PublishBytesPerMessage))
	}
	if r.Wire.ConnectBytes != nil {
		wire = append(wire, fmt.Sprintf("%.0f B/connection set-up", *r.Wire.ConnectBytes))
	}
	if r.Wire.Retransmits != nil {
		wire = append(wire, fmt.Sprintf("%d TCP retransmits", *r.Wire.Retransmits))
	}
	if len(wire) > 0 {
		row("wire", strings.Join(wire, ", "))
	}
	res := fmt.Sprintf("load generator %.2f CPU-s, peak RSS %s", r.Resources.LoadgenCPUSeconds, bytesHuman(float64(r.Resources.LoadgenMaxRSSBytes)))
	if r.Resources.BrokerCPUSeconds != nil {
		res += fmt.Sprintf("; broker %.2f CPU-s", *r.Resources.BrokerCPUSeconds)
		if r.Resources.BrokerMaxRSSBytes != nil {
			res += ", peak RSS " + bytesHuman(float64(*r.Resources.BrokerMaxRSSBytes))
		}
	}
	row("resources", res)
	for i, c := range r.Caveats {
		k := ""
		if i == 0 {
			k = "caveats"
		}
		row(k, c.Type+": "+c.Message)
	}
	return tw.Flush()
}

func opt(p *int64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprint(*p)
}

func us(v int64) string {
	switch {
	case v >= 10_000_000:
		return fmt.Sprintf("%.1fs", float64(v)/1e6)
	case v >= 10_000:
		return fmt.Sprintf("%.1fms", float64(v)/1e3)
	default:
		return fmt.Sprintf("%dµs", v)
	}
}

func bytesHuman(v float64) string {
	switch {
	case v >= 1<<30:
		return fmt.Sprintf("%.1f GiB", v/(1<<30))
	case v >= 1<<20:
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	default:
		return fmt.Sprintf("%.0f B", v)
	}
}
