package loadgen

import (
	"math/rand/v2"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgbench/msgbench/plan"

	"github.com/msgbench/msgbench/results"
)

// BenchmarkScrape is one scrape of a running worker: its counters, and its latency histograms
// merged over the shards (each locked only for its own merge) and converted to native and
// classic buckets. The
// histograms hold a loopback run's spread, 20 µs to 50 ms.
func BenchmarkScrape(b *testing.B) {
	rec := newRecorder(1e9, 1)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range rec.shards {
		for range 100_000 {
			v := int64(20 + rng.ExpFloat64()*2000)
			results.RecordMicros(rec.shards[i].endToEnd, v)
			results.RecordMicros(rec.shards[i].ack, v/2)
		}
	}
	m := &Monitor{}
	p := &plan.Plan{Groups: []plan.Group{{Name: "default"}}}
	m.run.Store(&run{rec: rec, compiled: p, groups: []*groupRun{{g: &p.Groups[0]}}})
	c := NewCollector(m, MetricLabels{Benchmark: "b"})
	ch := make(chan prometheus.Metric, 64)
	b.ReportAllocs()
	for b.Loop() {
		c.Collect(ch)
		for len(ch) > 0 {
			<-ch
		}
	}
}
