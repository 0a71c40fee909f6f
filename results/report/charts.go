// Package report turns result documents into what people look at and publish: a self-contained
// HTML page (inline SVG, works offline) for one run, several runs or a suite, with the figures a
// study is known for chosen from the suite's axes (Plan), each figure also as PNG, SVG and PDF
// and as CSV, and comparisons against a baseline for CI (Compare). Figures are drawn with
// gonum/plot; what a figure draws is its Figure data, which tests check instead of pixels.
package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/msgbench/msgbench/results"
)

// RunFigures are the figures of one run: throughput over time, latency by percentile, delivery,
// bytes on the wire and, with a radio power model, where the energy went.
func RunFigures(r *results.Result) ([]*Figure, error) {
	var out []*Figure
	if f := throughputFigure(r); f != nil {
		out = append(out, f)
	}
	f, err := latencyFigure(r)
	if err != nil {
		return nil, err
	}
	if f != nil {
		out = append(out, f)
	}
	out = append(out, groupFigures(r)...)
	out = append(out, deliveryFigure(r))
	if f := wireFigure(r); f != nil {
		out = append(out, f)
	}
	if f := energyFigure(r); f != nil {
		out = append(out, f)
	}
	return out, nil
}

func throughputFigure(r *results.Result) *Figure {
	sent, step := timelineRates(r, func(tp results.TimelinePoint) int64 { return tp.Sent })
	recv, _ := timelineRates(r, func(tp results.TimelinePoint) int64 { return tp.Received })
	if len(sent) == 0 {
		return nil
	}
	f := &Figure{ID: "throughput", Title: "Throughput over time", XLabel: "seconds since the measured window began", YLabel: "messages per second", Steps: true,
		Series:  []Series{{Label: "sent", Colour: 0, Values: sent}, {Label: "received", Colour: 1, Dash: 1, Values: recv}},
		Caption: fmt.Sprintf("Messages sent and received per second in %.0f ms intervals; the warm-up and the drain after the window are left out.", step*1000)}
	// The network's steps, where they took effect: a dip is read against its cause.
	var steps []string
	for i, m := range r.NetworkTimeline() {
		f.Marks = append(f.Marks, Tick{Value: m.At, Label: fmt.Sprintf("%d", i+1)})
		steps = append(steps, fmt.Sprintf("(%d) %.2f s %s", i+1, m.At, m.Description))
	}
	if len(steps) > 0 {
		f.Caption += " Dotted lines: the link's steps (spec.network.timeline) as they took effect — " + strings.Join(steps, "; ") + "."
	}
	// A reconnect storm in the window: where every connection dropped (docs/churn.md).
	if p, err := r.Plan(); err == nil && p != nil && r.Churn != nil && r.Churn.Storm != nil {
		c := r.Churn
		if at := c.Storm.AtSeconds - p.Timing.Warmup.Seconds(); at >= 0 {
			f.Marks = append(f.Marks, Tick{Value: at, Label: "storm"})
			back := fmt.Sprintf("all %d back %.3f s later", c.Storm.Reconnected, c.Storm.RecoverySeconds)
			if c.Storm.NotBack > 0 {
				back = fmt.Sprintf("%d never came back", c.Storm.NotBack)
			}
			f.Caption += fmt.Sprintf(" Dotted line \"storm\": the reconnect storm dropped all %d connections at %.2f s; %s.", c.Storm.Dropped, at, back)
		}
	}
	return f
}

