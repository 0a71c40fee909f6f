// Package promhist turns an HdrHistogram of microseconds into a Prometheus histogram of seconds
// at scrape time: a native (sparse, exponential) histogram and classic buckets in the same
// sample, so Prometheus servers with native histograms enabled keep the full shape and older
// ones still get `_bucket` series. The engine goes on recording into its HdrHistograms exactly
// as before; the conversion costs the scrape, not the hot path.
package promhist

import (
	"math"
	"sort"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
)

// Schema is the native histograms' resolution: 2^(2^-3), buckets about 9 % wide, what
// client_golang picks for its usual NativeHistogramBucketFactor of 1.1. HdrHistogram's 3
// significant digits are finer, so nothing is lost that the schema could show.
const Schema = 3

// ClassicBuckets are the upper bounds, in seconds, of the classic buckets: 100 µs (loopback) to
// 60 s (a 10 KB message on NB-IoT), a 1-2.5-5 ladder.
var ClassicBuckets = []float64{
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
	1, 2.5, 5, 10, 30, 60,
}

// Histogram is one histogram sample (count, sum, classic and native buckets) of h, whose values
// are microseconds, in seconds.
func Histogram(h *hdrhistogram.Histogram) *dto.Histogram {
	out := &dto.Histogram{Schema: proto.Int32(Schema), ZeroThreshold: proto.Float64(prometheus.DefNativeHistogramZeroThreshold)}
	var count uint64
	var sum float64
	classic := make([]uint64, len(ClassicBuckets))
	native := map[int]int64{}
	var zero uint64
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		n := uint64(bar.Count)
		// HdrHistogram keeps a range of equivalent values per bucket; its median stands for them
		// (what HdrHistogram's own mean uses).
		v := float64(bar.From+bar.To) / 2 / 1e6
		count += n
		sum += v * float64(n)
		if i := sort.SearchFloat64s(ClassicBuckets, v); i < len(ClassicBuckets) {
			classic[i] += n
		}
		if v <= 0 {
			zero += n
			continue
		}
		native[NativeIndex(v)] += int64(n)
	}
	out.SampleCount, out.SampleSum, out.ZeroCount = proto.Uint64(count), proto.Float64(sum), proto.Uint64(zero)
	var cum uint64
	for i, ub := range ClassicBuckets {
		cum += classic[i]
		out.Bucket = append(out.Bucket, &dto.Bucket{UpperBound: proto.Float64(ub), CumulativeCount: proto.Uint64(cum)})
	}
	out.PositiveSpan, out.PositiveDelta = spans(native)
	if len(out.PositiveSpan) == 0 && zero == 0 {
		// An empty native histogram still needs a span to be told from a classic-only one.
		out.PositiveSpan = []*dto.BucketSpan{{Offset: proto.Int32(0), Length: proto.Uint32(0)}}
	}
	return out
}

// NativeIndex is the index of the native bucket of schema Schema holding v > 0: bucket i holds
// (2^((i-1)/8), 2^(i/8)]. As client_golang computes it: v = frac × 2^exp with frac in [0.5, 1),
// and the first of the bounds 2^(k/8 - 1) that is ≥ frac.
func NativeIndex(v float64) int {
	frac, exp := math.Frexp(v)
	return sort.SearchFloat64s(bounds, frac) + (exp-1)<<Schema
}

// bounds are 2^(k/8 - 1) for k = 0..7.
var bounds = func() []float64 {
	b := make([]float64, 1<<Schema)
	for k := range b {
		b[k] = math.Pow(2, float64(k)/(1<<Schema)-1)
	}
	return b
}()

// NativeUpperBound is the upper bound of native bucket i.
func NativeUpperBound(i int) float64 { return math.Pow(2, float64(i)/(1<<Schema)) }

// spans encodes sparse bucket counts as Prometheus spans and deltas: consecutive runs of
// indices, each count given as the difference from the one before.
func spans(counts map[int]int64) ([]*dto.BucketSpan, []int64) {
	idx := make([]int, 0, len(counts))
	for i := range counts {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var sp []*dto.BucketSpan
	var deltas []int64
	var prevCount int64
	for j, i := range idx {
		switch {
		case j == 0:
			sp = append(sp, &dto.BucketSpan{Offset: proto.Int32(int32(i)), Length: proto.Uint32(0)})
		case i != idx[j-1]+1:
			sp = append(sp, &dto.BucketSpan{Offset: proto.Int32(int32(i - idx[j-1] - 1)), Length: proto.Uint32(0)})
		}
		last := sp[len(sp)-1]
		last.Length = proto.Uint32(last.GetLength() + 1)
		deltas = append(deltas, counts[i]-prevCount)
		prevCount = counts[i]
	}
	return sp, deltas
}

// NewMetric is hist (from Histogram) as a sample of desc, classic and native buckets together;
// labelValues are desc's variable labels.
func NewMetric(desc *prometheus.Desc, hist *dto.Histogram, labelValues ...string) (prometheus.Metric, error) {
	// client_golang sets the labels (const and variable, in its order) on a const histogram's
	// sample; the native part is added to that sample.
	buckets := map[float64]uint64{}
	for _, b := range hist.Bucket {
		buckets[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	c, err := prometheus.NewConstHistogram(desc, hist.GetSampleCount(), hist.GetSampleSum(), buckets, labelValues...)
	if err != nil {
		return nil, err
	}
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		return nil, err
	}
	m.Histogram.Schema, m.Histogram.ZeroThreshold, m.Histogram.ZeroCount = hist.Schema, hist.ZeroThreshold, hist.ZeroCount
	m.Histogram.PositiveSpan, m.Histogram.PositiveDelta = hist.PositiveSpan, hist.PositiveDelta
	return &metric{desc: desc, m: &m}, nil
}

type metric struct {
	desc *prometheus.Desc
	m    *dto.Metric
}

func (m *metric) Desc() *prometheus.Desc { return m.desc }

func (m *metric) Write(out *dto.Metric) error {
	proto.Reset(out)
	proto.Merge(out, m.m)
	return nil
}
