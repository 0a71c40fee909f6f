package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Formats a figure renders to.
var Formats = []string{"svg", "png", "pdf"}

// One font family everywhere: Liberation Sans (metrically Arial) in PNG, SVG and PDF, and the
// page's CSS asks for it first. gonum/plot's default is the serif.
func init() {
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
	plotter.DefaultFont = plot.DefaultFont
}

// FontFamily is the CSS font stack of the page and of the SVG text in it.
const FontFamily = `"Liberation Sans", Arial, Helvetica, sans-serif`

// Palette is Okabe and Ito's colour-blind-safe set (Color Universal Design), the yellow last as it
// is faint on white.
var Palette = []color.Color{
	color.RGBA{0x00, 0x72, 0xB2, 0xff}, // blue
	color.RGBA{0xE6, 0x9F, 0x00, 0xff}, // orange
	color.RGBA{0x00, 0x9E, 0x73, 0xff}, // bluish green
	color.RGBA{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	color.RGBA{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	color.RGBA{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	color.RGBA{0x00, 0x00, 0x00, 0xff}, // black
	color.RGBA{0xF0, 0xE4, 0x42, 0xff}, // yellow
}

var dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(1.5), vg.Points(2.5)}, {vg.Points(6), vg.Points(2.5), vg.Points(1.5), vg.Points(2.5)}}

var glyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}

func colourOf(i int) color.Color { return Palette[i%len(Palette)] }

// Size of the plotting area; the legend is added to the right of it, so it never covers data.
const (
	plotWidth  = 6.5 * vg.Inch
	plotHeight = 3.8 * vg.Inch
	margin     = 0.2 * vg.Inch
	// legendTop is the room above the legend: level with the plotting area, below the title.
	legendTop = 0.35 * vg.Inch
	// legendLine is the most characters a line of a legend entry takes before it wraps.
	legendLine = 36
)

// wrapLabel breaks a legend entry longer than legendLine into lines, after a comma where it can
// ("mqtt-quic, 20 publishers, 20 subscribers, …"), else at a space.
func wrapLabel(s string) string {
	var lines []string
	for len([]rune(s)) > legendLine {
		r := []rune(s)
		cut := -1
		for i := legendLine; i > legendLine/3 && cut < 0; i-- {
			if r[i] == ' ' && r[i-1] == ',' {
				cut = i
			}
		}
		for i := legendLine; i > legendLine/3 && cut < 0; i-- {
			if r[i] == ' ' {
				cut = i
			}
		}
		if cut < 0 {
			break // one long word: left whole
		}
		lines = append(lines, string(r[:cut]))
		s = string(r[cut+1:])
	}
	return strings.Join(append(lines, s), "\n")
}

// Render draws the figure as "svg", "png" or "pdf".
func (f *Figure) Render(format string) ([]byte, error) {
	if len(f.Panels) > 0 {
		return f.renderPanels(format)
	}
	p, legend, err := f.plot()
	if err != nil {
		return nil, err
	}
	legendW, legendH := vg.Length(0), vg.Length(0)
	if r := legend.Rectangle(draw.Canvas{}); r.Max.X-r.Min.X > 0 {
		// A tenth more than Liberation Sans takes: a browser without it draws the SVG's text in
		// a wider sans-serif, which must still end inside the figure.
		legendW, legendH = (r.Max.X-r.Min.X)*1.1+margin, r.Max.Y-r.Min.Y
	}
	// A legend taller than the plot makes the figure taller, rather than run off its bottom.
	w, h := plotWidth+legendW+2*margin, max(plotHeight, legendH+legendTop)+2*margin
	canvas, dc, err := newCanvas(format, w, h)
	if err != nil {
		return nil, err
	}
	// The right margin keeps the last tick label ("max") whole.
	p.Draw(draw.Crop(dc, margin, -(legendW + margin), margin, -margin))
	if legendW > 0 {
		legend.Draw(draw.Crop(dc, w-legendW, -margin, margin, -margin-legendTop))
	}
	return encode(canvas, format)
}