// latencyFigure draws each latency's percentile distribution, HdrHistogram style: the horizontal
// stretches the tail (50 %, 90 %, 99 %, 99.9 % … are equally spaced).
func latencyFigure(r *results.Result) (*Figure, error) {
	hists, err := r.DecodeHistograms()
	if err != nil {
		return nil, err
	}
	f := &Figure{ID: "latency", Title: "Latency by percentile", XLabel: "percentile", YLabel: "latency (ms)", LogY: true,
		Caption: "Each latency figure's distribution from its HdrHistogram; definitions in docs/results.md."}
	for i, name := range results.HistogramNames {
		h := hists[name]
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		s := Series{Label: label(name), Colour: i, Dash: i}
		for _, q := range []float64{0, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 100} {
			s.Values = append(s.Values, Value{X: tailX(q), Y: math.Max(float64(h.ValueAtQuantile(q))/1000, 0.001), N: 1})
		}
		f.Series = append(f.Series, s)
	}
	if len(f.Series) == 0 {
		return nil, nil
	}
	for _, t := range []struct {
		q float64
		l string
	}{{0, "min"}, {50, "50%"}, {90, "90%"}, {99, "99%"}, {99.9, "99.9%"}, {99.99, "99.99%"}, {100, "max"}} {
		f.XTicks = append(f.XTicks, Tick{Value: tailX(t.q), Label: t.l})
	}
	return f, nil
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

func bars(id, title, ylabel, caption string, names []string, vals []float64) *Figure {
	f := &Figure{ID: id, Title: title, YLabel: ylabel, Bars: true, Categories: names, Caption: caption}
	s := Series{Label: ylabel}
	for i, v := range vals {
		s.Values = append(s.Values, Value{X: float64(i), Y: v, N: 1})
	}
	f.Series = []Series{s}
	return f
}

func deliveryFigure(r *results.Result) *Figure {
	names := []string{"sent", "expected", "received", "lost"}
	vals := []float64{float64(r.Sent), float64(r.Expected), float64(r.Received), float64(deref(r.Lost))}
	if r.Duplicates != nil {
		names, vals = append(names, "duplicates"), append(vals, float64(*r.Duplicates))
	}
	if r.OutOfOrder != nil {
		names, vals = append(names, "out of order"), append(vals, float64(*r.OutOfOrder))
	}
	names, vals = append(names, "errors"), append(vals, float64(r.Errors))
	return bars("delivery", "Delivery", "messages",
		"Expected counts every subscriber of a topic once per message; lost = expected − unique deliveries.", names, vals)
}

func wireFigure(r *results.Result) *Figure {
	var names []string
	var vals []float64
	add := func(n string, v *float64) {
		if v != nil {
			names, vals = append(names, n), append(vals, *v)
		}
	}
	add("all traffic per message", r.Wire.BytesPerMessage)
	add("publisher uplink per message", r.Wire.PublishBytesPerMessage)
	add("connection set-up", r.Wire.ConnectBytes)
	if p, err := r.Plan(); err == nil && p != nil {
		// The payload of the messages published; device groups publishing different sizes
		// have no one payload to set the bytes against.
		sizes := map[int32]bool{}
		for _, g := range p.Groups {
			if g.Publishers > 0 || g.Fleet == nil {
				sizes[g.PayloadBytes] = true
			}
		}
		if len(sizes) == 1 {
			payload := float64(p.Groups[0].PayloadBytes)
			add("payload", &payload)
		}
	}
	if len(vals) == 0 {
		return nil
	}
	return bars("wire", "Bytes on the wire", "bytes", "Bytes the clients' sockets carried below TLS, against the payload itself.", names, vals)
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// Figures are the dataset's figures: a single run's own, or the planned comparison figures. A
// dataset of one point with repetitions shows its first run's figures. A capacity search shows
// its curve (CapacityFigure) alone, as the study's figure.
func Figures(d *Dataset) ([]*Figure, error) {
	out, err := plannedFigures(d)
	if err != nil || d.Suite == nil || d.Suite.Search == nil {
		return out, err
	}
	f := CapacityFigure(d.Suite.Search)
	if f == nil {
		return out, nil
	}
	// The planned figures would draw the steps as points, a confirmed value twice at one x; the
	// curve has one entry per value and every headline figure, and each run keeps its own report.
	return []*Figure{f}, nil
}

func plannedFigures(d *Dataset) ([]*Figure, error) {
	specs := Plan(d)
	if len(specs) == 0 {
		for _, p := range d.Points {
			if len(p.Runs) > 0 {
				return RunFigures(p.Runs[0])
			}
		}
		return nil, nil
	}
	var out []*Figure
	for _, fs := range specs {
		f, err := Build(d, fs)
		if err != nil {
			return nil, err
		}
		if len(f.Series) > 0 {
			out = append(out, f)
		}
	}
	return out, nil
}
