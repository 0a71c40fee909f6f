package loadgen_test

import (
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
	mb, err := manifest.Parse([]byte(fleetSpec))
	if err != nil {
		t.Fatal(err)
	}
	res, _ := runAny(t, loadgen.Options{Spec: &mb.Spec, Address: b.Addr})
	if res.Phase != "Succeeded" {
		t.Fatalf("phase %s: %s", res.Phase, res.Message)
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
