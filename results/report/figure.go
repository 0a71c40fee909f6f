package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/results/figures"
)

// Figure is one figure's data, drawn as lines or bars and written as CSV: what is plotted is
// exactly what the CSV holds, so tests check the data rather than pixels.
type Figure struct {
	ID, Title, Caption string
	XLabel, YLabel     string
	// Bars draws one group of bars per category (Categories), a bar per series; else lines.
	Bars       bool
	Categories []string
	Series     []Series
	// LogX draws the horizontal on a log scale (values spanning 16× or more, such as clients
	// 1 to 64); XTicks then (or for few values) puts a tick at each value measured.
	LogX   bool
	XTicks []Tick
	// LogY draws the vertical on a log scale (latency percentiles); otherwise it starts at zero.
	LogY bool
	// Steps draws each value as a level over the interval ending at its X (a timeline's counts),
	// not as a point joined to the next by a slope.
	Steps bool
	// Study marks the figure a suite is about.
	Study bool
	// Marks are vertical lines at events along the horizontal, each labelled: the steps of
	// spec.network.timeline on a throughput timeline, the knee of a capacity curve.
	Marks []Tick
	// Lines are solid vertical lines along the horizontal, each labelled: a capacity search's
	// capacity. An empty label draws the line alone.
	Lines []Tick
	// Bands shade the horizontal from Lo to Hi over the plot's height, each named in the legend
	// (when labelled): a capacity search's bracket.
	Bands []Band
	// Unmeasured are values judged although nothing was measured at them (every trial of a
	// search's step failed before it measured): a cross on the horizontal axis each.
	Unmeasured []float64
	// Panels stack figures that share this one's horizontal (XLabel, range), top to bottom under
	// its title, each with its own vertical and legend: a capacity curve's throughput, latency
	// and loss. A figure with panels draws nothing of its own but them.
	Panels []*Figure
	// Table, when set, is the figure's CSV, a header row first, instead of its series': a
	// capacity curve's one row per value.
	Table [][]string
	// noVerdictKey leaves the passed/failed entries out of a panel's legend: the panel above
	// has them.
	noVerdictKey bool
}

// Band is a shaded stretch of the horizontal.
type Band struct {
	Lo, Hi float64
	Label  string
}

// Tick is a labelled position on an axis.
type Tick struct {
	Value float64
	Label string
}

// Series is one line or one bar of each category.
type Series struct {
	Label string
	// Colour and Dash index the palette and the dash/marker styles.
	Colour, Dash int
	Values       []Value
	// Reference draws the series as a thin grey dotted line without markers, a yardstick
	// rather than a measurement: the load a capacity search offered.
	Reference bool
}

// Value is one plotted value: Y at X (for bars, X is the category's index), with the half-width
// of its 95 % confidence interval when N repetitions (N ≥ 2) measured it.
type Value struct {
	X, Y, CI95 float64
	N          int
	// Verdict is a capacity search's judgement of the value: its marker is filled when it
	// passed, hollow when it failed.
	Verdict Verdict
}

// Verdict is whether a plotted value passed (a capacity search's step).
type Verdict int8

// Verdicts.
const (
	NoVerdict Verdict = iota
	VerdictPassed
	VerdictFailed
)

// CSV is the figure as comma-separated values, one row per plotted value, for R or pandas:
// series, the horizontal value, the vertical value, the 95 % CI half-width and the number of
// repetitions (the CI is empty below two).
func (f *Figure) CSV() []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if f.Table != nil {
		_ = w.WriteAll(f.Table)
		return b.Bytes()
	}
	x := f.XLabel
	if f.Bars {
		x = "category"
	}
	_ = w.Write([]string{"series", x, f.YLabel, "ci95", "runs"})
	for _, s := range f.Series {
		for _, v := range s.Values {
			xs := num(v.X)
			if f.Bars {
				xs = f.Categories[int(v.X)]
			}
			ci := ""
			if v.N >= 2 {
				ci = num(v.CI95)
			}
			_ = w.Write([]string{s.Label, xs, num(v.Y), ci, strconv.Itoa(v.N)})
		}
	}
	w.Flush()
	return b.Bytes()
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }

// yUnit converts a figure's stored value to the unit plotted and names it: latencies in ms,
// energy in mJ, currents in mA.
func yUnit(f figures.Figure) (scale float64, unit string) {
	switch f.Kind {
	case figures.Duration:
		return 1e-3, "ms"
	case figures.Rate:
		return 1, "msg/s"
	case figures.ByteRate:
		return 1, "B/s"
	case figures.Bytes:
		return 1, "B"
	case figures.Seconds:
		return 1, "s"
	case figures.Percent:
		return 1, "%"
	case figures.Energy: // a device's message costs millijoules, not joules
		return 1e3, "mJ"
	case figures.Current:
		return 1e3, "mA"
	case figures.Days:
		return 1, "days"
	}
	return 1, ""
}

// yTitle is a figure's name on an axis: "connect latency p95 (ms)".
func yTitle(name string) string {
	f, err := figures.Lookup(name)
	if err != nil {
		return name
	}
	_, unit := yUnit(f)
	text := map[string]string{
		"throughput.receivedPerSecond":      "messages received per second",
		"throughput.sentPerSecond":          "messages sent per second",
		"throughput.receivedBytesPerSecond": "payload bytes received per second",
		"throughput.sentBytesPerSecond":     "payload bytes sent per second",
		"wire.bytesPerMessage":              "bytes on the wire per message",
		"wire.bytesPerSecond":               "bytes on the wire per second",
		"wire.connectBytes":                 "bytes per connection set-up",
		"wire.publishBytesPerMessage":       "publisher uplink bytes per message",
		"lostPercent":                       "messages lost",
		"energy.perMessage":                 "radio energy per message",
		"energy.total":                      "radio energy of all devices",
		"energy.meanCurrent":                "mean radio current per device",
		"energy.deviceCurrentP99":           "radio current of the p99 device",
		"energy.batteryDays":                "battery life",
		"energy.batteryDaysP99":             "battery life of the p99 device",
	}[name]
	if rest, ok := strings.CutPrefix(name, figures.GroupPrefix); text == "" && ok {
		// A device group's figure: the run's figure's words, for the group ("sensors: battery
		// life (days)").
		if g, figure, ok := strings.Cut(rest, "."); ok {
			if t := yTitle(figure); t != figure {
				return g + ": " + t
			}
		}
	}
	if text == "" {
		if parts := strings.Split(name, "."); len(parts) == 3 && parts[0] == "latency" {
			text = label(parts[1]) + " latency " + parts[2]
		} else {
			text = name
		}
	}
	if unit != "" {
		text += " (" + unit + ")"
	}
	return text
}

