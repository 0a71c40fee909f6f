package report

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/msgbench/msgbench/internal/atomicfile"
	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/results/figures"
)

// Page is what the HTML template renders.
type Page struct {
	Title, Generated, FontFamily string
	Single                       *results.Result
	Suite                        *SuiteSummary
	Points                       []PointRow
	Columns                      []string
	Figures                      []RenderedFigure
	Percentiles                  []PercentileRow
	Failed                       []FailedRun
	Networks                     []KV
	Environment                  []KV
	Spec, SpecOf                 string
	Caveats                      []string
	Comparison                   *Comparison
	ComparisonRows               []ChangeRow
	Notes                        []string
	// Groups and Matrix are a single run's device groups and the deliveries between them, when
	// it has groups (spec.groups).
	Groups []GroupRow
	Matrix *PairMatrix
	// GroupsRetained says whether a group has retained figures: the groups table's retained
	// column.
	GroupsRetained bool
	// GroupsAsking says whether a group asks (publish.replyTo): the table then has its answers
	// and round trips.
	GroupsAsking bool
	// Search is a capacity search's outcome and steps (spec.search).
	Search *SearchSummary
	// Energy is a single run's devices' radio energy, the run's and each group's that has its
	// own (spec.network.radio.energy).
	Energy []EnergySection
}

// SuiteSummary heads a suite's page.
type SuiteSummary struct {
	Verdict, Order, Seed                   string
	Points, Repetitions, Succeeded, Failed int
	Objectives                             []string
	// Search: the points are a capacity search's steps, each with its trials.
	Search bool
}

// PointRow is one point in the table of points: its values and headline figures.
type PointRow struct {
	Name   string
	Values string
	Runs   int
	Cells  []string
}

// PercentileRow is one latency of one point, pooled over its repetitions, in ms.
type PercentileRow struct {
	Point, Latency string
	Count          int64
	Cells          []string
}

// KV is a labelled value.
type KV struct{ Key, Value string }

// RenderedFigure is a figure as inline SVG with its CSV as a download.
type RenderedFigure struct {
	ID, Title, Caption string
	Study              bool
	SVG                template.HTML
	CSV                template.URL
}

// ChangeRow is one line of the baseline comparison.
type ChangeRow struct {
	Point, Figure, Base, Current, Change, Test string
	Regression, Worse                          bool
}

// columns of the points table: figure name and heading.
var columns = []struct{ figure, head string }{
	{"throughput.receivedPerSecond", "received/s"},
	{"throughput.receivedBytesPerSecond", "payload B/s"},
	{"latency.endToEnd.p50", "e2e p50"},
	{"latency.endToEnd.p99", "e2e p99"},
	{"latency.connect.p50", "connect p50"},
	{"latency.firstMessage.p50", "first msg p50"},
	{"wire.bytesPerMessage", "wire B/msg"},
	{"lostPercent", "lost"},
}

// energyColumns are added to the points table when some point has the figure: the devices'
// radio energy (spec.network.radio.energy).
var energyColumns = []struct{ figure, head string }{
	{"energy.perMessage", "energy/msg"},
	{"energy.meanCurrent", "mean current"},
	{"energy.batteryDays", "battery"},
}

// tableColumns are the points table's columns for d: the headline figures, and the energy
// figures some point has.
func tableColumns(d *Dataset) []struct{ figure, head string } {
	out := columns
	for _, c := range energyColumns {
		if anyValue(d, c.figure) {
			out = append(out[:len(out):len(out)], c)
		}
	}
	return out
}

// WriteHTML writes the dataset's self-contained page (figures inline, CSVs as data: links), with
// the baseline comparison when cmp is not nil.
func WriteHTML(w io.Writer, d *Dataset, cmp *Comparison) error {
	figs, err := Figures(d)
	if err != nil {
		return err
	}
	return writePage(w, d, figs, cmp)
}

