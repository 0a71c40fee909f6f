package report

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/msgbench/msgbench/results/figures"
)

// FigureSpec says what one comparison figure shows: figure Y (a name of results/figures) against
// axis X — or, without X, as bars over the Colour axis's values — one line or bar per value of
// Colour × Dash, restricted to the points whose values match Facet.
type FigureSpec struct {
	ID string
	// Y is the figure plotted, e.g. "throughput.receivedPerSecond".
	Y string
	// X is the numeric axis along the horizontal; nil draws bars.
	X *Axis
	// Colour and Dash split the points into series: a colour per value of one axis, a dash and
	// marker per value of another, so that a black-and-white print still tells them apart.
	Colour, Dash *Axis
	// Facet fixes the values of the remaining axes (field → value), one figure per combination.
	Facet map[string]string
	// FacetLabel says the facet in the title: "payload (B) 1024".
	FacetLabel string
	// Timeline draws received messages per second over time of the first run of each series at
	// the facet (X's first value): how a transfer progressed.
	Timeline bool
	// Study marks the figure the suite is about: the first for its axes.
	Study bool
}

// MaxFigures bounds a report: beyond it, the figures are in the CSV files only.
const MaxFigures = 36

// xPreference orders the numeric axes that can be a figure's horizontal: the one a study varies to
// see a trend. QoS and HTTP versions are numbers but categories.
var xPreference = []string{"workload.publishers", "workload.subscribers", "network.delay", "workload.payloadBytes",
	"workload.rate", "workload.messages", "network.lossPercent", "network.rateKbps"}

// categorical are fields whose values are numbers but name versions or levels, not quantities.
var categorical = map[string]bool{"qos": true, "http.version": true, "tls.version": true, "mqtt.version": true}

// Plan chooses the comparison figures from the dataset's axes, not from a list per study: the
// horizontal is the numeric axis a study varies (clients, round-trip time, payload size, rate);
// categories (protocol, QoS, TLS, network) become series; remaining axes become facets; the
// figures plotted follow from the horizontal — messages handled against clients, set-up latency
// against round-trip time, time to first message and bytes against payload size — and from the
// categories (wire bytes when TLS or protocols differ). The first figure is the study's figure.
func Plan(d *Dataset) []FigureSpec {
	if len(d.Axes) == 0 {
		return nil
	}
	quantity := func(a *Axis) bool { return a.Numeric && !categorical[a.Field()] && a.Declared }
	var x *Axis
	for _, f := range xPreference {
		for _, a := range d.Axes {
			if x == nil && quantity(a) && slices.Contains(a.Fields, f) {
				x = a
			}
		}
	}
	for _, a := range d.Axes { // another numeric field a suite varies: mqtt.inflight, workers
		if x == nil && quantity(a) {
			x = a
		}
	}
	var cats, facets []*Axis
	for _, a := range d.Axes {
		switch {
		case a == x:
		case !quantity(a):
			cats = append(cats, a)
		default:
			facets = append(facets, a)
		}
	}
	var colour, dash *Axis
	if len(cats) > 0 {
		colour, cats = cats[0], cats[1:]
	}
	if len(cats) > 0 {
		dash, cats = cats[0], cats[1:]
	}
	facets = append(cats, facets...)
	if x == nil && colour == nil { // only facets: the first becomes the bars' categories
		colour, facets = facets[0], facets[1:]
	}
	ys := yFigures(d, x)
	var out []FigureSpec
	for _, facet := range facetCombos(d, facets) {
		for i, y := range ys {
			fs := FigureSpec{Y: y, X: x, Colour: colour, Dash: dash, Facet: facet.values, FacetLabel: facet.label, Study: len(out) == 0 && i == 0}
			fs.ID = figureID(fs)
			out = append(out, fs)
		}
		if x != nil && timelines(d) {
			fs := FigureSpec{Y: "timeline", X: x, Colour: colour, Dash: dash, Facet: facet.values, FacetLabel: facet.label, Timeline: true}
			fs.ID = figureID(fs)
			out = append(out, fs)
		}
	}
	if len(out) > MaxFigures {
		out = out[:MaxFigures]
	}
	return out
}

