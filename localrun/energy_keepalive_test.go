package localrun

import (
	"context"
	"testing"
	"time"

	"github.com/msgbench/msgbench/energy"

	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/netem/emulator"
)

// TestKeepAliveBatteryCurve: devices that only keep their MQTT session (subscribed to their
// commands, none sent) on NB-IoT with radio states, one group per keep-alive, each behind its own
// link. Their battery life follows the model's arithmetic (docs/energy.md, "A keep-alive sweep"):
//
//   - keep-alive 1 s, under the 1 s inactivity timer: the next PINGREQ comes while the radio is
//     still connected, so it never leaves: 50 mA (nb-iot's connected current) all the time, but
//     for the exchange's airtimes (165 mA transmitting): 51.6 mA;
//   - keep-alive 4 s and 8 s: per period one promotion (0.5 s at 50 mA), the exchange — PINGREQ
//     (54 bytes, 60 kbit/s) up, 200 ms up the link, the PINGRESP (54 bytes, 30 kbit/s) after
//     400 ms down, the device's TCP ACK (52 bytes) within Linux's 40 ms delayed-ACK — connected
//     through it and the 1 s tail after it, 1 s idle (0.4 mA), PSM (3 µA) for the rest.
//
// The window (24 s) holds whole periods of each, so the window's phase does not matter.
func TestKeepAliveBatteryCurve(t *testing.T) {
	if testing.Short() {
		t.Skip("-short (make test-unit): runs in make test")
	}
	if err := emulator.CheckPrivileges(); err != nil {
		t.Skipf("needs root: %v", err)
	}
	t.Parallel() // beside the other emulated-link runs, mostly waiting on its 28 s of run
	doc := `
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: keepalive-battery}
spec:
  protocol: mqtt
  qos: 0
  topics:
  - {name: data, pattern: backend/data}
  groups:
  - {name: backend, count: 1, publish: {topics: data, payloadBytes: 16, rate: 2}}
  - {name: sink, count: 1, subscribe: {topics: data}}
`
	for _, ka := range []string{"ka1", "ka4", "ka8"} {
		doc += `  - name: ` + ka + `
    count: 1
    mqtt: {keepAliveSeconds: ` + ka[2:] + `}
    subscribe: {filter: cmd/` + ka + `/+}
    network:
      profile: nb-iot
      jitter: 0s
      radio: {inactivityTimer: 1s, promotionDelay: 500ms, psmAfter: 1s, energy: {batteryMilliampHours: 1000}}
`
	}
	doc += `  workload: {warmup: 4s, duration: 24s}
`
	mb, err := manifest.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), mb, Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	const (
		volts                  = 3.6
		tx, rx, conn, idle, ps = 165 * volts, 50 * volts, 50 * volts, 0.4 * volts, 0.003 * volts // mW, the nb-iot model
	)
	a1, a2, a3 := 54*8/60000.0, 54*8/30000.0, 52*8/60000.0 // airtimes (s)
	// cycle is one keep-alive period's energy (mJ) with the TCP ACK ack seconds after the PINGRESP.
	cycle := func(k, ack float64) float64 {
		span := a1 + 0.2 + 0.4 + a2 + ack + a3
		return 0.5*conn + (a1+a3)*tx + a2*rx + (span-a1-a2-a3+1)*conn + 1*idle + (k-0.5-span-1-1)*ps
	}
	// always is a second of keep-alive 1 s: connected throughout but for the three airtimes.
	always := (1-a1-a2-a3)*conn + (a1+a3)*tx + a2*rx
	days := func(mJ, seconds float64) float64 { return 1000 / (mJ / seconds / volts) / 24 }
	var prev float64
	for _, c := range []struct {
		group  string
		lo, hi float64 // expected battery days
	}{
		{"ka1", days(always, 1), days(always, 1)},
		{"ka4", days(cycle(4, 0.04), 4), days(cycle(4, 0), 4)},
		{"ka8", days(cycle(8, 0.04), 8), days(cycle(8, 0), 8)},
	} {
		g := res.Group(c.group)
		if g == nil || g.Energy == nil || g.Energy.BatteryDays == nil {
			t.Fatalf("group %s: no energy (%+v)", c.group, g)
		}
		e := g.Energy
		d := *e.BatteryDays
		t.Logf("%s: %.1f mJ in %.1f s, %d promotions, mean %.3f mA: %.4f days on 1000 mAh (arithmetic %.4f–%.4f)",
			c.group, e.Millijoules, e.Seconds, e.Promotions, e.MeanMilliamps, d, c.lo, c.hi)
		// 1 % on top of the delayed ACK's range: the machine's scheduling of the timers.
		if d < c.lo*0.99 || d > c.hi*1.01 {
			t.Errorf("%s: %.4f battery days, the model's arithmetic gives %.4f–%.4f", c.group, d, c.lo, c.hi)
		}
		if e.Devices != 1 {
			t.Errorf("%s: %d devices, want 1", c.group, e.Devices)
		}
		if d <= prev {
			t.Errorf("%s: battery life %.4f days, not longer than the shorter keep-alive's %.4f", c.group, d, prev)
		}
		prev = d
	}
	if p := res.Group("ka4").Energy.Promotions; p != 6 {
		t.Errorf("keep-alive 4 s: %d promotions in 24 s, want 6", p)
	}
	if p := res.Group("ka8").Energy.Promotions; p != 3 {
		t.Errorf("keep-alive 8 s: %d promotions in 24 s, want 3", p)
	}
}