func writePage(w io.Writer, d *Dataset, figs []*Figure, cmp *Comparison) error {
	page := Page{Title: d.Title, Generated: time.Now().UTC().Format(time.RFC3339), FontFamily: FontFamily, Failed: d.Failed, Comparison: cmp}
	runs := 0
	for _, p := range d.Points {
		runs += len(p.Runs)
	}
	switch {
	case d.Suite != nil || len(d.Points) != 1 || runs+len(d.Failed) != 1:
	case runs == 1:
		page.Single = d.Points[0].Runs[0]
		page.Groups, page.Matrix = groupRows(page.Single), pairMatrix(page.Single)
		page.GroupsRetained = anyRetained(page.Groups)
		page.GroupsAsking = anyAsking(page.Groups)
		page.Energy = energySections(page.Single)
	default: // one run that failed: its summary says why; it has no figures
		page.Single = d.Failed[0].Result
	}
	if d.Suite != nil {
		s := d.Suite
		page.Suite = &SuiteSummary{Verdict: s.Verdict, Order: string(s.Spec.Order), Points: len(s.Points), Repetitions: int(s.Spec.Repetitions),
			Succeeded: int(s.Runs.Succeeded), Failed: int(s.Runs.Failed), Objectives: s.Spec.Objectives}
		if s.Seed != nil {
			page.Suite.Seed = fmt.Sprint(*s.Seed)
		}
		if s.Search != nil {
			page.Suite.Search, page.Search = true, searchSummary(s.Search)
		}
		page.Caveats = append(page.Caveats, s.Caveats...)
		if s.Interrupted {
			page.Notes = append(page.Notes, "The suite was interrupted: only the runs that finished are here.")
		}
	}
	cols := tableColumns(d)
	for _, c := range cols {
		page.Columns = append(page.Columns, c.head)
	}
	for _, p := range d.Points {
		page.Points = append(page.Points, pointRow(d, p, cols))
		page.Percentiles = append(page.Percentiles, percentileRows(p)...)
		page.Notes = append(page.Notes, prefixed(p.Name, p.Stats.Notes)...)
	}
	page.Caveats = append(page.Caveats, caveats(d, runs)...)
	page.Networks = networks(d)
	page.Environment = environment(d)
	page.Spec, page.SpecOf = specYAML(d)
	for _, f := range figs {
		svg, err := f.Render("svg")
		if err != nil {
			return err
		}
		page.Figures = append(page.Figures, RenderedFigure{ID: f.ID, Title: f.Title, Caption: f.Caption, Study: f.Study,
			SVG: template.HTML(stripXMLHeader(svg)),                                                  //nolint:gosec // our own SVG
			CSV: template.URL("data:text/csv;base64," + base64.StdEncoding.EncodeToString(f.CSV()))}) //nolint:gosec // our own data
	}
	if cmp != nil {
		for _, c := range cmp.Changes {
			page.ComparisonRows = append(page.ComparisonRows, changeRow(c))
		}
	}
	return pageTemplate.Execute(w, page)
}

// caveats are the runs' caveats by type: how many runs have it, and the first one's message.
func caveats(d *Dataset, runs int) []string {
	type group struct {
		n           int
		first, name string
	}
	groups := map[string]*group{}
	var order []string
	for _, p := range d.Points {
		for _, r := range p.Runs {
			seen := map[string]bool{}
			for _, c := range r.Caveats {
				if seen[c.Type] {
					continue
				}
				seen[c.Type] = true
				g := groups[c.Type]
				if g == nil {
					g = &group{first: c.Message, name: r.Name}
					groups[c.Type] = g
					order = append(order, c.Type)
				}
				g.n++
			}
		}
	}
	var out []string
	for _, t := range order {
		g := groups[t]
		if runs == 1 {
			out = append(out, t+": "+g.first)
			continue
		}
		out = append(out, fmt.Sprintf("%s in %d of %d runs, e.g. %s: %s", t, g.n, runs, g.name, g.first))
	}
	return out
}

func prefixed(p string, notes []string) []string {
	var out []string
	for _, n := range notes {
		out = append(out, p+": "+n)
	}
	return out
}

// Options say what WriteFiles writes besides report.html and the CSVs.
type Options struct {
	// Images writes every figure as SVG, PNG and PDF.
	Images bool
	// NoTitles leaves the title out of the images (a paper's caption says it); the page keeps it.
	NoTitles bool
	// Comparison is the baseline comparison to show, if any.
	Comparison *Comparison
}

