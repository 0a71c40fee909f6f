package results

import (
	"fmt"
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range: 1 µs to one hour at 3 significant digits (measurement.md).
const (
	histLowest  = 1
	histHighest = 3_600_000_000
	histDigits  = 3
)

// NewHistogram returns an empty latency histogram in microseconds. HdrHistogram has no
// locking: each recording goroutine (or shard, under its own lock) owns one.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowest, histHighest, histDigits)
}

// RecordMicros records v microseconds, clamping to the histogram's range so that a sample
// beyond an hour is kept as an hour rather than lost.
func RecordMicros(h *hdrhistogram.Histogram, v int64) {
	if v < 0 {
		v = 0
	}
	if v > histHighest {
		v = histHighest
	}
	_ = h.RecordValue(v)
}

// Summarize summarises a histogram, or returns nil when it is empty.
func Summarize(h *hdrhistogram.Histogram) *LatencySummary {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	mean := h.Mean()
	if math.IsNaN(mean) {
		mean = 0
	}
	return &LatencySummary{
		Count:      h.TotalCount(),
		MinMicros:  h.Min(),
		MeanMicros: math.Round(mean*10) / 10,
		P50Micros:  h.ValueAtQuantile(50),
		P90Micros:  h.ValueAtQuantile(90),
		P95Micros:  h.ValueAtQuantile(95),
		P99Micros:  h.ValueAtQuantile(99),
		P999Micros: h.ValueAtQuantile(99.9),
		MaxMicros:  h.Max(),
	}
}

// EncodeHistogram returns base64 of the compressed V2 encoding.
func EncodeHistogram(h *hdrhistogram.Histogram) (string, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// DecodeHistogram reverses EncodeHistogram.
func DecodeHistogram(s string) (*hdrhistogram.Histogram, error) {
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return h, nil
}

// DecodeHistograms decodes every histogram of r.
func (r *Result) DecodeHistograms() (map[string]*hdrhistogram.Histogram, error) {
	out := map[string]*hdrhistogram.Histogram{}
	for name, enc := range r.Histograms {
		h, err := DecodeHistogram(enc)
		if err != nil {
			return nil, fmt.Errorf("histogram %s: %w", name, err)
		}
		out[name] = h
	}
	return out, nil
}
