// Package report turns result documents into what people look at: a self-contained HTML page
// with charts (inline SVG, works offline) for one run or several side by side, and PNG/SVG
// images of the same charts for papers. Charts are drawn with gonum/plot.
package report

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/msgbench/msgbench/netem"
	"github.com/msgbench/msgbench/results"
)

// Chart is one figure: an identifier (file name), a caption and the plot.
type Chart struct {
	ID      string
	Title   string
	Caption string
	plot    *plot.Plot
}

// Render draws the chart in format "svg" or "png".
func (c *Chart) Render(format string) ([]byte, error) {
	w, err := c.plot.WriterTo(7*vg.Inch, 4*vg.Inch, format)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := w.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

// RunCharts are the charts of one run.
func RunCharts(r *results.Result) ([]*Chart, error) {
	var out []*Chart
	if c, err := throughputChart(r); err != nil {
		return nil, err
	} else if c != nil {
		out = append(out, c)
	}
	if c, err := latencyChart(r); err != nil {
		return nil, err
	} else if c != nil {
		out = append(out, c)
	}
	if c, err := deliveryChart(r); err != nil {
		return nil, err
	} else if c != nil {
		out = append(out, c)
	}
	if c, err := wireChart(r); err != nil {
		return nil, err
	} else if c != nil {
		out = append(out, c)
	}
	return out, nil
}

func throughputChart(r *results.Result) (*Chart, error) {
	if len(r.Timeline) == 0 {
		return nil, nil
	}
	step := r.Timeline[0].T
	if step <= 0 {
		return nil, nil
	}
	sent, recv := make(plotter.XYs, len(r.Timeline)), make(plotter.XYs, len(r.Timeline))
	for i, tp := range r.Timeline {
		sent[i] = plotter.XY{X: tp.T, Y: float64(tp.Sent) / step}
		recv[i] = plotter.XY{X: tp.T, Y: float64(tp.Received) / step}
	}
	p := newPlot("Throughput over time", "seconds since the measured window began", "messages per second")
	if err := plotutil.AddLines(p, "sent", sent, "received", recv); err != nil {
		return nil, err
	}
	return &Chart{ID: "throughput", Title: "Throughput over time", plot: p,
		Caption: fmt.Sprintf("Messages sent and received per second in %.0f ms intervals (warm-up excluded).", step*1000)}, nil
}

// latencyChart draws each latency figure's percentile distribution, HdrHistogram style: the x
// axis stretches the tail (50 %, 90 %, 99 %, 99.9 % … are equally spaced).
func latencyChart(r *results.Result) (*Chart, error) {
	hists, err := r.DecodeHistograms()
	if err != nil {
		return nil, err
	}
	p := newPlot("Latency by percentile", "percentile", "latency (ms)")
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	var args []any
	for _, name := range results.HistogramNames {
		h := hists[name]
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		var xys plotter.XYs
		for _, q := range []float64{0, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 100} {
			v := float64(h.ValueAtQuantile(q)) / 1000
			xys = append(xys, plotter.XY{X: tailX(q), Y: math.Max(v, 0.001)})
		}
		args = append(args, label(name), xys)
	}
	if len(args) == 0 {
		return nil, nil
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return nil, err
	}
	p.X.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: tailX(0), Label: "0%"}, {Value: tailX(50), Label: "50%"},
		{Value: tailX(90), Label: "90%"}, {Value: tailX(99), Label: "99%"}, {Value: tailX(99.9), Label: "99.9%"},
		{Value: tailX(99.99), Label: "99.99%"}, {Value: tailX(100), Label: "max"}})
	return &Chart{ID: "latency", Title: "Latency by percentile", plot: p,
		Caption: "Each latency figure's distribution from its HdrHistogram; definitions in docs/results.md."}, nil
}

// tailX maps a percentile to −log10(1 − q), capped so that 100 % (the maximum) is drawn.
func tailX(q float64) float64 {
	f := 1 - q/100
	if f < 1e-5 {
		f = 1e-5
	}
	return -math.Log10(f)
}

func label(name string) string {
	switch name {
	case results.HistEndToEnd:
		return "end-to-end"
	case results.HistPublishAck:
		return "publish ack"
	case results.HistPublishDelay:
		return "publish delay"
	case results.HistConnect:
		return "connect"
	case results.HistFirstMessage:
		return "first message"
	}
	return name
}

