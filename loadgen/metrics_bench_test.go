package loadgen

import (
	"math/rand/v2"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgbench/msgbench/results"
)

// BenchmarkScrape is one scrape of a running worker's latency histograms: merging the shards
// (each locked only for its own merge) and converting to native and classic buckets. The
// histograms hold a loopback run's spread, 20 µs to 50 ms.
func BenchmarkScrape(b *testing.B) {
	rec := newRecorder(1e9)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range rec.shards {
		for range 100_000 {
			v := int64(20 + rng.ExpFloat64()*2000)
			results.RecordMicros(rec.shards[i].endToEnd, v)
			results.RecordMicros(rec.shards[i].ack, v/2)
		}
	}
	c := NewCollector(&Monitor{}, MetricLabels{Benchmark: "b"}).(*collector)
	ch := make(chan prometheus.Metric, 64)
	b.ReportAllocs()
	for b.Loop() {
		c.mu.Lock()
		hist := c.scratch.histograms(rec)
		c.mu.Unlock()
		c.histograms(ch, hist)
		for range 4 {
			<-ch
		}
	}
}
