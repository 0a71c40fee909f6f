package controllers_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/results"
)

// Energy on Kubernetes: the API server admits spec.groups[].network.radio with energy, Chaos
// Mesh applies the sensors' link, and the sensors' worker accounts their radios from what their
// sockets wrote and read (loadgen/radiolog); the merged result carries the group's energy over
// its devices, with the caveat that says the radio was accounted, not emulated.
func TestEnergyOnKubernetes(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	startOperatorWith(t, ns, env.Config, confirmWithin30s)
	startKubelet(t, ns, nil)
	startFakeChaosMesh(t, ns, "injected.yaml")
	createBenchmark(t, ns, "energy-k8s", `
protocol: mqtt
qos: 1
topics:
- {name: readings, pattern: "site/sensors/{index}", count: 3}
groups:
- name: sensors
  count: 3
  network:
    profile: nb-iot
    radio: {inactivityTimer: 1s, psmAfter: 1s, energy: {batteryMilliampHours: 1000}}
  publish: {topics: readings, payloadBytes: 64, interval: 2s}
- name: backend
  count: 1
  subscribe: {filter: "site/#"}
workload: {warmup: 1s, duration: 6s}`)
	mb := waitFinished(t, ns, "energy-k8s", 90*time.Second)
	if mb.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("phase %s: %s", mb.Status.Phase, mb.Status.Message)
	}
	res := resultConfigMap(t, ns, mb)
	g := res.Group("sensors")
	if g == nil || g.Energy == nil {
		t.Fatalf("no energy for the sensors: %+v", res.Groups)
	}
	e := g.Energy
	t.Logf("sensors: %s", e.Summary())
	if e.Devices != 3 || e.Model != "nb-iot" {
		t.Errorf("energy of %d devices on %q, want the 3 sensors on nb-iot", e.Devices, e.Model)
	}
	// Every reading finds the radio asleep (1 s tail, then 1 s idle, then PSM; one every 2 s):
	// a promotion each, three sensors over 6 s.
	if e.Promotions < 3*3-3 || e.Promotions > 3*3+3 {
		t.Errorf("%d promotions, want about 9", e.Promotions)
	}
	if e.PerMessageMillijoules == nil || e.Messages < 6 || e.BatteryDays == nil || e.DeviceMilliampsP99 < e.DeviceMilliampsP50 {
		// The counts it comes from, should it fail again (CI once saw 0 messages in a Succeeded run).
		t.Errorf("energy %+v: no figure per message, or no battery life, or no spread; the run sent %d, expected %d, received %d (%d in the window), lost %d, errors %d; the sensors sent %d; pairs %+v; workers %+v",
			e, res.Sent, res.Expected, res.Received, res.ReceivedInWindow, *res.Lost, res.Errors, g.Sent, res.Pairs, res.Workers)
	}
	if e.DeviceMilliamps != nil {
		t.Errorf("the merged result keeps the worker's device currents: %v", e.DeviceMilliamps)
	}
	var seconds float64
	for _, st := range e.States {
		seconds += st.Seconds
	}
	if want := 3 * e.Seconds; math.Abs(seconds-want) > 0.01*want {
		t.Errorf("the states hold %.2f device-seconds, want every device's window, %.2f", seconds, want)
	}
	if res.Energy != nil {
		t.Errorf("run energy %+v: only the sensors have a radio", res.Energy)
	}
	var caveat *results.Caveat
	for i, c := range res.Caveats {
		if c.Type == results.CaveatRadioAccountedOnly {
			caveat = &res.Caveats[i]
		}
	}
	if caveat == nil || !strings.Contains(caveat.Message, "group sensors") {
		t.Errorf("caveats %+v: none says the sensors' radio was accounted from their sockets", res.Caveats)
	}
}
