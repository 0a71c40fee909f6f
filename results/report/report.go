package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/msgbench/msgbench/results"
)

// Page is what the HTML template renders.
type Page struct {
	Title     string
	Generated string
	Runs      []Row
	Charts    []RenderedChart
	Single    *results.Result
	Notes     []string
}

// Row is one result in the table.
type Row struct {
	Name, Protocol, Broker, Network              string
	Payload, Publishers, Subscribers             int32
	Sent, Received, Lost                         string
	ReceivedPerSecond, ReceivedBytes             string
	P50, P99, Connect, FirstMessage, BytesPerMsg string
	Phase, Message                               string
	CPU                                          string
	// Caveats lists the run's caveat types ("" when none).
	Caveats string
}

// RenderedChart is a chart as inline SVG.
type RenderedChart struct {
	ID, Title, Caption string
	SVG                template.HTML
}

// WriteHTML writes a self-contained page: one run's report, or a comparison of several.
func WriteHTML(w io.Writer, rs []*results.Result) error {
	var charts []*Chart
	var err error
	page := Page{Generated: time.Now().UTC().Format(time.RFC3339)}
	if len(rs) == 1 {
		page.Single = rs[0]
		page.Title = "msgbench: " + rs[0].Name
		charts, err = RunCharts(rs[0])
	} else {
		page.Title = fmt.Sprintf("msgbench: %d runs compared", len(rs))
		charts, err = CompareCharts(rs)
	}
	if err != nil {
		return err
	}
	for _, r := range rs {
		page.Runs = append(page.Runs, row(r))
	}
	for _, c := range charts {
		svg, err := c.Render("svg")
		if err != nil {
			return err
		}
		page.Charts = append(page.Charts, RenderedChart{ID: c.ID, Title: c.Title, Caption: c.Caption, SVG: template.HTML(stripXMLHeader(svg))}) //nolint:gosec // our own SVG
	}
	return pageTemplate.Execute(w, page)
}

