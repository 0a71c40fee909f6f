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
)

// docTables writes the registry as docs/objectives.md shows it: one row per figure, except
// the latency figures, one row per histogram (their statistics share a definition).
func docTables() string {
	var b strings.Builder
	b.WriteString("| figure | unit | definition | absent when |\n| --- | --- | --- | --- |\n")
	var stats []string
	for _, s := range latencyStats {
		stats = append(stats, s.name)
	}
	done := map[string]bool{}
	for _, f := range all {
		if f.Histogram == "" {
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f.Name, f.Kind.Unit(), f.Definition, dash(f.AbsentWhen))
			continue
		}
		if done[f.Histogram] {
			continue
		}
		done[f.Histogram] = true
		l := latencies[f.Histogram]
		fmt.Fprintf(&b, "| `latency.%s.{%s}` | µs | %s of the %s | %s |\n", f.Histogram, strings.Join(stats, ","), strings.Join(stats, ", "), l.def, dash(l.absent))
	}
	return b.String()
}

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// TestDocTables fails when docs/objectives.md's table of figures is not the registry's;
// -update rewrites it.
func TestDocTables(t *testing.T) {
	data, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, docBegin), strings.Index(doc, docEnd)
	if i < 0 || j < i {
		t.Fatalf("%s: no generated section between %q and %q", docPath, docBegin, docEnd)
	}
	want := doc[:i] + docBegin + "\n\n" + docTables() + "\n" + doc[j:]
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