// newCanvas is a w × h canvas for format, white: a PNG pasted on a dark slide stays readable.
func newCanvas(format string, w, h vg.Length) (vg.CanvasWriterTo, draw.Canvas, error) {
	var canvas vg.CanvasWriterTo
	switch format {
	case "svg":
		canvas = vgsvg.New(w, h)
	case "png":
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(150))}
	case "pdf":
		canvas = vgpdf.New(w, h)
	default:
		return nil, draw.Canvas{}, fmt.Errorf("format %q: one of %s", format, strings.Join(Formats, ", "))
	}
	dc := draw.New(canvas)
	dc.SetColor(color.White)
	dc.Fill(dc.Path())
	return canvas, dc, nil
}

// encode writes the drawn canvas out, the SVG's text asking for the page's font stack.
func encode(canvas vg.CanvasWriterTo, format string) ([]byte, error) {
	var b bytes.Buffer
	if _, err := canvas.WriteTo(&b); err != nil {
		return nil, err
	}
	out := b.Bytes()
	if format == "svg" {
		out = bytes.ReplaceAll(out, []byte("font-family:Liberation Sans;"), []byte("font-family:"+strings.ReplaceAll(FontFamily, `"`, "'")+";"))
	}
	return out, nil
}

// panelHeight is the height of one of a figure's panels: three make a page-wide figure;
// panelGap is the room between two.
const (
	panelHeight = 2.3 * vg.Inch
	panelGap    = 0.12 * vg.Inch
)

// renderPanels draws a figure's panels one above the other: their plotting areas aligned and
// of one height, one horizontal (the union of their ranges, its tick labels and title under
// the bottom panel only), the figure's title over the top one and each panel's legend beside
// it, level with its plotting area.
func (f *Figure) renderPanels(format string) ([]byte, error) {
	n := len(f.Panels)
	plots := make([][]*plot.Plot, n)
	legends := make([]*plot.Legend, n)
	legendW, tileH := vg.Length(0), panelHeight
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for i, panel := range f.Panels {
		pf := *panel
		pf.Title, pf.XLabel = "", ""
		if i == n-1 {
			pf.XLabel = f.XLabel
		}
		p, legend, err := pf.plot()
		if err != nil {
			return nil, err
		}
		xmin, xmax = math.Min(xmin, p.X.Min), math.Max(xmax, p.X.Max)
		if i < n-1 {
			p.X.Tick.Marker = unlabelled{p.X.Tick.Marker}
		}
		if r := legend.Rectangle(draw.Canvas{}); r.Max.X-r.Min.X > 0 {
			legendW = max(legendW, (r.Max.X-r.Min.X)*1.1+margin)
			tileH = max(tileH, r.Max.Y-r.Min.Y+legendTop)
		}
		plots[i], legends[i] = []*plot.Plot{p}, legend
	}
	switch { // a little room either side, so the first and last markers are not on the frame
	case xmax > xmin:
		pad := (xmax - xmin) * 0.04
		xmin, xmax = xmin-pad, xmax+pad
	case xmax == xmin: // one value: in the middle of a range about it
		pad := math.Max(math.Abs(xmin)*0.2, 1)
		xmin, xmax = xmin-pad, xmax+pad
	}
	for _, row := range plots {
		if xmax >= xmin {
			row[0].X.Min, row[0].X.Max = xmin, xmax
		}
	}
	w, h := plotWidth+legendW+2*margin, vg.Length(n)*tileH+legendTop+2*margin
	canvas, dc, err := newCanvas(format, w, h)
	if err != nil {
		return nil, err
	}
	// The title over the panels, as a plot's over its own: the panels keep one spacing.
	title := plots[0][0].Title
	title.Text = f.Title
	below := draw.Crop(dc, margin, -(legendW + margin), margin, -margin)
	if f.Title != "" {
		title.TextStyle.XAlign = draw.XCenter
		below.FillText(title.TextStyle, vg.Point{X: below.Center().X, Y: below.Max.Y + title.TextStyle.FontExtents().Descent}, title.Text)
		below.Max.Y -= title.TextStyle.Rectangle(title.Text).Size().Y + title.Padding
	}
	// Each panel's room around its plotting area (axes, tick labels), as drawn in a tile: the
	// plotting areas get one width and one height, aligned, the panels panelGap apart.
	type room struct{ left, right, bottom, top vg.Length }
	rooms := make([]room, n)
	var left, right, spare vg.Length
	for i, row := range plots {
		tile := below
		tile.Min.Y = tile.Max.Y - tileH
		data := row[0].DataCanvas(tile)
		rooms[i] = room{data.Min.X - tile.Min.X, tile.Max.X - data.Max.X, data.Min.Y - tile.Min.Y, tile.Max.Y - data.Max.Y}
		left, right = max(left, rooms[i].left), max(right, rooms[i].right)
		spare += rooms[i].bottom + rooms[i].top
	}
	height := (below.Max.Y - below.Min.Y - spare - vg.Length(n-1)*panelGap) / vg.Length(n)
	top := below.Max.Y
	for i, row := range plots {
		r := rooms[i]
		area := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: below.Min.X + left - r.left, Y: top - r.top - height - r.bottom},
			Max: vg.Point{X: below.Max.X - right + r.right, Y: top}}}
		row[0].Draw(area)
		if legendW > 0 {
			data := row[0].DataCanvas(area)
			legends[i].Draw(draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: w - legendW, Y: data.Min.Y}, Max: vg.Point{X: w - margin, Y: data.Max.Y}}})
		}
		top = area.Min.Y - panelGap
	}
	return encode(canvas, format)
}