// WriteFiles writes report.html and, with images, every chart as PNG and SVG into dir.
func WriteFiles(dir string, rs []*results.Result, images bool) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, rs); err != nil {
		return nil, err
	}
	files := []string{filepath.Join(dir, "report.html")}
	if err := os.WriteFile(files[0], buf.Bytes(), 0o644); err != nil {
		return nil, err
	}
	if !images {
		return files, nil
	}
	charts, err := RunCharts(rs[0])
	if len(rs) > 1 {
		charts, err = CompareCharts(rs)
	}
	if err != nil {
		return nil, err
	}
	for _, c := range charts {
		for _, format := range []string{"svg", "png"} {
			data, err := c.Render(format)
			if err != nil {
				return nil, err
			}
			f := filepath.Join(dir, c.ID+"."+format)
			if err := os.WriteFile(f, data, 0o644); err != nil {
				return nil, err
			}
			files = append(files, f)
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

func row(r *results.Result) Row {
	out := Row{Name: r.Name, Broker: r.Environment.Broker, Phase: r.Phase, Message: r.Message,
		Sent: fmt.Sprint(r.Sent), Received: fmt.Sprint(r.Received), Lost: optInt(r.Lost),
		ReceivedPerSecond: fmt.Sprintf("%.0f", r.Throughput.ReceivedPerSecond),
		ReceivedBytes:     humanBytes(r.Throughput.ReceivedBytesPerSecond) + "/s",
		CPU:               fmt.Sprintf("%.2f", r.Resources.LoadgenCPUSeconds)}
	for _, c := range r.Caveats {
		out.Caveats = strings.TrimPrefix(out.Caveats+", "+c.Type, ", ")
	}
	if r.Spec != nil {
		out.Protocol = protocolLabel(r)
		out.Payload, out.Publishers, out.Subscribers = r.Spec.Workload.PayloadBytes, r.Spec.Workload.Publishers, r.Spec.Workload.Subscribers
		out.Network = string(r.Spec.Network.Profile)
	}
	if l := r.Latency.EndToEnd; l != nil {
		out.P50, out.P99 = ms(l.P50Micros), ms(l.P99Micros)
	}
	if l := r.Latency.Connect; l != nil {
		out.Connect = ms(l.P50Micros)
	}
	if l := r.Latency.FirstMessage; l != nil {
		out.FirstMessage = ms(l.P50Micros)
	}
	if b := r.Wire.BytesPerMessage; b != nil {
		out.BytesPerMsg = fmt.Sprintf("%.1f", *b)
	}
	return out
}

func optInt(p *int64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprint(*p)
}

func ms(us int64) string { return fmt.Sprintf("%.3f ms", float64(us)/1000) }

func humanBytes(v float64) string {
	switch {
	case v >= 1<<20:
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	}
	return fmt.Sprintf("%.0f B", v)
}

var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
 body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2rem auto; max-width: 1100px; color: #1d2330; padding: 0 1rem; }
 h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #dde2ea; padding-bottom: .3rem; }
 .meta { color: #5b6577; font-size: .9rem; }
 table { border-collapse: collapse; width: 100%; font-size: .88rem; margin-top: .8rem; }
 th, td { text-align: right; padding: .35rem .5rem; border-bottom: 1px solid #eef1f5; white-space: nowrap; }
 th:first-child, td:first-child, th.l, td.l { text-align: left; }
 th { background: #f5f7fa; font-weight: 600; }
 .failed { color: #b3261e; font-weight: 600; }
 .caveat { color: #8a5300; }
 figure { margin: 1.5rem 0; } figure svg { width: 100%; height: auto; max-width: 900px; display: block; }
 figcaption { color: #5b6577; font-size: .88rem; margin-top: .3rem; }
 dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; font-size: .92rem; }
 dl.kv dt { color: #5b6577; } dl.kv dd { margin: 0; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="meta">Generated {{.Generated}} by msgbench. Every figure is defined in docs/results.md.</p>
{{with .Single}}
<h2>Summary</h2>
<dl class="kv">
 <dt>phase</dt><dd{{if ne .Phase "Succeeded"}} class="failed"{{end}}>{{.Phase}}{{if .Message}}: {{.Message}}{{end}}</dd>
 {{with .ProtocolSpoken}}<dt>protocol</dt><dd>{{.}}</dd>{{end}}
 <dt>broker</dt><dd>{{.Environment.Broker}}{{if .Environment.Gateway}}, {{.Environment.Gateway}}{{end}}</dd>
 {{with .NetworkSummary}}<dt>network</dt><dd>{{.}}</dd>{{end}}
 {{with .EnvironmentSummary}}<dt>environment</dt><dd>{{.}}</dd>{{end}}
 <dt>measured</dt><dd>{{printf "%.2f" .MeasuredSeconds}} s from {{.StartTime.Format "2006-01-02 15:04:05 MST"}}</dd>
 <dt>messages</dt><dd>sent {{.Sent}}{{if .Unsent}} ({{.Unsent}} more scheduled but unsent){{end}}, received {{.Received}} of {{.Expected}} expected, {{.Errors}} errors</dd>
 <dt>throughput</dt><dd>{{if .Throughput.OfferedPerSecond}}{{printf "%.0f" .Throughput.OfferedPerSecond}} msg/s offered, {{printf "%.0f" .Throughput.SentPerSecond}} sent, {{end}}{{printf "%.0f" .Throughput.ReceivedPerSecond}} msg/s received, {{printf "%.0f" .Throughput.ReceivedBytesPerSecond}} payload B/s</dd>
 {{range $i, $c := .Caveats}}<dt>{{if eq $i 0}}caveats{{end}}</dt><dd class="caveat">{{$c.Type}}: {{$c.Message}}</dd>
 {{end}}
</dl>
{{end}}
<h2>{{if .Single}}Run{{else}}Runs{{end}}</h2>
<table>
<tr><th>name</th><th class="l">protocol</th><th>payload B</th><th>pub/sub</th><th class="l">network</th><th>sent</th><th>received</th><th>lost</th><th>received/s</th><th>payload/s</th><th>e2e p50</th><th>e2e p99</th><th>connect p50</th><th>first msg p50</th><th>wire B/msg</th><th>CPU-s</th></tr>
{{range .Runs}}<tr><td>{{.Name}}{{if ne .Phase "Succeeded"}} <span class="failed">{{.Phase}}</span>{{end}}{{if .Caveats}} <span class="caveat" title="{{.Caveats}}">caveats</span>{{end}}</td><td class="l">{{.Protocol}}</td><td>{{.Payload}}</td><td>{{.Publishers}}/{{.Subscribers}}</td><td class="l">{{.Network}}</td><td>{{.Sent}}</td><td>{{.Received}}</td><td>{{.Lost}}</td><td>{{.ReceivedPerSecond}}</td><td>{{.ReceivedBytes}}</td><td>{{.P50}}</td><td>{{.P99}}</td><td>{{.Connect}}</td><td>{{.FirstMessage}}</td><td>{{.BytesPerMsg}}</td><td>{{.CPU}}</td></tr>
{{end}}</table>
<h2>Charts</h2>
{{range .Charts}}<figure id="{{.ID}}">{{.SVG}}<figcaption>{{.Title}}. {{.Caption}}</figcaption></figure>
{{else}}<p class="meta">No chart: the results do not vary along any charted axis.</p>{{end}}
</body>
</html>
`))
