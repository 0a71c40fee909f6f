package localrun

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/internal/manifest"
	_ "github.com/msgbench/msgbench/loadgen/drivers/mqtt" // the driver the test runs
	"github.com/msgbench/msgbench/netem/emulator"
)

// TestTimelineOutageOnTheEmulator runs MQTT QoS 1 at a low rate through the real emulator with a
// 2 s outage 1 s into the measured window, on a base link that is unimpaired (profile none):
// the emulator runs all the same, nothing is lost, the per-second timeline shows the deliveries
// stop and then catch up, the end-to-end latency's max covers the outage, and the result's
// network.timeline marks the outage and the return, each at (not before) its planned time.
func TestTimelineOutageOnTheEmulator(t *testing.T) {
	if err := emulator.CheckPrivileges(); err != nil {
		t.Skip(err)
	}
	mb, err := manifest.Parse([]byte(`
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: outage}
spec:
  protocol: mqtt
  qos: 1
  timeout: 2m
  network:
    profile: none
    timeline:
    - {at: 1s, for: 2s, outage: true}
  workload: {publishers: 1, subscribers: 1, topics: 1, payloadBytes: 64, rate: 10, duration: 5s, warmup: 500ms}
`))
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	res, err := Run(context.Background(), mb, Options{Logf: func(f string, a ...any) { log.WriteString(strings.TrimSpace(fmt.Sprintf(f, a...)) + "\n") }})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if res.Phase != "Succeeded" || res.Lost == nil || *res.Lost != 0 || res.Received != res.Sent || res.Sent < 45 {
		t.Fatalf("phase %s, sent %d, received %d, lost %v: %s", res.Phase, res.Sent, res.Received, res.Lost, res.Message)
	}
	// Per second: the second wholly inside the outage (t in 2..3 s) delivers nothing; a later
	// one delivers more than the 10 msg/s sent, the backlog.
	var peak int64
	for _, p := range res.Timeline {
		if p.T == 3 && p.Received != 0 {
			t.Errorf("%d received in the second ending at %vs, inside the outage", p.Received, p.T)
		}
		if p.T > 3 {
			peak = max(peak, p.Received)
		}
	}
	if peak <= 10 {
		t.Errorf("no catch-up after the outage: timeline %+v", res.Timeline)
	}
	if e := res.Latency.EndToEnd; e == nil || time.Duration(e.MaxMicros)*time.Microsecond < 2*time.Second {
		t.Errorf("end-to-end latency %+v: max should cover the 2 s outage", e)
	}
	marks := res.NetworkTimeline()
	if len(marks) != 2 || marks[0].Description != "outage" || marks[0].Step == nil || *marks[0].Step != 0 ||
		marks[1].Step != nil || marks[1].Planned != 3 {
		t.Fatalf("network.timeline %+v", marks)
	}
	for _, m := range marks {
		if m.At < m.Planned || m.At > m.Planned+0.5 {
			t.Errorf("step %q took effect at %.3fs, planned %.3fs", m.Description, m.At, m.Planned)
		}
	}
	// The per-second timeline marks the outage in the interval it began: (1 s, 2 s].
	for _, p := range res.Timeline {
		if (p.Network == "outage") != (p.T == 2) {
			t.Errorf("timeline point t=%v marked %q", p.T, p.Network)
		}
	}
	if n, _ := res.Network.(map[string]any); n == nil || n["emulator"] == nil {
		t.Errorf("network %v: the emulator should be described", res.Network)
	}
	t.Logf("timeline %+v; e2e max %d µs; marks %+v", res.Timeline, res.Latency.EndToEnd.MaxMicros, marks)
}

// TestTimelineAfterTheEndIsRefused: a step at or after workload.duration is refused before
// anything starts, naming the step. The API server's rule (and manifest parsing) refuse it too;
// this is a spec that came another way, from Go.
func TestTimelineAfterTheEndIsRefused(t *testing.T) {
	mb, err := manifest.Parse([]byte(`
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: late}
spec:
  protocol: mqtt
  network:
    profile: lte
    timeline:
    - {at: 1s, profile: 3g}
    - {at: 9s, outage: true}
  workload: {duration: 10s}
`))
	if err != nil {
		t.Fatal(err)
	}
	mb.Spec.Network.Timeline[1].At.Duration = 10 * time.Second
	_, err = Run(context.Background(), mb, Options{})
	if err == nil || !strings.Contains(err.Error(), "spec.network.timeline[1].at: 10s is not before the end of the measured window (spec.workload.duration 10s)") {
		t.Fatalf("err = %v", err)
	}
}

// TestOutageLongerThanKeepAliveIsRefused: a run whose outage outlasts 1.5 × the MQTT keep-alive
// could only fail (the broker drops every client; they do not reconnect): refused up front,
// before any process starts, naming the step and the field to change.
func TestOutageLongerThanKeepAliveIsRefused(t *testing.T) {
	mb, err := manifest.Parse([]byte(`
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: long-outage}
spec:
  protocol: mqtt
  mqtt: {keepAliveSeconds: 2}
  network:
    profile: lte
    timeline:
    - {at: 1s, for: 5s, outage: true}
  workload: {duration: 10s}
`))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = Run(context.Background(), mb, Options{})
	if err == nil || !strings.Contains(err.Error(), "spec.network.timeline[0]: the uplink is cut off for 5s, longer than 1.5 × spec.mqtt.keepAliveSeconds") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("refused after %v: something started first", d)
	}
	mb.Spec.MQTT.KeepAliveSeconds = nil // 60 s: the 5 s outage is survivable
	if _, err := Check(&mb.Spec, Options{}); err != nil {
		t.Errorf("with the default keep-alive: %v", err)
	}
}
