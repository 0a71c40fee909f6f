package localrun

import (
	"context"
	"math"
	"testing"

	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/netem/emulator"
	"github.com/msgbench/msgbench/results"
)

// TestSocketsAccountTheRadioAsTheEmulatorDoes: on Kubernetes a worker accounts its devices'
// radios from what their sockets wrote and read, with IP headers, TCP handshakes and ACKs added
// by rule (loadgen/radiolog); msgbench run's emulator sees every packet on the link. One run
// accounted both ways — MQTT over TCP, MQTT-SN over UDP, HTTP with a connection per request,
// each group behind its own NB-IoT link — gives each group the same promotions and an energy
// within 2 % and the same airtime within 3 % (docs/energy.md, "Energy on Kubernetes", quotes the figures).
func TestSocketsAccountTheRadioAsTheEmulatorDoes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short (make test-unit): runs in make test")
	}
	if err := emulator.CheckPrivileges(); err != nil {
		t.Skipf("needs root: %v", err)
	}
	t.Parallel() // beside the other emulated-link runs, mostly waiting on its low-rate run
	const radio = `
    network:
      profile: nb-iot
      jitter: 0s
      radio: {inactivityTimer: 1s, promotionDelay: 1ms, psmAfter: 1s, energy: {batteryMilliampHours: 1000}}
`
	// A promotion delay of 1 ms: on Kubernetes nothing holds a packet for the radio, so an
	// answer comes a round trip after the write; the emulator holding each promotion 500 ms would
	// move the sockets' reads, not the packets (the energy of a promotion is the same either way).
	doc := `
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: energy-sockets}
spec:
  protocol: mqtt
  qos: 1
  topics:
  - {name: a, pattern: "site/a/{index}", count: 2}
  - {name: b, pattern: "site/b/{index}", count: 2}
  - {name: c, pattern: "site/c/{index}", count: 2}
  groups:
  - name: tcp
    count: 2
    mqtt: {keepAliveSeconds: 10}
    publish: {topics: a, payloadBytes: 64, interval: 5s}` + radio + `  - name: udp
    count: 2
    protocol: mqtt-sn
    publish: {topics: b, payloadBytes: 64, interval: 5s}` + radio + `  - name: http
    count: 2
    protocol: http
    http: {keepAlive: false}
    publish: {topics: c, payloadBytes: 64, interval: 5s}` + radio + `  - name: backend
    count: 1
    subscribe: {filter: "site/#"}
  workload: {warmup: 4s, duration: 30s}
`
	mb, err := manifest.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	sockets := map[string]*results.Energy{}
	res, err := Run(context.Background(), mb, Options{Logf: t.Logf, sockets: func(res *results.Result) {
		for _, g := range res.Groups {
			sockets[g.Name] = g.Energy
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Phase != "Succeeded" {
		t.Fatalf("phase %s: %s", res.Phase, res.Message)
	}
	for _, name := range []string{"tcp", "udp", "http"} {
		emu, sock := res.Group(name).Energy, sockets[name]
		if emu == nil || sock == nil {
			t.Fatalf("group %s: emulator's energy %v, sockets' %v", name, emu, sock)
		}
		t.Logf("%s: emulator %.1f mJ, %d promotions, %.3f mA; sockets %.1f mJ, %d promotions, %.3f mA",
			name, emu.Millijoules, emu.Promotions, emu.MeanMilliamps, sock.Millijoules, sock.Promotions, sock.MeanMilliamps)
		if sock.Devices != emu.Devices || sock.Promotions != emu.Promotions {
			t.Errorf("%s: sockets count %d devices and %d promotions, the emulator %d and %d", name, sock.Devices, sock.Promotions, emu.Devices, emu.Promotions)
		}
		if d := math.Abs(sock.Millijoules-emu.Millijoules) / emu.Millijoules; d > 0.02 {
			t.Errorf("%s: sockets %.1f mJ, emulator %.1f mJ: %.1f %% apart", name, sock.Millijoules, emu.Millijoules, 100*d)
		}
		if sock.DeviceMilliamps != nil || emu.DeviceMilliamps != nil {
			t.Errorf("%s: the merged result keeps the workers' device currents", name)
		}
		for i, st := range sock.States {
			t.Logf("  %-10s emulator %8.3f s %9.1f mJ   sockets %8.3f s %9.1f mJ", st.State, emu.States[i].Seconds, emu.States[i].Millijoules, st.Seconds, st.Millijoules)
			// The bytes on the air: every packet the emulator saw, headers and ACKs included.
			if (st.State == "transmit" || st.State == "receive") && math.Abs(st.Seconds-emu.States[i].Seconds) > 0.03*emu.States[i].Seconds {
				t.Errorf("%s: %s %.3f s from the sockets, %.3f s on the link", name, st.State, st.Seconds, emu.States[i].Seconds)
			}
		}
	}
}