func deliveryChart(r *results.Result) (*Chart, error) {
	names := []string{"sent", "expected", "received", "lost"}
	vals := plotter.Values{float64(r.Sent), float64(r.Expected), float64(r.Received), float64(deref(r.Lost))}
	if r.Duplicates != nil {
		names, vals = append(names, "duplicates"), append(vals, float64(*r.Duplicates))
	}
	if r.OutOfOrder != nil {
		names, vals = append(names, "out of order"), append(vals, float64(*r.OutOfOrder))
	}
	names, vals = append(names, "errors"), append(vals, float64(r.Errors))
	p := newPlot("Delivery", "", "messages")
	if err := addBars(p, vals, names); err != nil {
		return nil, err
	}
	return &Chart{ID: "delivery", Title: "Delivery", plot: p,
		Caption: "Expected counts every subscriber of a topic once per message; lost = expected − unique deliveries."}, nil
}

func wireChart(r *results.Result) (*Chart, error) {
	var names []string
	var vals plotter.Values
	add := func(n string, v *float64) {
		if v != nil {
			names, vals = append(names, n), append(vals, *v)
		}
	}
	add("all traffic per message", r.Wire.BytesPerMessage)
	add("publisher uplink per message", r.Wire.PublishBytesPerMessage)
	add("connection set-up", r.Wire.ConnectBytes)
	if r.Spec != nil {
		p := float64(r.Spec.Workload.PayloadBytes)
		add("payload", &p)
	}
	if len(vals) == 0 {
		return nil, nil
	}
	p := newPlot("Bytes on the wire", "", "bytes")
	if err := addBars(p, vals, names); err != nil {
		return nil, err
	}
	return &Chart{ID: "wire", Title: "Bytes on the wire", plot: p,
		Caption: "Bytes the clients' sockets carried below TLS, against the payload itself."}, nil
}