// unlabelled are a ticker's ticks with blank labels: the panels above the bottom one share its
// horizontal. Blank, not empty: a tick without a label is a minor one, without a grid line.
type unlabelled struct{ plot.Ticker }

func (u unlabelled) Ticks(lo, hi float64) []plot.Tick {
	ts := u.Ticker.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = " "
		}
	}
	return ts
}

// plot builds the gonum plot and, apart from it, its legend: drawn beside the plot, never on it.
func (f *Figure) plot() (*plot.Plot, *plot.Legend, error) {
	p := plot.New()
	p.Title.Text = f.Title
	p.Title.TextStyle.Font.Size = vg.Points(12)
	p.X.Label.TextStyle.Font.Size, p.Y.Label.TextStyle.Font.Size = vg.Points(11), vg.Points(11)
	p.X.Tick.Label.Font.Size, p.Y.Tick.Label.Font.Size = vg.Points(10), vg.Points(10)
	legend := plot.NewLegend()
	legend.TextStyle.Font.Size = vg.Points(10)
	legend.Left, legend.Top, legend.Padding = true, true, vg.Points(3)
	p.X.Label.Text, p.Y.Label.Text = f.XLabel, f.YLabel
	if len(f.Bands) > 0 { // under the grid and the data
		p.Add(bands(f.Bands))
	}
	p.Add(plotter.NewGrid())
	p.Y.Tick.Marker = siTicks{}
	p.X.Tick.Marker = siTicks{}
	var ymax float64
	for _, s := range f.Series {
		for _, v := range s.Values {
			ymax = math.Max(ymax, v.Y+v.CI95)
		}
	}
	if f.Bars {
		p.Add(&groupedBars{fig: f})
		ticks := make([]plot.Tick, len(f.Categories))
		for i, c := range f.Categories {
			ticks[i] = plot.Tick{Value: float64(i), Label: c}
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		p.X.Min, p.X.Max = -0.5, float64(len(f.Categories))-0.5
		if long(f.Categories) {
			p.X.Tick.Label.Rotation = math.Pi / 6
			p.X.Tick.Label.XAlign = draw.XRight
			p.X.Tick.Label.YAlign = draw.YTop
		}
		if len(f.Series) > 1 {
			for _, s := range f.Series {
				legend.Add(wrapLabel(s.Label), swatch{colourOf(s.Colour)})
			}
		}
	} else {
		for _, s := range f.Series {
			xys := make(plotter.XYs, 0, len(s.Values)+1)
			if f.Steps && len(s.Values) > 1 {
				// A level is drawn over the interval ending at its X: the first needs where its
				// interval began, or the first interval would not show.
				v := s.Values[0]
				xys = append(xys, plotter.XY{X: v.X - (s.Values[1].X - v.X), Y: v.Y})
			}
			for _, v := range s.Values {
				xys = append(xys, plotter.XY{X: v.X, Y: v.Y})
			}
			line, points, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, nil, err
			}
			line.Color, line.Width, line.Dashes = colourOf(s.Colour), vg.Points(1.5), dashes[s.Dash%len(dashes)]
			if f.Steps {
				line.StepStyle = plotter.PreStep
			}
			points.Color, points.Shape, points.Radius = colourOf(s.Colour), glyphs[s.Dash%len(glyphs)], vg.Points(3)
			if f.Steps || len(s.Values) > 60 { // a timeline: markers would blot the line
				points = nil
			}
			if s.Reference {
				line.Color, line.Width, line.Dashes, points = referenceColour, vg.Points(1), []vg.Length{vg.Points(4), vg.Points(3)}, nil
			}
			switch judged, err := verdictMarks(s); {
			case err != nil:
				return nil, nil, err
			case judged != nil:
				// A search's values: filled where they passed, hollow where they failed.
				if points != nil { // the legend's marker
					points.Shape = passGlyphs[s.Dash%len(passGlyphs)]
				}
				p.Add(line)
				p.Add(judged...)
			case points != nil:
				p.Add(line, points)
			default:
				p.Add(line)
			}
			if errs := errorBars(s); errs != nil {
				eb, err := plotter.NewYErrorBars(errs)
				if err != nil {
					return nil, nil, err
				}
				eb.Color, eb.Width = colourOf(s.Colour), vg.Points(1)
				p.Add(eb)
			}
			if len(f.Series) > 1 || s.Label != f.YLabel {
				if points != nil {
					legend.Add(wrapLabel(s.Label), line, points)
				} else {
					legend.Add(wrapLabel(s.Label), line)
				}
			}
		}
		if len(f.Marks) > 0 {
			p.Add(verticals{ticks: f.Marks, style: draw.LineStyle{Color: color.Gray{Y: 90}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(1), vg.Points(3)}}})
		}
		if len(f.Lines) > 0 {
			p.Add(verticals{ticks: f.Lines, style: draw.LineStyle{Color: color.Black, Width: vg.Points(1.5)}})
		}
		if len(f.Unmeasured) > 0 {
			p.Add(crosses(f.Unmeasured))
		}
		if !f.noVerdictKey {
			verdictKey(f, &legend)
		}
		for _, b := range f.Bands {
			if b.Label != "" {
				legend.Add(wrapLabel(b.Label), swatch{bandColour})
			}
		}
		if f.LogX {
			p.X.Scale = plot.LogScale{}
			p.X.Tick.Marker = logTicks{}
		}
		if len(f.XTicks) > 0 {
			ticks := make([]plot.Tick, len(f.XTicks))
			for i, t := range f.XTicks {
				ticks[i] = plot.Tick{Value: t.Value, Label: t.Label}
			}
			p.X.Tick.Marker = plot.ConstantTicks(ticks)
			// A little room either side, so the first and last markers are not on the frame.
			lo, hi := f.XTicks[0].Value, f.XTicks[len(f.XTicks)-1].Value
			if f.LogX {
				p.X.Min, p.X.Max = lo/math.Pow(hi/lo, 0.04), hi*math.Pow(hi/lo, 0.04)
			} else if hi > lo {
				p.X.Min, p.X.Max = lo-(hi-lo)*0.04, hi+(hi-lo)*0.04
			}
		}
	}
	if f.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
	} else {
		// Counts, rates, bytes and latencies start at zero: a steady 2,000 msg/s must not look
		// like a spike because the axis spans 1,999 to 2,001. Headroom keeps bars and error
		// bars inside the frame.
		p.Y.Min = 0
		if ymax > 0 {
			p.Y.Max = ymax * 1.08
		} else {
			p.Y.Max = 1
		}
	}
	return p, &legend, nil
}

