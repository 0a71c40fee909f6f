package results

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// TestJudge: what a result's own counts allow it to claim.
func TestJudge(t *testing.T) {
	spec := func(rate int32, messages int64) *v1alpha1.MessagingBenchmarkSpec {
		return &v1alpha1.MessagingBenchmarkSpec{Workload: v1alpha1.WorkloadSpec{Publishers: 4, Rate: rate, Messages: messages,
			Duration: metav1.Duration{Duration: 10 * time.Second}, Warmup: metav1.Duration{Duration: 2 * time.Second}}}
	}
	short := func(rate int32) *v1alpha1.MessagingBenchmarkSpec { // 3 s: 1 % of it is less than 100 ms of the rate
		s := spec(rate, 0)
		s.Workload.Duration.Duration = 3 * time.Second
		return s
	}
	for _, c := range []struct {
		name   string
		r      Result
		failed string // "" succeeds, else a part of the reason
		caveat string
	}{
		{"a whole run", Result{Spec: spec(100, 0), Sent: 1000, Expected: 1000, Received: 1000, MeasuredSeconds: 10}, "", ""},
		{"nothing sent", Result{Spec: spec(100, 0), MeasuredSeconds: 10}, "measured nothing: no message was published", ""},
		{"every message in the warm-up", Result{Spec: spec(0, 100)}, "workload.warmup", ""},
		{"stopped before the window", Result{Spec: spec(100, 0)}, "before the 2s warm-up ended", ""},
		{"nothing arrived", Result{Spec: spec(100, 0), Sent: 1000, Expected: 1000, MeasuredSeconds: 10}, "measured nothing at the subscribers", ""},
		{"no subscribers", Result{Spec: spec(100, 0), Sent: 1000, MeasuredSeconds: 10}, "", ""},
		{"window cut short", Result{Spec: spec(100, 0), Sent: 300, Expected: 300, Received: 300, MeasuredSeconds: 3}, "measured 3.00 s of the 10s asked", CaveatEndedEarly},
		{"one unsent per publisher", Result{Spec: spec(10, 0), Sent: 96, Unsent: 4, Expected: 96, Received: 96, MeasuredSeconds: 10}, "", CaveatOfferedLoadNotSustained},
		{"under 1 % unsent", Result{Spec: spec(100, 0), Sent: 995, Unsent: 5, Expected: 995, Received: 995, MeasuredSeconds: 10}, "", CaveatOfferedLoadNotSustained},
		{"not sustained", Result{Spec: spec(100, 0), Sent: 500, Unsent: 500, Expected: 500, Received: 500, MeasuredSeconds: 10}, "offered load was not sustained", CaveatOfferedLoadNotSustained},
		{"one retransmission stall at the end", Result{Spec: spec(10, 0), Sent: 80, Unsent: 20, Expected: 80, Received: 80, MeasuredSeconds: 10,
			Latency: Latencies{PublishAck: &LatencySummary{MaxMicros: 1_100_000}}}, "", CaveatOfferedLoadNotSustained},
		{"one scheduling stall at the end", Result{Spec: short(100), Sent: 290, Unsent: 10, Expected: 290, Received: 290, MeasuredSeconds: 3}, "", CaveatOfferedLoadNotSustained},
		{"beyond one scheduling stall", Result{Spec: short(100), Sent: 289, Unsent: 11, Expected: 289, Received: 289, MeasuredSeconds: 3}, "offered load was not sustained", CaveatOfferedLoadNotSustained},
		{"far behind despite slow acks", Result{Spec: spec(10, 0), Sent: 40, Unsent: 60, Expected: 40, Received: 40, MeasuredSeconds: 10,
			Latency: Latencies{PublishAck: &LatencySummary{MaxMicros: 1_100_000}}}, "offered load was not sustained", CaveatOfferedLoadNotSustained},
	} {
		v := Judge(&c.r)
		reasons := strings.Join(v.Reasons, "; ")
		switch {
		case c.failed == "" && v.Failed:
			t.Errorf("%s: failed: %s", c.name, reasons)
		case c.failed != "" && (!v.Failed || !strings.Contains(reasons, c.failed)):
			t.Errorf("%s: failed %v (%s), want a failure saying %q", c.name, v.Failed, reasons, c.failed)
		}
		got := ""
		if len(v.Caveats) > 0 {
			got = v.Caveats[0].Type
		}
		if got != c.caveat {
			t.Errorf("%s: caveat %q, want %q", c.name, got, c.caveat)
		}
		// Applying twice (the only worker, then the merge) says each reason once.
		r := c.r
		v.Apply(&r)
		Judge(&r).Apply(&r)
		for _, reason := range v.Reasons {
			if strings.Count(r.Message, reason) != 1 {
				t.Errorf("%s: message %q repeats or lacks %q", c.name, r.Message, reason)
			}
		}
		if len(r.Caveats) != len(v.Caveats) {
			t.Errorf("%s: caveats %d after two applications, want %d", c.name, len(r.Caveats), len(v.Caveats))
		}
	}
}
