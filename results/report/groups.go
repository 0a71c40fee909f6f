package report

import (
	"fmt"
	"math"

	"github.com/msgbench/msgbench/results"
)

// A run with device groups (spec.groups, docs/fleets.md) adds to its report a latency figure per
// kind of group — end-to-end at each subscribing group, publish ack at each publishing group —
// a table of the groups' figures and the matrix of deliveries from each publishing group to each
// subscribing group (Result.Groups, Result.Pairs).

// groupPercentiles are the percentiles a group's LatencySummary records, drawn along the same
// stretched horizontal as the run's latency figure.
var groupPercentiles = []struct {
	q     float64
	label string
	value func(*results.LatencySummary) int64
}{
	{0, "min", func(s *results.LatencySummary) int64 { return s.MinMicros }},
	{50, "50%", func(s *results.LatencySummary) int64 { return s.P50Micros }},
	{90, "90%", func(s *results.LatencySummary) int64 { return s.P90Micros }},
	{95, "95%", func(s *results.LatencySummary) int64 { return s.P95Micros }},
	{99, "99%", func(s *results.LatencySummary) int64 { return s.P99Micros }},
	{99.9, "99.9%", func(s *results.LatencySummary) int64 { return s.P999Micros }},
	{100, "max", func(s *results.LatencySummary) int64 { return s.MaxMicros }},
}

// groupFigures are a run's figures per device group: none without groups.
func groupFigures(r *results.Result) []*Figure {
	var out []*Figure
	if f := groupLatencyFigure(r, "group-end-to-end", "End-to-end latency by percentile, per subscribing group",
		"Each subscribing group's end-to-end latency (publish to delivery at its subscribers, of the messages of every group it receives from) at the percentiles its result records; definitions in docs/results.md.",
		func(g *results.GroupResult) *results.LatencySummary { return g.Latency.EndToEnd }); f != nil {
		out = append(out, f)
	}
	if f := groupLatencyFigure(r, "group-publish-ack", "Publish-ack latency by percentile, per publishing group",
		"Each publishing group's publish-ack latency (publish to the broker's acknowledgement, QoS ≥ 1) at the percentiles its result records; definitions in docs/results.md.",
		func(g *results.GroupResult) *results.LatencySummary { return g.Latency.PublishAck }); f != nil {
		out = append(out, f)
	}
	return out
}

// groupLatencyFigure draws one latency of each group that has it, a line per group; nil when no
// group has it.
func groupLatencyFigure(r *results.Result, id, title, caption string, of func(*results.GroupResult) *results.LatencySummary) *Figure {
	f := &Figure{ID: id, Title: title, XLabel: "percentile", YLabel: "latency (ms)", LogY: true, Caption: caption}
	for i := range r.Groups {
		g := &r.Groups[i]
		s := of(g)
		if s == nil || s.Count == 0 {
			continue
		}
		n := len(f.Series)
		series := Series{Label: fmt.Sprintf("%s (%d %s)", g.Name, clients(g), role(g)), Colour: n, Dash: n}
		for _, p := range groupPercentiles {
			series.Values = append(series.Values, Value{X: tailX(p.q), Y: math.Max(float64(p.value(s))/1000, 0.001), N: 1})
		}
		f.Series = append(f.Series, series)
	}
	if len(f.Series) == 0 {
		return nil
	}
	for _, p := range groupPercentiles {
		if p.q != 95 { // 90 % and 95 % are too close to label both
			f.XTicks = append(f.XTicks, Tick{Value: tailX(p.q), Label: p.label})
		}
	}
	return f
}

func clients(g *results.GroupResult) int { return g.Publishers + g.Subscribers }

func role(g *results.GroupResult) string {
	switch {
	case g.Publishers == 1:
		return "publisher"
	case g.Publishers > 1:
		return "publishers"
	case g.Subscribers == 1:
		return "subscriber"
	}
	return "subscribers"
}

// GroupRow is one device group in the report's table of groups.
type GroupRow struct {
	Name, Clients, Protocol                  string
	Sent, Received, Expected, Lost, Dup      string
	E2EP50, E2EP99, AckP99, ConnP50, ConnP99 string
	// Retained is the retained messages its new subscriptions brought of those expected ("100 of
	// 100"), "" when none were.
	Retained string
	Lossy    bool
	// Answered is the answers to its requests of those expected ("250 of 250") and RTTP50/99 their
	// round trips, "" when it asks none.
	Answered, RTTP50, RTTP99 string
	AnswersLost              bool
}