// WriteFiles writes report.html and every figure's CSV into dir, and the images o asks for, each
// atomically (internal/atomicfile: a file that cannot be written whole is not left cut short). It
// returns the files written — on an error too, those written before it — and stops at the first
// file that cannot be written, the error naming it.
func WriteFiles(dir string, d *Dataset, o Options) ([]string, error) {
	images, cmp := o.Images, o.Comparison
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	figs, err := Figures(d)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := writePage(&buf, d, figs, cmp); err != nil {
		return nil, err
	}
	page := filepath.Join(dir, "report.html")
	if err := atomicfile.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		return nil, err
	}
	files := []string{page}
	for _, f := range figs {
		formats := []string{"csv"}
		if images {
			formats = append(formats, Formats...)
		}
		img := *f
		if o.NoTitles {
			img.Title = ""
		}
		for _, format := range formats {
			data := f.CSV()
			if format != "csv" {
				if data, err = img.Render(format); err != nil {
					return files, err
				}
			}
			name := filepath.Join(dir, f.ID+"."+format)
			if err := atomicfile.WriteFile(name, data, 0o644); err != nil {
				return files, err
			}
			files = append(files, name)
		}
	}
	return files, nil
}

func stripXMLHeader(svg []byte) string {
	s := string(svg)
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:]
	}
	return s
}

// FormatValue writes the named figure's value (in its stored unit) as tables show it.
func FormatValue(figure string, v float64) string {
	f, err := figures.Lookup(figure)
	if err != nil {
		return si(roundSig(v, 4))
	}
	return formatValue(f, v)
}

// formatValue writes a figure's value for a table, in its plotted unit, to 4 significant digits:
// "1.25 ms", "2.1k".
func formatValue(f figures.Figure, v float64) string { return withUnit(f, v, 4) }

// formatCI writes a confidence interval's half-width to two significant digits: its own
// uncertainty makes more meaningless.
func formatCI(f figures.Figure, v float64) string { return withUnit(f, v, 2) }

func withUnit(f figures.Figure, v float64, digits int) string {
	scale, unit := yUnit(f)
	text := si(roundSig(v*scale, digits))
	switch unit {
	case "ms", "%", "s", "mJ", "mA", "days":
		return text + " " + unit
	}
	return text
}

// roundSig rounds v to n significant digits, so that 0.1+0.2 prints as 0.3.
func roundSig(v float64, n int) float64 {
	p, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', n, 64), 64)
	return p
}

func pointRow(d *Dataset, p *Point, cols []struct{ figure, head string }) PointRow {
	row := PointRow{Name: p.Name, Runs: len(p.Runs)}
	var vals []string
	for _, a := range d.Axes {
		vals = append(vals, valueLabel(a, p.Values[a.Field()]))
	}
	row.Values = strings.Join(vals, ", ")
	for _, c := range cols {
		f, _ := figures.Lookup(c.figure)
		st, ok := p.Stats.Figures[c.figure]
		v, okv := p.Stats.Value(c.figure)
		if !ok || !okv {
			row.Cells = append(row.Cells, "")
			continue
		}
		cell := formatValue(f, v)
		if st.N >= 2 && f.Histogram == "" && st.CI95 > 0 {
			cell += " ± " + formatCI(f, st.CI95)
		}
		row.Cells = append(row.Cells, cell)
	}
	return row
}

// percentileRows are a point's latencies at every percentile, pooled over its repetitions.
func percentileRows(p *Point) []PercentileRow {
	var out []PercentileRow
	for _, h := range results.HistogramNames {
		row := PercentileRow{Point: p.Name, Latency: label(h)}
		found := false
		for _, st := range []string{"min", "p50", "p90", "p95", "p99", "p999", "max"} {
			v, ok := p.Stats.Value("latency." + h + "." + st)
			if !ok {
				row.Cells = append(row.Cells, "")
				continue
			}
			found = true
			row.Cells = append(row.Cells, fmt.Sprintf("%.3f", v/1000))
		}
		for _, r := range p.Runs {
			if s := figures.LatencySummary(r, h); s != nil {
				row.Count += s.Count
			}
		}
		if found {
			out = append(out, row)
		}
	}
	return out
}