// Build computes a comparison figure's data from the dataset.
func Build(d *Dataset, fs FigureSpec) (*Figure, error) {
	if fs.Timeline {
		return buildTimeline(d, fs), nil
	}
	fig, err := figures.Lookup(fs.Y)
	if err != nil {
		return nil, err
	}
	scale, _ := yUnit(fig)
	f := &Figure{ID: fs.ID, YLabel: yTitle(fs.Y), Study: fs.Study, Bars: fs.X == nil}
	f.Title = capitalize(strings.SplitN(f.YLabel, " (", 2)[0])
	if fs.X != nil {
		f.XLabel = xTitle(fs.X)
		f.Title += " by " + strings.SplitN(f.XLabel, " (", 2)[0]
	} else {
		f.XLabel = fs.Colour.Name()
		f.Title += " by " + f.XLabel
		for _, v := range fs.Colour.Values {
			if matchesAny(d, withValue(fs.Facet, fs.Colour.Field(), v)) {
				f.Categories = append(f.Categories, valueLabel(fs.Colour, v))
			}
		}
	}
	if fs.FacetLabel != "" {
		f.Title += ", " + fs.FacetLabel
	}
	series := map[string]*Series{}
	var order []string
	xs := map[float64]bool{}
	for _, p := range d.Points {
		if !matches(p, fs.Facet) || len(p.Runs) == 0 {
			continue
		}
		y, ok := p.Stats.Value(fs.Y)
		if !ok {
			continue
		}
		st := p.Stats.Figures[fs.Y]
		v := Value{Y: y * scale, CI95: st.CI95 * scale, N: st.N}
		var key string
		var colour, dash int
		if fs.X != nil {
			v.X = xValue(fs.X, p)
			xs[v.X] = true
			if fs.Colour != nil {
				key, colour = valueLabel(fs.Colour, p.Values[fs.Colour.Field()]), indexOf(fs.Colour.Values, p.Values[fs.Colour.Field()])
			}
		} else {
			v.X = float64(indexOf(f.Categories, valueLabel(fs.Colour, p.Values[fs.Colour.Field()])))
		}
		if fs.Dash != nil {
			dv := p.Values[fs.Dash.Field()]
			key, dash = strings.TrimPrefix(key+", "+valueLabel(fs.Dash, dv), ", "), indexOf(fs.Dash.Values, dv)
			if fs.X == nil {
				colour = dash
			}
		}
		s := series[key]
		if s == nil {
			s = &Series{Label: key, Colour: colour, Dash: dash}
			if key == "" {
				s.Label = f.YLabel
			}
			series[key] = s
			order = append(order, key)
		}
		s.Values = append(s.Values, v)
	}
	for _, k := range order {
		s := series[k]
		sort.SliceStable(s.Values, func(a, b int) bool { return s.Values[a].X < s.Values[b].X })
		f.Series = append(f.Series, *s)
	}
	sort.SliceStable(f.Series, func(a, b int) bool {
		if f.Series[a].Colour != f.Series[b].Colour {
			return f.Series[a].Colour < f.Series[b].Colour
		}
		return f.Series[a].Dash < f.Series[b].Dash
	})
	if fs.X != nil {
		f.LogX, f.XTicks = xScale(xs)
	}
	f.Caption = caption(d, fs, fig)
	return f, nil
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func withValue(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for a, b := range m {
		out[a] = b
	}
	return out
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return 0
}

// xTitle names the horizontal: a delay axis is drawn as the round-trip time it makes.
func xTitle(a *Axis) string {
	switch a.Field() {
	case "network.delay":
		return "emulated round-trip time (ms)"
	case "workload.publishers":
		if len(a.Fields) > 1 {
			return "clients (publishers = subscribers)"
		}
		return "publishers"
	case "workload.payloadBytes":
		return "payload (bytes)"
	case "workload.rate":
		return "offered rate (msg/s)"
	}
	return a.Name()
}

// xValue is a point's position on the horizontal: the round-trip time its runs' link applied for
// a delay axis (both directions' delays), else the axis's value.
func xValue(a *Axis, p *Point) float64 {
	if a.Field() == "network.delay" && len(p.Runs) > 0 {
		if rtt := rttMillis(p.Runs[0]); rtt > 0 {
			return rtt
		}
	}
	v, _ := number(p.Values[a.Field()])
	return v
}

// xScale chooses a log horizontal for values spanning 16× or more (clients 1–64: a linear axis
// crowds the small ones) and ticks at the values measured when they are few.
func xScale(xs map[float64]bool) (bool, []Tick) {
	var vals []float64
	for v := range xs {
		vals = append(vals, v)
	}
	sort.Float64s(vals)
	if len(vals) == 0 {
		return false, nil
	}
	logx := vals[0] > 0 && vals[len(vals)-1]/vals[0] >= 16
	if len(vals) > 8 && !logx {
		return false, nil
	}
	var ticks []Tick
	for _, v := range vals {
		ticks = append(ticks, Tick{Value: v, Label: si(v)})
	}
	return logx, ticks
}

// caption says what is drawn: the figure's definition, the statistic, what varies.
func caption(d *Dataset, fs FigureSpec, fig figures.Figure) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s.", fs.Y, fig.Definition)
	reps := 0
	for _, p := range d.Points {
		reps = max(reps, len(p.Runs))
	}
	switch {
	case reps >= 2 && fig.Histogram != "":
		b.WriteString(" Each point pools every message of its repetitions (merged histograms); error bars are the 95 % confidence interval of the mean over the repetitions.")
	case reps >= 2:
		b.WriteString(" Each point is the mean over its repetitions; error bars are the 95 % confidence interval (Student's t).")
	default:
		b.WriteString(" One run per point: no confidence interval.")
	}
	if fs.X != nil && len(fs.X.Fields) > 1 {
		fmt.Fprintf(&b, " Varying with %s: %s.", fs.X.Field(), strings.Join(fs.X.Fields[1:], ", "))
	}
	if len(d.Failed) > 0 {
		fmt.Fprintf(&b, " %d failed runs are not plotted (listed under Runs).", len(d.Failed))
	}
	return b.String()
}

