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
	lossy := func(s *v1alpha1.MessagingBenchmarkSpec) *v1alpha1.MessagingBenchmarkSpec {
		s.Network.Profile = v1alpha1.ProfileCustom
		s.Network.Delay = &metav1.Duration{Duration: 100 * time.Millisecond}
		s.Network.LossPercent = ptr("1")
		return s
	}
	mqttsn := func(s *v1alpha1.MessagingBenchmarkSpec) *v1alpha1.MessagingBenchmarkSpec {
		s.Protocol, s.QoS = v1alpha1.ProtocolMQTTSN, 1
		s.MQTTSN.RetryInterval.Duration = 10 * time.Second
		return s
	}
	outage := func(s *v1alpha1.MessagingBenchmarkSpec, d time.Duration) *v1alpha1.MessagingBenchmarkSpec {
		s.Network.Timeline = []v1alpha1.NetworkStep{{At: metav1.Duration{Duration: 5 * time.Second}, For: &metav1.Duration{Duration: d}, Outage: true}}
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
		// The allowance comes from the spec: a lossy link with 200 ms of RTT allows 100 ms + 3 × (200 ms
		// + 200 ms) = 1.3 s, 13 messages of 10 msg/s.
		{"one retransmission stall on a lossy link", Result{Spec: lossy(spec(10, 0)), Sent: 88, Unsent: 12, Expected: 88, Received: 88, MeasuredSeconds: 10,
			Latency: Latencies{PublishAck: &LatencySummary{MaxMicros: 1_100_000}}}, "", CaveatOfferedLoadNotSustained},
		{"more than two retransmissions behind", Result{Spec: lossy(spec(10, 0)), Sent: 86, Unsent: 14, Expected: 86, Received: 86, MeasuredSeconds: 10},
			"offered load was not sustained", CaveatOfferedLoadNotSustained},
		// On loopback the slowest acknowledgement no longer widens the allowance: a broker frozen
		// for 8 s in a 5 s window at 100 msg/s (kill -STOP) passed with 223 unsent.
		{"a broker frozen for 8 s", Result{Spec: short(100), Sent: 77, Unsent: 223, Expected: 77, Received: 77, MeasuredSeconds: 3,
			Latency: Latencies{PublishAck: &LatencySummary{MaxMicros: 8_000_000}}}, "offered load was not sustained", CaveatOfferedLoadNotSustained},
		{"one slow acknowledgement on loopback", Result{Spec: spec(10, 0), Sent: 80, Unsent: 20, Expected: 80, Received: 80, MeasuredSeconds: 10,
			Latency: Latencies{PublishAck: &LatencySummary{MaxMicros: 1_100_000}}}, "offered load was not sustained", CaveatOfferedLoadNotSustained},
		// The load generator's own stall (its probe saw 200 ms) is allowed for: 100 ms + 200 ms = 30 messages.
		{"the load generator's own stall", Result{Spec: short(100), Sent: 275, Unsent: 25, Expected: 275, Received: 275, MeasuredSeconds: 3,
			Resources: Resources{LoadgenStallMicros: 200_000}}, "", CaveatOfferedLoadNotSustained},
		// MQTT-SN at QoS 1 waits a whole retry interval (10 s) for a lost PUBLISH.
		{"an MQTT-SN retry on a lossy link", Result{Spec: mqttsn(lossy(spec(10, 0))), Sent: 40, Unsent: 60, Expected: 40, Received: 40, MeasuredSeconds: 10}, "", CaveatOfferedLoadNotSustained},
		// A planned outage of 3 s is allowed for: 100 ms + 3 s = 31 messages at 10 msg/s.
		{"a planned outage", Result{Spec: outage(spec(10, 0), 3*time.Second), Sent: 70, Unsent: 30, Expected: 70, Received: 70, MeasuredSeconds: 10}, "", CaveatOfferedLoadNotSustained},
		{"behind by more than the outage", Result{Spec: outage(spec(10, 0), 3*time.Second), Sent: 60, Unsent: 40, Expected: 60, Received: 60, MeasuredSeconds: 10},
			"offered load was not sustained", CaveatOfferedLoadNotSustained},
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

func ptr[T any](v T) *T { return &v }

// TestSteadyStateCaveat: a window whose latency climbs is said to be no steady state; one whose
// latency only wobbles (loopback's GC pauses, a jittery link) is not.
func TestSteadyStateCaveat(t *testing.T) {
	spec := &v1alpha1.MessagingBenchmarkSpec{Workload: v1alpha1.WorkloadSpec{Publishers: 1, Rate: 100, Duration: metav1.Duration{Duration: 6 * time.Second}}}
	timeline := func(meansMillis ...float64) []TimelinePoint {
		var tl []TimelinePoint
		for i, m := range meansMillis {
			tl = append(tl, TimelinePoint{T: float64(i + 1), Sent: 100, Received: 100, EndToEndCount: 100, EndToEndMeanMicros: m * 1000})
		}
		return tl
	}
	for _, c := range []struct {
		name  string
		tl    []TimelinePoint
		want  bool
		value float64
	}{
		{"a growing backlog", timeline(100, 300, 800, 1300, 2000, 3500), true, 2750},
		{"steady on a satellite link", timeline(600, 640, 590, 610, 650, 600), false, 0},
		{"loopback with a GC pause at the end", timeline(0.2, 0.2, 0.3, 0.2, 0.3, 9), false, 0},
		{"too few intervals", timeline(100, 3000), false, 0},
		// Intervals after the window (the drain) are not the window's.
		{"only the drain is slow", append(timeline(10, 10, 10, 10, 10, 10), TimelinePoint{T: 7, EndToEndCount: 100, EndToEndMeanMicros: 5e6}), false, 0},
	} {
		r := &Result{Spec: spec, Sent: 600, Expected: 600, Received: 600, MeasuredSeconds: 6, Timeline: c.tl}
		v := Judge(r)
		var got *Caveat
		for i := range v.Caveats {
			if v.Caveats[i].Type == CaveatNotSteadyState {
				got = &v.Caveats[i]
			}
		}
		if (got != nil) != c.want {
			t.Errorf("%s: NotSteadyState caveat %v, want %v", c.name, got, c.want)
			continue
		}
		if v.Failed {
			t.Errorf("%s: failed: %v (a caveat, not a failure)", c.name, v.Reasons)
		}
		if got != nil && (*got.Value != c.value || !strings.Contains(got.Message, "not a steady state")) {
			t.Errorf("%s: caveat value %v (%s), want %v ms", c.name, *got.Value, got.Message, c.value)
		}
	}
}
