package figures

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated figure tables in docs/objectives.md")

const (
	docPath  = "../../docs/objectives.md"
	docBegin = "<!-- figures: generated from results/figures by `go test ./results/figures -run TestDocTables -update`; do not edit by hand -->"
	docEnd   = "<!-- end of figures -->"

	groupDocBegin = "<!-- group figures: generated from results/figures by `go test ./results/figures -run TestDocTables -update`; do not edit by hand -->"
	groupDocEnd   = "<!-- end of group figures -->"
)

// docTables writes the registry as docs/objectives.md shows it: one row per figure, except
// the latency figures, one row per histogram (their statistics share a definition).
func docTables() string {
	return table(all, "", func(h string) (string, string) { return latencies[h].def, latencies[h].absent })
}

// groupDocTables writes the figures of a device group and of a pair of groups.
func groupDocTables() string {
	return table(groupFigures, GroupPrefix+"<group>.", func(h string) (string, string) {
		return latencies[h].def + ", " + groupLatencyOf[h], groupLatencyAbsent[h]
	}) + "\n" + table(pairFigures, PairPrefix+"<from>.<to>.", nil)
}

// table writes fs with their names after prefix, a latency histogram's statistics on one row:
// latency(h) gives its definition and when it is absent (nil: pairFigures' endToEnd, which has
// no histogram of the result).
func table(fs []Figure, prefix string, latency func(h string) (def, absent string)) string {
	var b strings.Builder
	b.WriteString("| figure | unit | definition | absent when |\n| --- | --- | --- | --- |\n")
	var stats []string
	for _, s := range latencyStats {
		stats = append(stats, s.name)
	}
	statList := strings.Join(stats, ",")
	done := map[string]bool{}
	for _, f := range fs {
		if f.Kind != Duration {
			fmt.Fprintf(&b, "| `%s%s` | %s | %s | %s |\n", prefix, f.Name, f.Kind.Unit(), f.Definition, dash(f.AbsentWhen))
			continue
		}
		path := f.Name[:strings.LastIndex(f.Name, ".")] // latency.endToEnd, endToEnd
		if done[path] {
			continue
		}
		done[path] = true
		def, absent := "the end-to-end latency of the pair's messages", f.AbsentWhen
		if latency != nil {
			def, absent = latency(strings.TrimPrefix(path, "latency."))
		}
		fmt.Fprintf(&b, "| `%s%s.{%s}` | µs | %s of the %s | %s |\n", prefix, path, statList, strings.Join(stats, ", "), strings.TrimPrefix(def, "the "), dash(absent))
	}
	return b.String()
}

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// TestDocTables fails when docs/objectives.md's tables of figures are not the registry's;
// -update rewrites them.
func TestDocTables(t *testing.T) {
	data, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	want := doc
	for _, s := range []struct{ begin, end, table string }{
		{docBegin, docEnd, docTables()},
		{groupDocBegin, groupDocEnd, groupDocTables()},
	} {
		i, j := strings.Index(want, s.begin), strings.Index(want, s.end)
		if i < 0 || j < i {
			t.Fatalf("%s: no generated section between %q and %q", docPath, s.begin, s.end)
		}
		want = want[:i] + s.begin + "\n\n" + s.table + "\n" + want[j:]
	}
	if doc == want {
		return
	}
	if *update {
		if err := os.WriteFile(docPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s is out of date with the figure registry: run go test ./results/figures -run TestDocTables -update", docPath)
}
