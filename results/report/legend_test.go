package report

import (
	"fmt"
	"html"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"

	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/suite"
)

// emqxLike is the EMQX study's suite in small: protocol × one-way delay, and two include entries
// (one per protocol) at 5ms with more clients, a larger payload, a higher rate and a lossy link.
func emqxLike() *suite.Document {
	doc := synthetic([]axis{{[]string{"protocol"}, []string{"mqtt-quic", "mqtt"}}, {[]string{"network.delay"}, []string{"500us", "5ms", "15ms"}}}, 1,
		func(v map[string]string, rep int) *results.Result { return measured(100, 6400, 5000, 9000, 200) })
	for _, proto := range []string{"mqtt-quic", "mqtt"} {
		r := measured(2000, 512000, 20000, 30000, 800)
		r.Name = "s-lossy-" + proto + "-r1"
		r.Spec.Workload.Publishers, r.Spec.Workload.Subscribers, r.Spec.Workload.PayloadBytes = 20, 20, 256
		doc.Points = append(doc.Points, suite.PointResult{Name: "lossy-" + proto, Values: map[string]string{"protocol": proto, "network.delay": "5ms",
			"workload.publishers": "20", "workload.subscribers": "20", "workload.payloadBytes": "256", "workload.rate": "2000",
			"workload.warmup": "5s", "network.lossPercent": "10", "network.reorderPercent": "20"},
			Runs: []suite.RunEntry{{Repetition: 1, RunOutcome: suite.RunOutcome{Name: r.Name, Phase: r.Phase, Result: r}}}})
	}
	return doc
}

// TestLegendNamesWhatDiffers: the series of include entries' points are named by what they set,
// in words ("20 publishers, …, 10% loss"), not "(+N fields)", and the matrix's points by their
// own values of those fields; a long entry wraps, and the figure is wide and tall enough for its
// legend.
func TestLegendNamesWhatDiffers(t *testing.T) {
	d := FromSuite(emqxLike())
	specs := Plan(d)
	if len(specs) == 0 {
		t.Fatal("no figure planned")
	}
	f, err := Build(d, specs[0])
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, s := range f.Series {
		labels = append(labels, s.Label)
		if strings.Contains(s.Label, "fields)") {
			t.Errorf("legend %q counts fields instead of naming them", s.Label)
		}
	}
	for _, want := range []string{
		"mqtt-quic, 20 publishers, 20 subscribers, 256 B payload, 2000 msg/s, 10% loss, 20% reordered, 5s warm-up",
		"mqtt, 1 publisher, 1 subscriber, 64 B payload, closed loop, no loss, no reordering, no warm-up",
	} {
		found := false
		for _, l := range labels {
			found = found || strings.HasPrefix(l, want)
		}
		if !found {
			t.Errorf("no series named %q…; series: %q", want, labels)
		}
	}
	for _, l := range labels {
		for _, line := range strings.Split(wrapLabel(l), "\n") {
			if len([]rune(line)) > legendLine {
				t.Errorf("legend line %q is longer than %d characters", line, legendLine)
			}
		}
	}
	fitsItsLegend(t, f)
	// Many long entries: the figure grows taller rather than cut the last ones off.
	tall := *f
	tall.Series = nil
	for i := range 10 {
		s := f.Series[i%len(f.Series)]
		s.Label = fmt.Sprintf("%d: %s", i, s.Label)
		tall.Series = append(tall.Series, s)
	}
	fitsItsLegend(t, &tall)
}

// fitsItsLegend: every line of the figure's legend is drawn whole inside the SVG, with a tenth
// of its width to spare (a browser without Liberation Sans draws a wider sans-serif).
func fitsItsLegend(t *testing.T, f *Figure) {
	t.Helper()
	svg, err := f.Render("svg")
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("LEGEND_PNG") != "" {
		png, _ := f.Render("png")
		_ = os.WriteFile(os.Getenv("LEGEND_PNG"), png, 0o644)
	}
	size := regexp.MustCompile(`<svg width="([0-9.]+)pt" height="([0-9.]+)pt"`).FindStringSubmatch(string(svg))
	if size == nil {
		t.Fatal("no SVG size")
	}
	w, _ := strconv.ParseFloat(size[1], 64)
	h, _ := strconv.ParseFloat(size[2], 64)
	lines := map[string]bool{}
	for _, s := range f.Series {
		for _, l := range strings.Split(wrapLabel(s.Label), "\n") {
			lines[l] = true
		}
	}
	sty := text.Style{Font: font.From(plot.DefaultFont, 10), Handler: plot.DefaultTextHandler}
	found := 0
	for _, m := range regexp.MustCompile(`<text x="([-0-9.]+)" y="([-0-9.]+)"[^>]*>([^<]*)</text>`).FindAllStringSubmatch(string(svg), -1) {
		line := html.UnescapeString(m[3])
		if !lines[line] {
			continue
		}
		found++
		x, _ := strconv.ParseFloat(m[1], 64)
		y, _ := strconv.ParseFloat(m[2], 64)
		if width := float64(sty.Width(line).Points()); x+1.08*width > w {
			t.Errorf("legend line %q ends at %.1f pt (%.1f with a wider font), past the figure's %.1f pt", line, x+float64(width), x+1.08*width, w)
		}
		if -y < 0 || -y > h {
			t.Errorf("legend line %q at height %.1f pt, outside the figure's %.1f pt", line, -y, h)
		}
	}
	if found < len(lines) {
		t.Errorf("%d of the legend's %d lines drawn", found, len(lines))
	}
}
