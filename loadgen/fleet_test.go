package loadgen_test

import (
	"strings"
	"testing"

	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/loadgen"
	"github.com/msgbench/msgbench/results"
)

// fleetSpec has every kind of subscription a fleet uses: per-device topics, a shared
// subscription, a wildcard every dashboard holds, and a commander cycling over each device's own
// command topic, whose actuators each hold their own.
const fleetSpec = `
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: fleet}
spec:
  protocol: mqtt
  qos: 1
  topics:
    - {name: telemetry, pattern: "devices/{device}/telemetry", devices: sensors}
    - {name: commands, pattern: "devices/{device}/cmd", devices: actuators}
  groups:
    - name: sensors
      count: 6
      clientID: "{run}-sensor-{index}"
      publish: {topics: telemetry, payloadBytes: 32, rate: 300}
    - name: consumers
      count: 2
      subscribe: {filter: "devices/+/telemetry", share: backend}
    - name: dashboards
      count: 3
      qos: 0
      mqtt: {version: "5"}
      subscribe: {filter: "devices/#"}
    - name: commander
      count: 1
      publish: {topics: commands, payloadBytes: 100, rate: 120}
    - name: actuators
      count: 6
      subscribe: {topics: commands}
  workload: {warmup: 1s, duration: 3s}
`

// TestFleetDeliversExactlyWhatTheSubscriptionsCallFor runs the fleet against a real Mosquitto:
// every pair of groups receives exactly what the subscription graph expects — the shared
// subscription each reading once for its two members, each dashboard everything, each actuator
// only its own commands — and nothing goes where no subscription asks for it.
func TestFleetDeliversExactlyWhatTheSubscriptionsCallFor(t *testing.T) {
	t.Parallel() // its own broker
	b := startMosquitto(t, "")
	// The fleet's 18 clients connect 20 a second (workload.connectRate): the 11 subscribers, then
	// the 7 publishers.
	mb, err := manifest.Parse([]byte(strings.Replace(fleetSpec, "workload: {", "workload: {connectRate: 20, ", 1)))
	if err != nil {
		t.Fatal(err)
	}
	res, _ := runAny(t, loadgen.Options{Spec: &mb.Spec, Address: b.Addr})
	if res.Phase != "Succeeded" {
		t.Fatalf("phase %s: %s", res.Phase, res.Message)
	}
	if r := res.ConnectRamp; r == nil || r.Connections != 18 || r.TargetPerSecond != 20 || r.Seconds < (10+6)/20.0 {
		t.Errorf("connect ramp %+v: want 18 connections paced at 20/s (at least 0.8 s)", r)
	}
	g := map[string]*results.GroupResult{}
	for _, name := range []string{"sensors", "consumers", "dashboards", "commander", "actuators"} {
		if g[name] = res.Group(name); g[name] == nil {
			t.Fatalf("no group %s in %+v", name, res.Groups)
		}
	}
	sensors, commands := g["sensors"].Sent, g["commander"].Sent
	// 300 msg/s and 120 msg/s over a 3 s window.
	if sensors < 850 || sensors > 950 || commands < 330 || commands > 390 {
		t.Errorf("sent: sensors %d (want ~900), commander %d (want ~360)", sensors, commands)
	}
	want := map[[2]string]int64{
		{"sensors", "consumers"}:    sensors, // one member of the shared subscription each
		{"sensors", "dashboards"}:   3 * sensors,
		{"commander", "dashboards"}: 3 * commands,
		{"commander", "actuators"}:  commands, // each command to its one device
	}
	if len(res.Pairs) != len(want) {
		t.Errorf("pairs %+v, want %v", res.Pairs, want)
	}
	for _, p := range res.Pairs {
		e, ok := want[[2]string{p.From, p.To}]
		if !ok || p.Expected != e || p.Received != e || p.Lost != 0 || p.Duplicates != 0 {
			t.Errorf("pair %s → %s: expected %d, received %d, lost %d, duplicates %d; want %d exactly", p.From, p.To, p.Expected, p.Received, p.Lost, p.Duplicates, e)
		}
		if p.EndToEnd == nil || p.EndToEnd.Count != e {
			t.Errorf("pair %s → %s: end-to-end %+v, want %d latencies", p.From, p.To, p.EndToEnd, e)
		}
	}
	for name, exp := range map[string]int64{"consumers": sensors, "dashboards": 3 * (sensors + commands), "actuators": commands} {
		if gr := g[name]; gr.Expected != exp || gr.Received != exp || gr.Lost == nil || *gr.Lost != 0 {
			t.Errorf("%s: expected %d, received %d, lost %v; want %d", name, gr.Expected, gr.Received, gr.Lost, exp)
		}
	}
	if total := sensors*4 + commands*4; res.Expected != total || res.Received != total || *res.Lost != 0 {
		t.Errorf("run: expected %d, received %d, lost %d; want %d", res.Expected, res.Received, *res.Lost, total)
	}
	if g["dashboards"].Protocol != "MQTT 5.0" || g["sensors"].Protocol != "MQTT 3.1.1" || g["dashboards"].QoS != 0 {
		t.Errorf("dashboards speak %s at QoS %d, sensors %s", g["dashboards"].Protocol, g["dashboards"].QoS, g["sensors"].Protocol)
	}
	if g["sensors"].Subscribers != 0 || g["sensors"].Publishers != 6 || g["sensors"].Latency.PublishAck == nil || g["sensors"].Latency.EndToEnd != nil {
		t.Errorf("sensors: %+v", g["sensors"])
	}
	for name, gr := range g {
		if gr.Wire.Connections != int64(gr.Publishers+gr.Subscribers) || gr.Latency.Connect == nil || gr.Latency.Connect.Count != gr.Wire.Connections {
			t.Errorf("%s: %d connections, connect %+v", name, gr.Wire.Connections, gr.Latency.Connect)
		}
	}
}