// networks are the links as applied, one line per distinct link.
func networks(d *Dataset) []KV {
	var out []KV
	seen := map[string]bool{}
	for _, p := range d.Points {
		for _, r := range p.Runs {
			s := r.NetworkSummary()
			if s == "" || seen[s] {
				continue
			}
			seen[s] = true
			out = append(out, KV{Key: p.Name, Value: s})
			break
		}
	}
	return out
}

// environment is where the runs ran: each distinct machine, broker and versions.
func environment(d *Dataset) []KV {
	var out []KV
	seen := map[string]bool{}
	for _, p := range d.Points {
		for _, r := range p.Runs {
			for _, kv := range []KV{{"machine", r.EnvironmentSummary()}, {"broker", strings.TrimSuffix(r.Environment.Broker+", "+r.Environment.Gateway, ", ")}} {
				if kv.Value != "" && !seen[kv.Key+kv.Value] {
					seen[kv.Key+kv.Value] = true
					out = append(out, kv)
				}
			}
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Key > out[b].Key })
	return out
}

// specYAML is the suite's spec, or a point's benchmark spec, as YAML; of says whose, and for
// several points which fields the others differ in.
func specYAML(d *Dataset) (spec, of string) {
	var v any
	switch {
	case d.Suite != nil:
		v, of = d.Suite.Spec, "suite "+d.Suite.Name
	default:
		for _, p := range d.Points {
			if len(p.Runs) > 0 {
				v, of = p.Runs[0].Spec, p.Name
				break
			}
		}
		if len(d.Points) > 1 {
			var fields []string
			for _, a := range d.Axes {
				fields = append(fields, a.Fields...)
			}
			of += "; the other points differ in " + strings.Join(fields, ", ")
		}
	}
	if v == nil {
		return "", ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", ""
	}
	y, err := yaml.JSONToYAML(b)
	if err != nil {
		return "", ""
	}
	return string(y), of
}

func changeRow(c Change) ChangeRow {
	f, _ := figures.Lookup(c.Figure)
	row := ChangeRow{Point: c.Point, Figure: c.Figure, Base: fmt.Sprintf("%s (n=%d)", formatValue(f, c.Base), c.BaseN),
		Current: fmt.Sprintf("%s (n=%d)", formatValue(f, c.Current), c.CurN), Change: fmt.Sprintf("%+.1f %%", c.Percent),
		Test: c.Test, Regression: c.Regression, Worse: c.Worse}
	if c.FromZero {
		row.Change = "from 0"
	}
	return row
}