func long(labels []string) bool {
	total := 0
	for _, l := range labels {
		total += len(l)
	}
	return total > 70
}

// errorBars are a series' 95 % CIs, nil when no value has one.
func errorBars(s Series) interface {
	plotter.XYer
	plotter.YErrorer
} {
	var out xyErrs
	some := false
	for _, v := range s.Values {
		out = append(out, v)
		some = some || (v.N >= 2 && v.CI95 > 0)
	}
	if !some {
		return nil
	}
	return out
}

type xyErrs []Value

func (e xyErrs) Len() int                    { return len(e) }
func (e xyErrs) XY(i int) (float64, float64) { return e[i].X, e[i].Y }
func (e xyErrs) YError(i int) (float64, float64) {
	if e[i].N < 2 {
		return 0, 0
	}
	return e[i].CI95, e[i].CI95
}

// siTicks are four to eight labelled ticks at round values (1, 2, 2.5 or 5 × 10ⁿ apart),
// labelled with SI prefixes: "28M", not "2.8e+07".
type siTicks struct{}

func (siTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: si(lo)}}
	}
	step := niceStep((hi - lo) / 6)
	var ts []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		ts = append(ts, plot.Tick{Value: v, Label: si(v)})
	}
	return ts
}

// logTicks label a log axis at the powers of ten, and at 2 and 5 times them too when it spans
// less than two decades: a tail within one decade would otherwise carry one label, or none.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || hi/lo >= 100 {
		return plot.LogTicks{Prec: -1}.Ticks(lo, hi)
	}
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		for m := 1.0; m < 10; m++ {
			v := m * math.Pow(10, e)
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = si(roundSig(v, 6))
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// niceStep is the round number (1, 2, 2.5 or 5 × 10ⁿ) nearest above raw.
func niceStep(raw float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

// groupedBars draws a figure's bars: per category, one bar per series side by side, each with its
// 95 % CI. Drawn in data coordinates, so the error bars sit on their bars at any size.
type groupedBars struct{ fig *Figure }

func (g *groupedBars) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	n := len(g.fig.Series)
	width := 0.8 / float64(n)
	// One bar per category: its value written above it, as a table would (zeros too: a bar
	// that is not there must not look like one forgotten).
	label := n == 1 && len(g.fig.Categories) <= 16
	sty := plt.Y.Tick.Label
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
	for i, s := range g.fig.Series {
		for _, v := range s.Values {
			x0 := v.X - 0.4 + float64(i)*width
			x1 := x0 + width*0.92
			rect := vg.Rectangle{Min: vg.Point{X: trX(x0), Y: trY(0)}, Max: vg.Point{X: trX(x1), Y: trY(v.Y)}}
			c.SetColor(colourOf(s.Colour))
			c.Fill(rect.Path())
			if label {
				c.FillText(sty, vg.Point{X: trX((x0 + x1) / 2), Y: trY(v.Y+v.CI95) + vg.Points(2)}, si(roundSig(v.Y, 4)))
			}
			if v.N >= 2 && v.CI95 > 0 {
				mid := trX((x0 + x1) / 2)
				sty := draw.LineStyle{Color: color.Black, Width: vg.Points(1)}
				c.StrokeLine2(sty, mid, trY(v.Y-v.CI95), mid, trY(v.Y+v.CI95))
				cap := (trX(x1) - trX(x0)) / 4
				c.StrokeLine2(sty, mid-cap, trY(v.Y+v.CI95), mid+cap, trY(v.Y+v.CI95))
				c.StrokeLine2(sty, mid-cap, trY(v.Y-v.CI95), mid+cap, trY(v.Y-v.CI95))
			}
		}
	}
}

func (g *groupedBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = -0.5, float64(len(g.fig.Categories))-0.5
	for _, s := range g.fig.Series {
		for _, v := range s.Values {
			ymax = math.Max(ymax, v.Y+v.CI95)
		}
	}
	return xmin, xmax, 0, ymax
}

// swatch is a bar series' legend entry.
type swatch struct{ c color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	c.SetColor(s.c)
	c.Fill(c.Path())
}

// A capacity search's marks (capacity.go): the bracket shaded, the capacity a solid line, each
// value's verdict in its marker.
var (
	bandColour      = color.Gray{Y: 0xE4}
	referenceColour = color.Gray{Y: 0x70}
	// passGlyphs are filled, failGlyphs the same shapes hollow, by a series' Dash.
	passGlyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.PyramidGlyph{}, draw.BoxGlyph{}}
	failGlyphs = []draw.GlyphDrawer{hollow{draw.CircleGlyph{}}, hollow{draw.PyramidGlyph{}}, hollow{draw.BoxGlyph{}}}
)