const lateSpec = `
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: late}
spec:
  protocol: mqtt
  qos: 1
  topics:
    - {name: notice, pattern: "fleet/notice"}
    - {name: status, pattern: "fleet/status"}
  groups:
    - name: updater
      count: 1
      start: 500ms
      publish: {topics: notice, payloadBytes: 64, messages: 1, retain: true}
    - name: ticker
      count: 1
      publish: {topics: status, payloadBytes: 32, rate: 100}
    - name: online
      count: 5
      subscribe: {filter: "fleet/#"}
    - name: late
      count: 4
      start: 2s
      subscribe: {filter: "fleet/#"}
  workload: {warmup: 0s, duration: 3s}
`

// TestLateGroupGetsTheRetainedMessage: a group that joins after a retained notice went out gets
// it from its new subscriptions, counted apart (one each, never as a delivery the subscriptions
// call for), and of the steady flow exactly what was sent once all of its members had
// subscribed; the devices online all along get the notice as an ordinary delivery.
func TestLateGroupGetsTheRetainedMessage(t *testing.T) {
	t.Parallel() // its own broker
	b := startMosquitto(t, "")
	mb, err := manifest.Parse([]byte(lateSpec))
	if err != nil {
		t.Fatal(err)
	}
	for run := range 2 { // the second finds no retained message left by the first
		res, _ := runAny(t, loadgen.Options{Spec: &mb.Spec, Address: b.Addr})
		if res.Phase != "Succeeded" || res.Errors != 0 {
			t.Fatalf("run %d: phase %s, %d errors: %s", run, res.Phase, res.Errors, res.Message)
		}
		online, late, ticks := res.Group("online"), res.Group("late"), res.Group("ticker").Sent
		if res.Group("updater").Sent != 1 || ticks < 250 {
			t.Fatalf("updater sent %d, ticker %d", res.Group("updater").Sent, ticks)
		}
		if online.Expected != 5*(1+ticks) || online.Received != online.Expected || online.Retained != nil {
			t.Errorf("online: expected %d, received %d, retained %+v; want %d, none retained", online.Expected, online.Received, online.Retained, 5*(1+ticks))
		}
		if late.Retained == nil || late.Retained.Expected != 4 || late.Retained.Received != 4 {
			t.Errorf("late: retained %+v, want 4 of 4", late.Retained)
		}
		// It joined 2 s into a 3 s run: about a third of the ticks, each to its four members.
		if late.Expected <= 0 || late.Expected >= 4*ticks || late.Expected%4 != 0 || late.Received != late.Expected || *late.Lost != 0 {
			t.Errorf("late: expected %d, received %d, lost %d of %d ticks", late.Expected, late.Received, *late.Lost, ticks)
		}
		for _, p := range res.Pairs {
			if p.Received != p.Expected || p.Lost != 0 {
				t.Errorf("pair %s → %s: received %d of %d", p.From, p.To, p.Received, p.Expected)
			}
			if want := map[bool]int64{true: 4}[p.From == "updater" && p.To == "late"]; p.Retained != want {
				t.Errorf("pair %s → %s: %d retained, want %d", p.From, p.To, p.Retained, want)
			}
		}
	}
}