// buildTimeline draws received messages per second over time for the first run of each series
// at the facet's first value of X.
func buildTimeline(d *Dataset, fs FigureSpec) *Figure {
	f := &Figure{ID: fs.ID, XLabel: "seconds since the measured window began", YLabel: "messages received per second", Steps: true}
	x0 := ""
	for _, v := range fs.X.Values {
		if matchesAny(d, withValue(fs.Facet, fs.X.Field(), v)) {
			x0 = v
			break
		}
	}
	at := withValue(fs.Facet, fs.X.Field(), x0)
	f.Title = "Received messages over time, " + valueLabel(fs.X, x0)
	if fs.FacetLabel != "" {
		f.Title += ", " + fs.FacetLabel
	}
	var step float64
	for _, p := range d.Points {
		if !matches(p, at) || len(p.Runs) == 0 {
			continue
		}
		r := p.Runs[0]
		pts, st := timelineRates(r, func(tp results.TimelinePoint) int64 { return tp.Received })
		if len(pts) == 0 {
			continue
		}
		step = st
		s := Series{Label: p.Name}
		if fs.Colour != nil {
			s.Label, s.Colour = valueLabel(fs.Colour, p.Values[fs.Colour.Field()]), indexOf(fs.Colour.Values, p.Values[fs.Colour.Field()])
		}
		if fs.Dash != nil {
			s.Label = strings.TrimPrefix(s.Label+", "+valueLabel(fs.Dash, p.Values[fs.Dash.Field()]), ", ")
			s.Dash = indexOf(fs.Dash.Values, p.Values[fs.Dash.Field()])
		}
		s.Values = pts
		f.Series = append(f.Series, s)
	}
	f.Caption = fmt.Sprintf("Messages received per second in %.0f ms intervals by the first repetition of each series at %s; the intervals after the measured window (draining) are left out.",
		step*1000, valueLabel(fs.X, x0))
	return f
}

// timelineRates is one count of a run's timeline as a rate per interval, leaving out the
// intervals that end after the measured window: the drain after the last message is not a drop
// in throughput.
func timelineRates(r *results.Result, count func(results.TimelinePoint) int64) ([]Value, float64) {
	if len(r.Timeline) == 0 || r.Timeline[0].T <= 0 {
		return nil, 0
	}
	step := r.Timeline[0].T
	var out []Value
	for _, tp := range r.Timeline {
		if r.MeasuredSeconds > 0 && tp.T > r.MeasuredSeconds+step/2 {
			break
		}
		out = append(out, Value{X: tp.T, Y: float64(count(tp)) / step, N: 1})
	}
	return out, step
}

// rttMillis is the emulated round-trip time of a run: the applied link's delays up plus down.
func rttMillis(r *results.Result) float64 {
	p, err := r.Plan()
	if err != nil || p == nil || !p.Network.Impaired {
		return 0
	}
	if n, ok := r.Network.(map[string]any); ok {
		if v, ok := n["rttMillis"].(float64); ok {
			return v
		}
	}
	return float64(p.Network.Link.RTT()) / 1e6
}

// si writes v with an SI prefix: 28000000 → "28M", 1500 → "1.5k", 0.25 → "0.25".
func si(v float64) string {
	a := math.Abs(v)
	for _, p := range []struct {
		f float64
		s string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if a >= p.f {
			return strconv.FormatFloat(roundSig(v/p.f, 6), 'f', -1, 64) + p.s
		}
	}
	return strconv.FormatFloat(roundSig(v, 6), 'f', -1, 64)
}