// anyAsking reports whether a group of rows asks: the table then has the answers' columns.
func anyAsking(rows []GroupRow) bool {
	for _, r := range rows {
		if r.Answered != "" {
			return true
		}
	}
	return false
}

// anyRetained reports whether a group of rows has retained figures: the table then has their
// column.
func anyRetained(rows []GroupRow) bool {
	for _, r := range rows {
		if r.Retained != "" {
			return true
		}
	}
	return false
}

// PairMatrix is the deliveries from each publishing group (a row) to each subscribing group (a
// column).
type PairMatrix struct {
	To   []string
	Rows []MatrixRow
}

// MatrixRow is one publishing group's deliveries to each subscribing group.
type MatrixRow struct {
	From  string
	Cells []MatrixCell
}

// MatrixCell is the delivery of one pair of groups; Pair is false when no subscription of the
// subscribing group takes the publishing group's messages.
type MatrixCell struct {
	Pair                                 bool
	Expected, Received, Lost, Duplicates int64
	OutOfOrder                           int64
	P50, P99                             string
}

// groupRows are the table of a run's device groups: nil without groups.
func groupRows(r *results.Result) []GroupRow {
	var out []GroupRow
	for i := range r.Groups {
		g := &r.Groups[i]
		row := GroupRow{Name: g.Name, Clients: fmt.Sprintf("%d %s", clients(g), role(g)), Protocol: fmt.Sprintf("%s QoS %d", g.Protocol, g.QoS)}
		if g.Publishers > 0 {
			row.Sent = fmt.Sprint(g.Sent)
			if g.Unsent > 0 {
				row.Sent += fmt.Sprintf(" (+%d unsent)", g.Unsent)
			}
			row.AckP99 = latencyCell(g.Latency.PublishAck, p99)
			if q := g.Requests; q != nil {
				row.Answered, row.AnswersLost = fmt.Sprintf("%d of %d", q.Answered, q.Expected), q.Lost > 0
				row.RTTP50, row.RTTP99 = latencyCell(q.RoundTrip, p50), latencyCell(q.RoundTrip, p99)
			}
		}
		if g.Subscribers > 0 {
			row.Received, row.Expected = fmt.Sprint(g.Received), fmt.Sprint(g.Expected)
			row.Lost, row.Dup = optCount(g.Lost), optCount(g.Duplicates)
			row.Lossy = g.Lost != nil && *g.Lost > 0
			row.E2EP50, row.E2EP99 = latencyCell(g.Latency.EndToEnd, p50), latencyCell(g.Latency.EndToEnd, p99)
			if rt := g.Retained; rt != nil {
				row.Retained = fmt.Sprintf("%d of %d", rt.Received, rt.Expected)
			}
		}
		row.ConnP50, row.ConnP99 = latencyCell(g.Latency.Connect, p50), latencyCell(g.Latency.Connect, p99)
		out = append(out, row)
	}
	return out
}

// pairMatrix is the matrix of a run's pairs of groups: nil without groups.
func pairMatrix(r *results.Result) *PairMatrix {
	if len(r.Groups) == 0 {
		return nil
	}
	m := &PairMatrix{}
	var from []string
	for _, g := range r.Groups {
		if g.Publishers > 0 {
			from = append(from, g.Name)
		}
		if g.Subscribers > 0 {
			m.To = append(m.To, g.Name)
		}
	}
	if len(from) == 0 || len(m.To) == 0 {
		return nil
	}
	for _, f := range from {
		row := MatrixRow{From: f}
		for _, t := range m.To {
			var c MatrixCell
			for _, p := range r.Pairs {
				if p.From == f && p.To == t {
					c = MatrixCell{Pair: true, Expected: p.Expected, Received: p.Received, Lost: p.Lost, Duplicates: p.Duplicates, OutOfOrder: p.OutOfOrder,
						P50: latencyCell(p.EndToEnd, p50), P99: latencyCell(p.EndToEnd, p99)}
				}
			}
			row.Cells = append(row.Cells, c)
		}
		m.Rows = append(m.Rows, row)
	}
	return m
}

func p50(s *results.LatencySummary) int64 { return s.P50Micros }
func p99(s *results.LatencySummary) int64 { return s.P99Micros }

// latencyCell is a latency percentile as the report's tables write it ("0.333 ms"), "" when
// not measured.
func latencyCell(s *results.LatencySummary, at func(*results.LatencySummary) int64) string {
	if s == nil || s.Count == 0 {
		return ""
	}
	return FormatValue("latency.endToEnd.p50", float64(at(s)))
}

func optCount(p *int64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprint(*p)
}
