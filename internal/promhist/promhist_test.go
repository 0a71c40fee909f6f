package promhist

import (
	"math"
	"testing"

	"github.com/msgbench/msgbench/results"
)

// Every value falls in the native bucket whose bounds hold it: (2^((i-1)/8), 2^(i/8)].
func TestNativeIndexBounds(t *testing.T) {
	for _, v := range []float64{1e-6, 1.5e-6, 0.000123, 0.001, 0.0017, 0.5, 1, 1.09, 1.0905, 3, 59.9, 3600} {
		i := NativeIndex(v)
		lo, hi := NativeUpperBound(i-1), NativeUpperBound(i)
		if !(v > lo*(1-1e-12) && v <= hi*(1+1e-12)) {
			t.Errorf("%v in bucket %d = (%v, %v]", v, i, lo, hi)
		}
	}
	if NativeIndex(1) != 0 || NativeIndex(2) != 8 || NativeIndex(0.5) != -8 {
		t.Errorf("powers of two: %d %d %d, want 0 8 -8", NativeIndex(1), NativeIndex(2), NativeIndex(0.5))
	}
}

// The conversion keeps every sample: count, classic cumulative counts, and native spans and
// deltas that decode to the same counts; the sum is within HdrHistogram's resolution.
func TestHistogramKeepsEverySample(t *testing.T) {
	h := results.NewHistogram()
	var sum float64
	for _, us := range []int64{0, 50, 120, 120, 900, 1000, 5000, 5000, 5000, 250000, 2_000_000, 90_000_000} {
		results.RecordMicros(h, us)
		sum += float64(us) / 1e6
	}
	p := Histogram(h)
	if p.GetSampleCount() != 12 || p.GetZeroCount() != 1 {
		t.Fatalf("count %d zero %d, want 12 and 1", p.GetSampleCount(), p.GetZeroCount())
	}
	if math.Abs(p.GetSampleSum()-sum) > 0.001*sum {
		t.Errorf("sum %v, want %v", p.GetSampleSum(), sum)
	}
	// classic: ≤100 µs holds 0 and 50; ≤1 ms holds 6; the 90 s sample is only in +Inf.
	cum := map[float64]uint64{}
	for _, b := range p.Bucket {
		cum[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	if cum[0.0001] != 2 || cum[0.001] != 6 || cum[60] != 11 {
		t.Errorf("classic buckets %v", cum)
	}
	// native: decode spans and deltas back to indices and counts.
	got := map[int]int64{}
	idx, count, k := 0, int64(0), 0
	for j, s := range p.PositiveSpan {
		if j == 0 {
			idx = int(s.GetOffset())
		} else {
			idx += int(s.GetOffset())
		}
		for range s.GetLength() {
			count += p.PositiveDelta[k]
			got[idx] = count
			idx++
			k++
		}
	}
	var total int64
	for i, c := range got {
		total += c
		if c <= 0 {
			t.Errorf("bucket %d has %d", i, c)
		}
	}
	if total != 11 || got[NativeIndex(0.005)] != 3 || got[NativeIndex(0.00012)] != 2 {
		t.Errorf("native buckets %v (total %d)", got, total)
	}
}