var pageTemplate = template.Must(template.New("report").Funcs(template.FuncMap{"deref": func(p *float64) float64 { return *p }}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
 body { font-family: {{.FontFamily}}; margin: 2rem auto; max-width: 1280px; color: #1d2330; padding: 0 1rem; }
 h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #dde2ea; padding-bottom: .3rem; }
 .meta { color: #5b6577; font-size: .9rem; }
 .scroll { overflow-x: auto; max-width: 100%; }
 table { border-collapse: collapse; font-size: .85rem; margin-top: .8rem; }
 th, td { text-align: right; padding: .3rem .45rem; border-bottom: 1px solid #eef1f5; white-space: nowrap; }
 th.l, td.l { text-align: left; }
 td.wrap { white-space: normal; }
 th { background: #f5f7fa; font-weight: 600; }
 .failed, .regression { color: #b3261e; font-weight: 600; }
 .caveat { color: #8a5300; }
 figure { margin: 1.5rem 0; } figure svg { width: 100%; max-width: 1000px; height: auto; display: block; }
 figure.study { border-left: 4px solid #0072B2; padding-left: .8rem; }
 figcaption { color: #5b6577; font-size: .88rem; margin-top: .3rem; }
 h3 { font-size: 1rem; margin: 1.2rem 0 .4rem; }
 dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; font-size: .92rem; }
 dl.kv dt { color: #5b6577; } dl.kv dd { margin: 0; }
 pre { background: #f5f7fa; padding: .8rem; font-size: .8rem; overflow-x: auto; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="meta">Generated {{.Generated}} by msgbench. Every figure is defined in docs/results.md; the figures are explained in docs/reports.md.</p>
{{with .Suite}}
<h2>Suite</h2>
<dl class="kv">
 <dt>verdict</dt><dd{{if eq .Verdict "Missed"}} class="failed"{{end}}>{{.Verdict}}</dd>
 <dt>runs</dt><dd>{{if .Search}}{{.Points}} steps of a capacity search{{else}}{{.Points}} points × {{.Repetitions}} repetitions{{end}}: {{.Succeeded}} succeeded, {{.Failed}} failed</dd>
 {{if not .Search}}<dt>order</dt><dd>{{.Order}}{{with .Seed}}, seed {{.}}{{end}}</dd>{{end}}
 {{range $i, $o := .Objectives}}<dt>{{if eq $i 0}}objectives{{end}}</dt><dd>{{$o}}</dd>
 {{end}}
</dl>
{{end}}
{{with .Search}}
<h2>Capacity search</h2>
<p id="search-outcome"{{if not .Stated}} class="caveat"{{end}}><strong>{{.Line}}</strong></p>
{{with .Message}}<p class="meta">{{.}}</p>{{end}}
<p class="meta">Each step runs one value of the scaled field as one or more trials (its runs are the point of the same name below); a trial passes when its run succeeded, its backlog did not grow and it met every objective. probe: the exponential search for a bracket; bisect: the bracket's middle; confirm: the result once more.</p>
<div class="scroll"><table id="search-steps">
<tr><th>step</th><th class="l">kind</th><th>value</th><th>trials passed</th><th class="l">result</th><th class="l">first reason a trial failed</th></tr>
{{range .Steps}}<tr><td>{{.Point}}</td><td class="l">{{.Kind}}</td><td>{{.Value}}</td><td>{{.Trials}}</td><td class="l{{if .Failed}} failed{{end}}">{{.Passed}}</td><td class="l wrap">{{.Reason}}</td></tr>
{{end}}</table></div>
{{end}}
{{with .Single}}
<h2>Summary</h2>
<dl class="kv">
 <dt>phase</dt><dd{{if ne .Phase "Succeeded"}} class="failed"{{end}}>{{.Phase}}{{if .Message}}: {{.Message}}{{end}}</dd>
 {{with .ProtocolSpoken}}<dt>protocol</dt><dd>{{.}}</dd>{{end}}
 {{range .GroupLines}}<dt>group {{.Key}}</dt><dd>{{.Text}}</dd>
 {{end}}
 <dt>broker</dt><dd>{{.Environment.Broker}}{{if .Environment.Gateway}}, {{.Environment.Gateway}}{{end}}</dd>
 {{with .NetworkSummary}}<dt>network</dt><dd>{{.}}</dd>{{end}}
 {{with .EnvironmentSummary}}<dt>environment</dt><dd>{{.}}</dd>{{end}}
 <dt>measured</dt><dd>{{printf "%.2f" .MeasuredSeconds}} s from {{.StartTime.Format "2006-01-02 15:04:05 MST"}}</dd>
 <dt>messages</dt><dd>sent {{.Sent}}{{if .Unsent}} ({{.Unsent}} more scheduled but unsent){{end}}, received {{.Received}} of {{.Expected}} expected, {{.Errors}} errors</dd>
 <dt>throughput</dt><dd>{{if .Throughput.OfferedPerSecond}}{{printf "%.0f" .Throughput.OfferedPerSecond}} msg/s offered, {{printf "%.0f" .Throughput.SentPerSecond}} sent, {{end}}{{printf "%.0f" .Throughput.ReceivedPerSecond}} msg/s received, {{printf "%.0f" .Throughput.ReceivedBytesPerSecond}} payload B/s</dd>
 {{with .Wire.BytesPerMessage}}<dt>wire</dt><dd>{{printf "%.1f" (deref .)}} bytes per message{{with $.Single.Wire.ConnectBytes}}, {{printf "%.0f" (deref .)}} bytes per connection set-up{{end}}</dd>{{end}}
</dl>
{{end}}
{{if .Groups}}<h2>Device groups</h2>
<p class="meta">Each group's figures over its own clients (docs/fleets.md): what its publishers sent, what its subscribers received of what their subscriptions call for, and their latencies.</p>
<div class="scroll"><table id="groups">
<tr><th class="l">group</th><th class="l">clients</th><th class="l">protocol</th><th>sent</th><th>received</th><th>expected</th><th>lost</th><th>duplicates</th>{{if .GroupsRetained}}<th>retained</th>{{end}}{{if .GroupsAsking}}<th>answered</th><th>round trip p50</th><th>round trip p99</th>{{end}}<th>e2e p50</th><th>e2e p99</th><th>publish ack p99</th><th>connect p50</th><th>connect p99</th></tr>
{{range .Groups}}<tr><td class="l">{{.Name}}</td><td class="l">{{.Clients}}</td><td class="l">{{.Protocol}}</td><td>{{.Sent}}</td><td>{{.Received}}</td><td>{{.Expected}}</td><td{{if .Lossy}} class="failed"{{end}}>{{.Lost}}</td><td>{{.Dup}}</td>{{if $.GroupsRetained}}<td>{{.Retained}}</td>{{end}}{{if $.GroupsAsking}}<td{{if .AnswersLost}} class="failed"{{end}}>{{.Answered}}</td><td>{{.RTTP50}}</td><td>{{.RTTP99}}</td>{{end}}<td>{{.E2EP50}}</td><td>{{.E2EP99}}</td><td>{{.AckP99}}</td><td>{{.ConnP50}}</td><td>{{.ConnP99}}</td></tr>
{{end}}</table></div>
{{with .Matrix}}<h2>Delivery between groups</h2>
<p class="meta">From each publishing group (row) to each subscribing group (column): the messages its subscriptions call for (expected), those received once, lost (expected − received), duplicates and their end-to-end latency. —: no subscription of the column's group takes the row's messages.</p>
<div class="scroll"><table id="pairs">
<tr><th class="l">from \ to</th>{{range .To}}<th class="l">{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr><th class="l">{{.From}}</th>{{range .Cells}}<td class="l">{{if .Pair}}expected {{.Expected}}<br>received {{.Received}}<br><span{{if .Lost}} class="failed"{{end}}>lost {{.Lost}}</span>, duplicates {{.Duplicates}}{{if .OutOfOrder}}, out of order {{.OutOfOrder}}{{end}}{{if .P50}}<br>e2e p50 {{.P50}}, p99 {{.P99}}{{end}}{{else}}—{{end}}</td>{{end}}</tr>
{{end}}</table></div>{{end}}
{{end}}
{{if .Energy}}<h2 id="energy">Energy</h2>
<p class="meta">The devices' radio energy in the measured window, from every packet each device sent and received as its link's radio states let it on the air, at the power model's numbers (docs/energy.md). Energy per message is over the messages the devices delivered: those they published that reached their subscribers, and those they received. A state's time is summed over the devices.</p>
{{range .Energy}}{{with .Group}}<h3>group {{.}}</h3>
{{end}}<dl class="kv">
 <dt>model</dt><dd>{{.Model}}</dd>
 {{with .Source}}<dt>source</dt><dd>{{.}}</dd>{{end}}
 {{with .Radio}}<dt>radio</dt><dd>{{.}}</dd>{{end}}
 <dt>devices</dt><dd>{{.Devices}}</dd>
 <dt>per message</dt><dd>{{.PerMessage}}</dd>
 <dt>mean current</dt><dd>{{.Current}}</dd>
 {{with .Battery}}<dt>battery</dt><dd>{{.}}</dd>{{end}}
</dl>
<div class="scroll"><table id="energy-states{{with .Group}}-{{.}}{{end}}">
<tr><th class="l">state</th><th>time (s)</th><th>time %</th><th>energy (mJ)</th><th>energy %</th><th>power (mW)</th></tr>
{{range .States}}<tr><td class="l">{{.State}}</td><td>{{.Seconds}}</td><td>{{.TimePercent}}</td><td>{{.Millijoules}}</td><td>{{.SharePercent}}</td><td>{{.Milliwatts}}</td></tr>
{{end}}</table></div>
{{end}}{{end}}
{{with .Comparison}}
<h2>Against the baseline</h2>
<p class="meta">Baseline {{.Baseline}}. A regression is a change in the figure's bad direction beyond {{.ThresholdPercent}} % (and, for latencies, beyond {{.LatencyFloorMicros}} µs), significant at α = {{.Alpha}} where both sides have two or more repetitions (Welch's t-test{{with .Correction}}, {{.}} correction over every test{{end}}).</p>
{{range .Unmatched}}<p class="caveat">{{.}}</p>{{end}}{{range .Notes}}<p class="meta">{{.}}</p>{{end}}
{{end}}
{{if .ComparisonRows}}
<div class="scroll"><table>
<tr><th class="l">point</th><th class="l">figure</th><th>baseline</th><th>now</th><th>change</th><th class="l">test</th></tr>
{{range .ComparisonRows}}<tr><td class="l">{{.Point}}</td><td class="l">{{.Figure}}</td><td>{{.Base}}</td><td>{{.Current}}</td><td{{if .Regression}} class="regression"{{end}}>{{.Change}}{{if .Regression}} regression{{end}}</td><td class="l wrap">{{.Test}}</td></tr>
{{end}}</table></div>
{{end}}
{{if .Caveats}}<h2>Caveats</h2>
<ul>{{range .Caveats}}<li class="caveat">{{.}}</li>{{end}}</ul>{{end}}
<h2>Figures</h2>
{{range .Figures}}<figure id="{{.ID}}"{{if .Study}} class="study"{{end}}>{{.SVG}}<figcaption>{{if .Study}}<strong>The study's figure.</strong> {{end}}{{.Title}}. {{.Caption}} <a download="{{.ID}}.csv" href="{{.CSV}}">CSV</a></figcaption></figure>
{{else}}<p class="meta">No figure: nothing was measured.</p>{{end}}
<h2>{{if .Single}}Figures of the run{{else}}Points{{end}}</h2>
<p class="meta">{{if not .Single}}Means over each point's succeeded repetitions ± the 95 % confidence interval; latencies pooled over every message of the repetitions. {{end}}Latencies in ms.</p>
<div class="scroll"><table>
<tr><th class="l">point</th>{{if not .Suite}}<th class="l">values</th>{{end}}<th>runs</th>{{range .Columns}}<th>{{.}}</th>{{end}}</tr>
{{range .Points}}<tr><td class="l">{{.Name}}</td>{{if not $.Suite}}<td class="l wrap">{{.Values}}</td>{{end}}<td>{{.Runs}}</td>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table></div>
{{if .Percentiles}}<h2>Latency percentiles</h2>
<details{{if le (len .Percentiles) 30}} open{{end}}><summary class="meta">Milliseconds, pooled over every message of each point's repetitions (merged HdrHistograms): {{len .Percentiles}} rows.</summary>
<div class="scroll"><table>
<tr><th class="l">point</th><th class="l">latency</th><th>samples</th><th>min</th><th>p50</th><th>p90</th><th>p95</th><th>p99</th><th>p99.9</th><th>max</th></tr>
{{range .Percentiles}}<tr><td class="l">{{.Point}}</td><td class="l">{{.Latency}}</td><td>{{.Count}}</td>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table></div></details>{{end}}
{{if .Failed}}<h2>Runs not plotted</h2>
<p class="meta">These runs did not succeed: they are in no figure, statistic or table above.</p>
<div class="scroll"><table>
<tr><th class="l">point</th><th class="l">run</th><th class="l">phase</th><th class="l">message</th></tr>
{{range .Failed}}<tr><td class="l">{{.Point}}</td><td class="l">{{.Name}}</td><td class="l failed">{{.Phase}}</td><td class="l wrap">{{.Message}}</td></tr>
{{end}}</table></div>{{end}}
<h2>Network and environment</h2>
<dl class="kv">
{{range .Networks}}<dt>network ({{.Key}})</dt><dd>{{.Value}}</dd>
{{end}}{{range .Environment}}<dt>{{.Key}}</dt><dd>{{.Value}}</dd>
{{end}}</dl>
{{range .Notes}}<p class="meta">{{.}}</p>{{end}}
{{if .Spec}}<details><summary>Spec of {{.SpecOf}}</summary><pre>{{.Spec}}</pre></details>{{end}}
</body>
</html>
`))
