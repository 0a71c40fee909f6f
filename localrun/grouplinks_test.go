package localrun

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/internal/manifest"
	_ "github.com/msgbench/msgbench/loadgen/drivers/mqtt"   // the drivers the test runs
	_ "github.com/msgbench/msgbench/loadgen/drivers/mqttsn" //
	"github.com/msgbench/msgbench/netem/emulator"
)

// TestEachGroupBehindItsOwnLink: two publishing groups each behind a link of its own (an MQTT
// group on 80 ms each way, an MQTT-SN group through its gateway on 30 ms each way) and a
// subscribing group with none. Each group's connect takes its own link's round trips and no
// other's, each publishing group's end-to-end latency its own link's one-way delay, and every
// message arrives.
func TestEachGroupBehindItsOwnLink(t *testing.T) {
	if err := emulator.CheckPrivileges(); err != nil {
		t.Skip(err)
	}
	t.Parallel()
	mb, err := manifest.Parse([]byte(`
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: group-links}
spec:
  protocol: mqtt
  qos: 1
  timeout: 2m
  topics:
    - {name: far, pattern: "far/{index}", count: 4}
    - {name: near, pattern: "near/{index}", count: 4}
  groups:
    - name: far
      count: 4
      network: {profile: custom, delay: 80ms}
      publish: {topics: far, payloadBytes: 32, interval: 500ms}
    - name: near
      count: 4
      protocol: mqtt-sn
      network: {profile: custom, delay: 30ms}
      publish: {topics: near, payloadBytes: 32, interval: 500ms}
    - name: local
      count: 2
      subscribe: {filter: "#"}
  workload: {warmup: 1s, duration: 3s}
`))
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	res, err := Run(context.Background(), mb, Options{Logf: func(f string, a ...any) { log.WriteString(strings.TrimSpace(fmt.Sprintf(f, a...)) + "\n") }})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if res.Phase != "Succeeded" || *res.Lost != 0 || res.Received != res.Expected || res.Expected != 2*res.Sent {
		t.Fatalf("phase %s: sent %d, expected %d, received %d, lost %d: %s\n%s", res.Phase, res.Sent, res.Expected, res.Received, *res.Lost, res.Message, log.String())
	}
	ms := func(us int64) time.Duration { return time.Duration(us) * time.Microsecond }
	far, near, local := res.Group("far"), res.Group("near"), res.Group("local")
	// MQTT: TCP's handshake, then CONNECT and CONNACK: two round trips of 160 ms. MQTT-SN: CONNECT
	// and CONNACK, then REGISTER and REGACK for the publisher's topic: two of 60 ms (its gateway's
	// own MQTT connect to the broker is on loopback). The subscribers' connects cross no link.
	for _, c := range []struct {
		name     string
		p50      time.Duration
		low, top time.Duration
	}{
		{"far", ms(far.Latency.Connect.P50Micros), 300 * time.Millisecond, 480 * time.Millisecond},
		{"near", ms(near.Latency.Connect.P50Micros), 110 * time.Millisecond, 200 * time.Millisecond},
		{"local", ms(local.Latency.Connect.P50Micros), 0, 40 * time.Millisecond},
	} {
		t.Logf("group %s: connect p50 %v", c.name, c.p50)
		if c.p50 < c.low || c.p50 > c.top {
			t.Errorf("group %s: connect p50 %v, want %v to %v (its own link's round trips)", c.name, c.p50, c.low, c.top)
		}
	}
	for _, p := range res.Pairs {
		e2e := ms(p.EndToEnd.P50Micros)
		t.Logf("pair %s → %s: %d of %d, end-to-end p50 %v", p.From, p.To, p.Received, p.Expected, e2e)
		low := map[string]time.Duration{"far": 80 * time.Millisecond, "near": 30 * time.Millisecond}[p.From]
		if p.Received != p.Expected || e2e < low || e2e > low+40*time.Millisecond {
			t.Errorf("pair %s → %s: received %d of %d, end-to-end p50 %v, want %v and a little more", p.From, p.To, p.Received, p.Expected, e2e, low)
		}
	}
	if far.Network == nil || near.Network == nil || local.Network != nil {
		t.Errorf("networks: far %v, near %v, local %v", far.Network, near.Network, local.Network)
	}
}

// TestHTTP3GroupBesideAnMQTTBackend: HTTP/3 devices behind a link of their own (UDP, relayed as
// UDP) publish through msgbench's gateway, which serves TLS, to a plain MQTT backend group. The
// run's client TLS is the HTTP/3 group's alone: the backend used to dial the plain broker with
// TLS and was reset, and a group link relayed only TCP for anything but MQTT-SN.
func TestHTTP3GroupBesideAnMQTTBackend(t *testing.T) {
	if err := emulator.CheckPrivileges(); err != nil {
		t.Skip(err)
	}
	t.Parallel()
	mb, err := manifest.Parse([]byte(`
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: h3-group}
spec:
  protocol: mqtt
  qos: 1
  http: {version: "3"}
  topics: [{name: readings, pattern: "r/{index}", count: 2}]
  groups:
  - {name: sensors, count: 2, protocol: http, network: {profile: custom, delay: 20ms}, publish: {topics: readings, payloadBytes: 32, interval: 500ms}}
  - {name: backend, count: 1, subscribe: {filter: "r/#"}}
  workload: {warmup: 1s, duration: 3s}
`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), mb, Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if res.Phase != "Succeeded" || res.Sent < 10 || res.Received != res.Sent {
		t.Fatalf("phase %s: sent %d, received %d: %s", res.Phase, res.Sent, res.Received, res.Message)
	}
	// Each message crossed the sensors' link once, one way: 20 ms at least.
	if p50 := time.Duration(res.Group("backend").Latency.EndToEnd.P50Micros) * time.Microsecond; p50 < 20*time.Millisecond {
		t.Errorf("end-to-end p50 %v, want the link's 20 ms at least", p50)
	}
}