// yFigures are the figures plotted against x, the study's own first.
func yFigures(d *Dataset, x *Axis) []string {
	axis := func(field string) bool {
		for _, a := range d.Axes {
			if slices.Contains(a.Fields, field) {
				return true
			}
		}
		return false
	}
	var ys []string
	switch {
	case x == nil:
		ys = []string{"throughput.receivedPerSecond", "latency.endToEnd.p50", "latency.endToEnd.p99", "latency.connect.p50"}
	case slices.Contains(x.Fields, "network.delay"):
		ys = []string{"latency.connect.p95", "latency.connect.p50", "latency.firstMessage.p50", "latency.endToEnd.p99", "lostPercent"}
	case slices.Contains(x.Fields, "workload.payloadBytes"):
		ys = []string{"latency.firstMessage.p50", "throughput.receivedBytesPerSecond", "wire.bytesPerMessage", "throughput.receivedPerSecond"}
	case axis("workload.payloadBytes"):
		ys = []string{"throughput.receivedBytesPerSecond", "throughput.receivedPerSecond", "latency.endToEnd.p50"}
	default:
		ys = []string{"throughput.receivedPerSecond", "latency.endToEnd.p50", "latency.endToEnd.p99"}
	}
	// Messages handled mean little without those lost: a QoS 0 sender can outrun its receiver.
	// With a radio power model (spec.network.radio.energy), what a message costs the devices
	// and how long their batteries last: IoT protocols are weighed by them (docs/energy.md).
	ys = append(ys, "lostPercent", "energy.perMessage", "energy.batteryDays")
	for _, g := range energyGroups(d) { // a device group's, behind its own link
		ys = append(ys, figures.GroupPrefix+g+".energy.perMessage", figures.GroupPrefix+g+".energy.batteryDays")
	}
	switch {
	case axis("tls.enabled"):
		// What TLS costs (study 5): every byte on the wire per second — the study's
		// "throughput", higher with TLS — beside the payload actually delivered per second,
		// then bytes per message and per handshake.
		ys = append([]string{"wire.bytesPerSecond", "throughput.receivedBytesPerSecond", "wire.bytesPerMessage", "wire.connectBytes"}, ys...)
	case axis("protocol"):
		ys = append(ys, "wire.bytesPerMessage", "wire.connectBytes")
	}
	var out []string
	seen := map[string]bool{}
	for _, y := range ys {
		if y == "lostPercent" && !anyPositive(d, y) {
			continue // a figure of zeros says less than the table's "0 %"
		}
		if !seen[y] && anyValue(d, y) {
			seen[y] = true
			out = append(out, y)
		}
	}
	return out
}

// anyValue: some point's statistics have the figure.
func anyValue(d *Dataset, y string) bool {
	for _, p := range d.Points {
		if _, ok := p.Stats.Value(y); ok {
			return true
		}
	}
	return false
}

func anyPositive(d *Dataset, y string) bool {
	for _, p := range d.Points {
		if v, ok := p.Stats.Value(y); ok && v > 0 {
			return true
		}
	}
	return false
}

// timelines: the runs sampled their timeline finer than a second, as a study of how a transfer
// progresses does (study 2 samples every 200 ms).
func timelines(d *Dataset) bool {
	for _, p := range d.Points {
		for _, r := range p.Runs {
			if p, err := r.Plan(); err == nil && p != nil && p.Timing.TimelineInterval < time.Second && len(r.Timeline) > 1 {
				return true
			}
		}
	}
	return false
}

type facet struct {
	values map[string]string
	label  string
}

// facetCombos are the combinations of the facet axes' values that some point has, in the axes'
// orders; one empty combination when there is no facet axis.
func facetCombos(d *Dataset, axes []*Axis) []facet {
	out := []facet{{values: map[string]string{}}}
	for _, a := range axes {
		var next []facet
		for _, f := range out {
			for _, v := range a.Values {
				vals := map[string]string{a.Field(): v}
				for k, w := range f.values {
					vals[k] = w
				}
				if !matchesAny(d, vals) {
					continue
				}
				next = append(next, facet{values: vals, label: strings.TrimPrefix(f.label+", "+valueLabel(a, v), ", ")})
			}
		}
		out = next
	}
	return out
}

func matchesAny(d *Dataset, vals map[string]string) bool {
	for _, p := range d.Points {
		if matches(p, vals) {
			return true
		}
	}
	return false
}

func matches(p *Point, vals map[string]string) bool {
	for k, v := range vals {
		if p.Values[k] != v {
			return false
		}
	}
	return true
}

var unsafeID = regexp.MustCompile(`[^a-zA-Z0-9]+`)

// figureID is a file name for the figure: "receivedPerSecond-by-clients-payload-1024",
// "energy-perMessage-by-protocol".
func figureID(fs FigureSpec) string {
	y := fs.Y
	if i := strings.Index(y, "."); i >= 0 && !strings.HasPrefix(y, "latency.") && !strings.HasPrefix(y, "energy.") {
		y = y[i+1:]
	}
	id := strings.TrimPrefix(y, "latency.")
	if fs.X != nil {
		id += "-by-" + map[string]string{"network.delay": "rtt", "workload.payloadBytes": "payload", "workload.publishers": "clients"}[fs.X.Field()]
		if strings.HasSuffix(id, "-by-") {
			id += fs.X.Name()
		}
	} else if fs.Colour != nil {
		id += "-by-" + fs.Colour.Name()
	}
	if fs.FacetLabel != "" {
		id += "-" + fs.FacetLabel
	}
	return strings.Trim(unsafeID.ReplaceAllString(fmt.Sprint(id), "-"), "-")
}

// energyGroups are the device groups whose energy some point's statistics have
// (groups.<g>.energy.*), in name order.
func energyGroups(d *Dataset) []string {
	var gs []string
	for _, p := range d.Points {
		for name := range p.Stats.Figures {
			rest, ok := strings.CutPrefix(name, figures.GroupPrefix)
			if !ok {
				continue
			}
			if g, _, ok := strings.Cut(rest, ".energy."); ok && !slices.Contains(gs, g) {
				gs = append(gs, g)
			}
		}
	}
	slices.Sort(gs)
	return gs
}
