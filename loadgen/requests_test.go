package loadgen_test

import (
	"testing"
	"time"

	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/loadgen"
)

const requestSpec = `
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: rr}
spec:
  protocol: mqtt
  qos: 1
  mqtt: {version: "5"}
  topics:
    - {name: requests, pattern: "svc/requests"}
    - {name: replies, pattern: "clients/{device}/reply", devices: clients}
  groups:
    - name: clients
      count: 10
      publish: {topics: requests, payloadBytes: 64, rate: 200, replyTo: replies}
    - name: service
      count: 2
      subscribe: {filter: "svc/requests", share: svc, respond: {payloadBytes: 32}}
  workload: {warmup: 1s, duration: 3s}
`

// TestRequestsAreAnsweredOnce: ten clients ask through MQTT 5's Response Topic and Correlation
// Data, two service instances share the requests and answer each on its asker's own topic.
// Every measured request reaches exactly one instance and is answered exactly once, and the
// round trip is timed from the correlation data the answer carried back.
func TestRequestsAreAnsweredOnce(t *testing.T) {
	t.Parallel() // its own broker
	b := startMosquitto(t, "")
	mb, err := manifest.Parse([]byte(requestSpec))
	if err != nil {
		t.Fatal(err)
	}
	res, _ := runAny(t, loadgen.Options{Spec: &mb.Spec, Address: b.Addr})
	if res.Phase != "Succeeded" {
		t.Fatalf("phase %s: %s", res.Phase, res.Message)
	}
	clients := res.Group("clients")
	sent := clients.Sent
	if sent < 550 || sent > 650 {
		t.Errorf("clients sent %d, want ~600", sent)
	}
	if len(res.Pairs) != 1 || res.Pairs[0].Expected != sent || res.Pairs[0].Received != sent {
		t.Errorf("pairs %+v: want clients → service %d of %d", res.Pairs, sent, sent)
	}
	q := clients.Requests
	if q == nil || q.Expected != sent || q.Answered != sent || q.Lost != 0 || q.Duplicates != 0 || q.Errors != 0 {
		t.Fatalf("requests %+v: want %d expected and answered", q, sent)
	}
	if q.RoundTrip == nil || q.RoundTrip.Count != sent || q.RoundTrip.MinMicros <= 0 || q.RoundTrip.MinMicros > 100_000 {
		t.Errorf("round trip %+v: want %d of a loopback's", q.RoundTrip, sent)
	}
	// The round trip goes there and back: never shorter than the way there.
	if e2e := res.Pairs[0].EndToEnd; e2e == nil || q.RoundTrip.MinMicros < e2e.MinMicros {
		t.Errorf("round trip min %d µs below the request's one-way min %+v", q.RoundTrip.MinMicros, e2e)
	}
	if res.Group("service").Requests != nil {
		t.Errorf("the service asks nothing, but has requests %+v", res.Group("service").Requests)
	}
}

// TestRequestsAcrossWorkers: the service in a worker whose clock reads 0.5 s ahead. The request's
// way there is corrected by the offsets; the round trip needs none (the asker reads both times on
// its own clock), so it is a loopback's either way.
func TestRequestsAcrossWorkers(t *testing.T) {
	t.Parallel() // its own broker
	b := startMosquitto(t, "")
	res := runSplitOf(t, b.Addr, requestSpec, [][]string{{"clients"}, {"service"}}, []time.Duration{0, 500 * time.Millisecond}, true)
	if res.Phase != "Succeeded" {
		t.Fatalf("phase %s: %s", res.Phase, res.Message)
	}
	sent := res.Group("clients").Sent
	q := res.Group("clients").Requests
	if q == nil || q.Expected != sent || q.Answered != sent || q.Lost != 0 || q.RoundTrip == nil || q.RoundTrip.MinMicros > 100_000 || q.RoundTrip.MinMicros <= 0 {
		// The minimum: a busy machine's queues stretch the rest, never every round trip.
		t.Errorf("requests %+v (round trip %+v): want %d answered, a loopback's shortest round trip", q, q.RoundTrip, sent)
	}
	if len(res.Pairs) != 1 || res.Pairs[0].Received != sent || res.Pairs[0].Clock == nil || res.Pairs[0].Clock.CorrectionMicros != 500_000 {
		t.Errorf("pairs %+v: want clients → service %d, corrected by 0.5 s", res.Pairs, sent)
	}
}