// hollow draws a filled shape with a white inside, a rim as wide as a series' line, so the line
// through a failed value does not make its marker look filled.
type hollow struct{ shape draw.GlyphDrawer }

func (h hollow) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	h.shape.DrawGlyph(c, sty, pt)
	inner := sty
	inner.Radius = sty.Radius - vg.Points(1.4)
	c.SetColor(color.White)
	h.shape.DrawGlyph(c, inner, pt)
}

// verdictMarks are a series' markers when a search judged its values: one scatter of the
// values that passed (filled), one of those that failed (hollow); nil when none is judged.
func verdictMarks(s Series) ([]plot.Plotter, error) {
	var pass, fail plotter.XYs
	for _, v := range s.Values {
		switch v.Verdict {
		case VerdictPassed:
			pass = append(pass, plotter.XY{X: v.X, Y: v.Y})
		case VerdictFailed:
			fail = append(fail, plotter.XY{X: v.X, Y: v.Y})
		}
	}
	if len(pass)+len(fail) == 0 {
		return nil, nil
	}
	var out []plot.Plotter
	for _, m := range []struct {
		xys   plotter.XYs
		glyph []draw.GlyphDrawer
	}{{pass, passGlyphs}, {fail, failGlyphs}} {
		if len(m.xys) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(m.xys)
		if err != nil {
			return nil, err
		}
		sc.Color, sc.Shape, sc.Radius = colourOf(s.Colour), m.glyph[s.Dash%len(m.glyph)], vg.Points(3.5)
		out = append(out, sc)
	}
	return out, nil
}

