package results

import (
	"math/rand/v2"
	"reflect"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// TestMergeIsExact splits samples over N worker results; the merged result must report the
// same percentiles as one histogram fed every sample, and sums of every count.
func TestMergeIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	spec := &v1alpha1.MessagingBenchmarkSpec{Workload: v1alpha1.WorkloadSpec{PayloadBytes: 100}}
	for _, workers := range []int{1, 2, 3, 7} {
		all := map[string]*hdrhistogram.Histogram{}
		for _, n := range HistogramNames {
			all[n] = NewHistogram()
		}
		var parts []*Result
		var sent, received int64
		for w := 0; w < workers; w++ {
			hists := map[string]*hdrhistogram.Histogram{}
			for _, n := range HistogramNames {
				hists[n] = NewHistogram()
				for i := 0; i < 1000+rng.IntN(5000); i++ {
					// log-normal-ish latencies from µs to seconds, different per worker
					v := int64(rng.ExpFloat64()*float64(100*(w+1))) + int64(rng.IntN(3)*rng.IntN(1_000_000))
					RecordMicros(hists[n], v)
					RecordMicros(all[n], v)
				}
			}
			p := &Result{Name: "b", Spec: spec, Phase: "Succeeded", MeasuredSeconds: 10, Sent: int64(100 + w), Received: int64(90 + w),
				Expected: int64(100 + w), Lost: Int64(int64(10)), Duplicates: Int64(1), OutOfOrder: Int64(2),
				Wire:     Wire{BytesSent: 1000, BytesReceived: 500, Connections: 2, ConnectBytesTotal: 60, PublishBytesTotal: 300, PublishMessageCount: 100, SegmentsSent: Int64(5)},
				Timeline: []TimelinePoint{{T: 1, Sent: 10, Received: 9}, {T: 2, Sent: int64(w), Received: 1}},
				Workers:  []WorkerSummary{{Index: workers - 1 - w, Sent: int64(100 + w)}}}
			sent += p.Sent
			received += p.Received
			if err := p.Finalize(hists); err != nil {
				t.Fatal(err)
			}
			parts = append(parts, p)
		}
		m, err := Merge(parts)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range HistogramNames {
			want := Summarize(all[n])
			var got *LatencySummary
			switch n {
			case HistEndToEnd:
				got = m.Latency.EndToEnd
			case HistPublishAck:
				got = m.Latency.PublishAck
			case HistPublishDelay:
				got = m.Latency.PublishDelay
			case HistConnect:
				got = m.Latency.Connect
			case HistFirstMessage:
				got = m.Latency.FirstMessage
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%d workers, %s: merged %+v, one histogram %+v", workers, n, got, want)
			}
		}
		if m.Sent != sent || m.Received != received || *m.Lost != int64(10*workers) || *m.Duplicates != int64(workers) {
			t.Errorf("%d workers: counts sent %d received %d lost %d dups %d", workers, m.Sent, m.Received, *m.Lost, *m.Duplicates)
		}
		if m.Timeline[0].Sent != int64(10*workers) || m.Timeline[1].Received != int64(workers) || len(m.Timeline) != 2 {
			t.Errorf("%d workers: timeline %+v", workers, m.Timeline)
		}
		if *m.Wire.ConnectBytes != 30 || *m.Wire.PublishBytesPerMessage != 3 || *m.Wire.SegmentsSent != int64(5*workers) {
			t.Errorf("%d workers: wire %+v", workers, m.Wire)
		}
		if m.Throughput.SentPerSecond != float64(sent)/10 {
			t.Errorf("throughput %v", m.Throughput.SentPerSecond)
		}
		for i, w := range m.Workers {
			if w.Index != i {
				t.Errorf("workers not sorted by index: %+v", m.Workers)
			}
		}
	}
}

func TestMergeRefusesMixedBenchmarks(t *testing.T) {
	a := &Result{Name: "a"}
	b := &Result{Name: "b"}
	if _, err := Merge([]*Result{a, b}); err == nil {
		t.Error("merged results of two benchmarks")
	}
	if _, err := Merge(nil); err == nil {
		t.Error("merged nothing")
	}
}

func TestUnmeasuredFiguresAreNull(t *testing.T) {
	r := &Result{Name: "x", Lost: Int64(0)}
	if err := r.Finalize(nil); err != nil {
		t.Fatal(err)
	}
	if r.Latency.EndToEnd != nil || r.Wire.BytesPerMessage != nil || r.Wire.ConnectBytes != nil || r.Duplicates != nil {
		t.Errorf("unmeasured figures must be nil: %+v %+v", r.Latency, r.Wire)
	}
}