// TestADeviceIsAClientNotAConnection: HTTP/1.1 publishers without keep-alive open a connection
// per message; each publisher is still one device with one radio, its connections' packets one
// timeline (the devices' count is the clients', not the connections').
func TestADeviceIsAClientNotAConnection(t *testing.T) {
	if testing.Short() {
		t.Skip("-short (make test-unit): runs in make test")
	}
	if err := emulator.CheckPrivileges(); err != nil {
		t.Skipf("needs root: %v", err)
	}
	mb, err := manifest.Parse([]byte(`
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: http-devices}
spec:
  protocol: http
  http: {version: "1.1", keepAlive: false}
  network:
    profile: lte
    radio: {inactivityTimer: 1s, energy: {}}
  workload: {publishers: 2, subscribers: 1, topics: 1, payloadBytes: 16, rate: 2, warmup: 2s, duration: 6s}
`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), mb, Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	e := res.Energy
	if e == nil {
		t.Fatal("no energy")
	}
	t.Logf("sent %d, connections %v; energy: %d devices, %d promotions, %.0f mJ", res.Sent, res.Wire.Connections, e.Devices, e.Promotions, e.Millijoules)
	if e.Devices != 3 {
		t.Errorf("%d devices, want 3 (2 publishers and a subscriber, however many connections)", e.Devices)
	}
	if res.Sent < 8 {
		t.Errorf("sent %d, want about 12", res.Sent)
	}
}

func TestByDevice(t *testing.T) {
	p := func(at time.Duration) energy.Packet { return energy.Packet{At: at, Up: true, Bytes: 60} }
	flows := []emulator.DeviceTimeline{
		{Device: "tcp/1000", Packets: []energy.Packet{p(1), p(5)}},
		{Device: "tcp/1001", Packets: []energy.Packet{p(2)}},
		{Device: "tcp/1002", Packets: []energy.Packet{p(3), p(4)}},
		{Device: "udp/1000", Packets: []energy.Packet{p(9)}},
	}
	owners := map[string]string{"tcp/1000": "a", "tcp/1002": "a", "tcp/1001": "b"}
	got := byDevice(flows, func(f string) string { return owners[f] })
	if len(got) != 3 || len(got[0]) != 4 || len(got[1]) != 1 || len(got[2]) != 1 {
		t.Fatalf("devices %v, want a (4 packets), b (1), udp/1000 (1)", got)
	}
	for i, at := range []time.Duration{1, 3, 4, 5} {
		if got[0][i].At != at {
			t.Errorf("device a's packets %v, want in time order", got[0])
		}
	}
}