// verdictKey adds to the legend what the figure's markers of a search mean, those it has.
func verdictKey(f *Figure, legend *plot.Legend) {
	passed, failed := false, false
	for _, s := range f.Series {
		for _, v := range s.Values {
			passed, failed = passed || v.Verdict == VerdictPassed, failed || v.Verdict == VerdictFailed
		}
	}
	key := func(label string, g draw.GlyphDrawer) {
		legend.Add(label, &plotter.Scatter{GlyphStyle: draw.GlyphStyle{Color: color.Black, Shape: g, Radius: vg.Points(3.5)}})
	}
	if passed {
		key("passed", passGlyphs[0])
	}
	if failed {
		key("failed", failGlyphs[0])
	}
	if len(f.Unmeasured) > 0 {
		key("failed, nothing measured", draw.CrossGlyph{})
	}
}

// verticals are vertical lines at values of the horizontal, over the plot's full height on any
// vertical scale, each labelled at its top: right of the line, or left of it in the right
// third, so the label stays inside the plot.
type verticals struct {
	ticks []Tick
	style draw.LineStyle
}

func (v verticals) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, _ := plt.Transforms(&c)
	sty := plt.Y.Tick.Label
	sty.Font.Size = vg.Points(9)
	sty.YAlign = draw.YTop
	for _, t := range v.ticks {
		x := trX(t.Value)
		c.StrokeLine2(v.style, x, c.Min.Y, x, c.Max.Y)
		if t.Label == "" {
			continue
		}
		at := vg.Point{X: x + vg.Points(3), Y: c.Max.Y - vg.Points(2)}
		sty.XAlign = draw.XLeft
		if x > c.Min.X+(c.Max.X-c.Min.X)*2/3 {
			at.X, sty.XAlign = x-vg.Points(3), draw.XRight
		}
		c.FillText(sty, at, t.Label)
	}
}

// DataRange takes in the lines' values along the horizontal only.
func (v verticals) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for _, t := range v.ticks {
		xmin, xmax = math.Min(xmin, t.Value), math.Max(xmax, t.Value)
	}
	return xmin, xmax, math.Inf(1), math.Inf(-1)
}

// bands shade stretches of the horizontal over the plot's full height.
type bands []Band

func (b bands) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, _ := plt.Transforms(&c)
	c.SetColor(bandColour)
	for _, x := range b {
		r := vg.Rectangle{Min: vg.Point{X: trX(x.Lo), Y: c.Min.Y}, Max: vg.Point{X: trX(x.Hi), Y: c.Max.Y}}
		c.Fill(r.Path())
	}
}

func (b bands) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for _, x := range b {
		xmin, xmax = math.Min(xmin, x.Lo), math.Max(xmax, x.Hi)
	}
	return xmin, xmax, math.Inf(1), math.Inf(-1)
}

// crosses mark values on the horizontal axis, at the bottom of the plot on any vertical scale:
// a search's values that failed without measuring anything.
type crosses []float64

func (x crosses) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, _ := plt.Transforms(&c)
	sty := draw.GlyphStyle{Color: color.Black, Shape: draw.CrossGlyph{}, Radius: vg.Points(3.5)}
	for _, v := range x {
		c.DrawGlyph(sty, vg.Point{X: trX(v), Y: c.Min.Y})
	}
}

func (x crosses) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for _, v := range x {
		xmin, xmax = math.Min(xmin, v), math.Max(xmax, v)
	}
	return xmin, xmax, math.Inf(1), math.Inf(-1)
}