func addBars(p *plot.Plot, vals plotter.Values, names []string) error {
	bars, err := plotter.NewBarChart(vals, vg.Points(28))
	if err != nil {
		return err
	}
	bars.Color = plotutil.Color(0)
	bars.LineStyle.Width = 0
	p.Add(bars)
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = 0.35
	p.X.Tick.Label.XAlign = draw.XRight
	return nil
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// CompareCharts are the charts of several runs: the figures the reference studies compare,
// each drawn when the results vary along its axis.
func CompareCharts(rs []*results.Result) ([]*Chart, error) {
	var out []*Chart
	add := func(c *Chart, err error) error {
		if err == nil && c != nil {
			out = append(out, c)
		}
		return err
	}
	perRun := func(id, title, ylabel, caption string, value func(*results.Result) (float64, bool)) (*Chart, error) {
		var names []string
		var vals plotter.Values
		for _, r := range rs {
			if v, ok := value(r); ok {
				names, vals = append(names, r.Name), append(vals, v)
			}
		}
		if len(vals) < 2 {
			return nil, nil
		}
		p := newPlot(title, "", ylabel)
		if err := addBars(p, vals, names); err != nil {
			return nil, err
		}
		return &Chart{ID: id, Title: title, Caption: caption, plot: p}, nil
	}
	steps := []func() error{
		func() error {
			return add(series(rs, "handled-by-clients", "Messages handled as clients grow", "publishers", "received messages per second",
				"Study 1: messages handled per protocol and QoS as publisher/subscriber pairs grow.",
				func(r *results.Result) float64 { return float64(r.Spec.Workload.Publishers) },
				func(r *results.Result) (float64, bool) { return r.Throughput.ReceivedPerSecond, true },
				protocolLabel))
		},
		func() error {
			return add(series(rs, "bytes-by-threads", "Throughput by payload size and threads", "publishers (threads)", "received payload bytes per second",
				"Study 4: reader byte rate by writer threads, one line per protocol and payload size.",
				func(r *results.Result) float64 { return float64(r.Spec.Workload.Publishers) },
				func(r *results.Result) (float64, bool) { return r.Throughput.ReceivedBytesPerSecond, true },
				func(r *results.Result) string {
					return fmt.Sprintf("%s %d B", protocolLabel(r), r.Spec.Workload.PayloadBytes)
				}))
		},
		func() error {
			return add(series(rs, "connect-by-rtt", "Connect latency by round-trip time", "emulated RTT (ms)", "p50 connect latency (ms)",
				"Studies 2 and 3: session set-up against the round-trip time of the emulated link.",
				rttMillis, func(r *results.Result) (float64, bool) {
					if r.Latency.Connect == nil {
						return 0, false
					}
					return float64(r.Latency.Connect.P50Micros) / 1000, true
				}, protocolLabel))
		},
		func() error {
			return add(series(rs, "first-message-by-rtt", "Time to first message by round-trip time", "emulated RTT (ms)", "p50 first-message latency (ms)",
				"Study 2: from the start of the dial to the first message at a subscriber.",
				rttMillis, func(r *results.Result) (float64, bool) {
					if r.Latency.FirstMessage == nil {
						return 0, false
					}
					return float64(r.Latency.FirstMessage.P50Micros) / 1000, true
				}, protocolLabel))
		},
		func() error {
			return add(perRun("received-rate", "Received messages per second", "messages per second", "Delivered messages per second in the measured window.",
				func(r *results.Result) (float64, bool) { return r.Throughput.ReceivedPerSecond, true }))
		},
		func() error {
			return add(perRun("wire-bytes", "Bytes on the wire per message", "bytes", "Study 5: all bytes the sockets carried (TLS and protocol headers included) per delivered message.",
				func(r *results.Result) (float64, bool) {
					if r.Wire.BytesPerMessage == nil {
						return 0, false
					}
					return *r.Wire.BytesPerMessage, true
				}))
		},
		func() error {
			return add(perRun("p99-latency", "End-to-end latency, 99th percentile", "ms", "Subscriber receive time minus intended send time.",
				func(r *results.Result) (float64, bool) {
					if r.Latency.EndToEnd == nil {
						return 0, false
					}
					return float64(r.Latency.EndToEnd.P99Micros) / 1000, true
				}))
		},
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// series draws y against x with one line per series label, when some series has two x values.
func series(rs []*results.Result, id, title, xlabel, ylabel, caption string, x func(*results.Result) float64,
	y func(*results.Result) (float64, bool), key func(*results.Result) string) (*Chart, error) {
	groups := map[string]plotter.XYs{}
	for _, r := range rs {
		if r.Spec == nil {
			continue
		}
		if v, ok := y(r); ok {
			groups[key(r)] = append(groups[key(r)], plotter.XY{X: x(r), Y: v})
		}
	}
	keys := make([]string, 0, len(groups))
	useful := false
	for k, pts := range groups {
		keys = append(keys, k)
		sort.Slice(pts, func(a, b int) bool { return pts[a].X < pts[b].X })
		xs := map[float64]bool{}
		for _, pt := range pts {
			xs[pt.X] = true
		}
		if len(xs) >= 2 {
			useful = true
		}
	}
	if !useful {
		return nil, nil
	}
	sort.Strings(keys)
	p := newPlot(title, xlabel, ylabel)
	var args []any
	for _, k := range keys {
		args = append(args, k, groups[k])
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return nil, err
	}
	return &Chart{ID: id, Title: title, Caption: caption, plot: p}, nil
}

// protocolLabel names a run's protocol configuration, e.g. "mqtt QoS 1 + TLS 1.3".
func protocolLabel(r *results.Result) string {
	s := r.Spec
	if s == nil {
		return r.Name
	}
	parts := []string{string(s.Protocol)}
	if s.Protocol == "http" {
		parts[0] = "http/" + string(s.HTTP.Version)
	}
	parts = append(parts, fmt.Sprintf("QoS %d", s.QoS))
	if s.TLSEnabled() {
		parts = append(parts, "+ TLS "+s.ClientTLSVersion())
	}
	return strings.Join(parts, " ")
}

// rttMillis is the emulated round-trip time: the applied link's delays up plus down.
func rttMillis(r *results.Result) float64 {
	if r.Spec == nil || !r.Spec.Impaired() {
		return 0
	}
	if n, ok := r.Network.(map[string]any); ok {
		if v, ok := n["rttMillis"].(float64); ok {
			return v
		}
	}
	link, err := netem.Resolve(r.Spec.Network)
	if err != nil {
		return 0
	}
	return float64(link.Up.Delay+link.Down.Delay) / 1e6
}
