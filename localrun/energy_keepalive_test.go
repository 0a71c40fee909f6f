package localrun

import (
	"context"
	"testing"

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
