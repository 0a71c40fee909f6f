package localrun

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/netem/emulator"
	"github.com/msgbench/msgbench/results"
)

// TestRadioStatesShowInLatency runs low-rate publishers on NB-IoT twice, without and with radio
// states. Each publisher sends every 4 s and its radio goes idle 1 s after its last packet (the
// PUBACK, some 1.6 s after the publish), so with radio states every publish first waits for the
// 1 s promotion: end-to-end latency grows by about that, the
// first message by at least it (each publisher's connection opens from idle too), and the
// result's network.radio counts the promotions.
func TestRadioStatesShowInLatency(t *testing.T) {
	if testing.Short() {
		t.Skip("-short (make test-unit): runs in make test")
	}
	if err := emulator.CheckPrivileges(); err != nil {
		t.Skipf("needs root: %v", err)
	}
	t.Parallel() // beside the other emulated-link runs, mostly waiting on its runs at 1 msg/s
	run := func(radio bool) *results.Result {
		t.Helper()
		doc := `
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: radio-latency}
spec:
  protocol: mqtt
  qos: 1
  network: {profile: nb-iot}
  workload: {publishers: 4, subscribers: 4, topics: 4, payloadBytes: 32, rate: 1, warmup: 3s, duration: 8s}
`
		var sets []string
		if radio {
			// The devices' energy too (docs/energy.md): nb-iot's power model, a 5000 mAh cell.
			sets = append(sets, "network.radio.inactivityTimer=1s", "network.radio.energy.batteryMilliampHours=5000")
		} else {
			// The run without radio states gives only minimums to compare with: 4 s (4
			// publishes) gives them as well as 8 s did.
			sets = append(sets, "workload.duration=4s")
		}
		mb, err := manifest.Parse([]byte(doc), sets...)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), mb, Options{Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	base, radio := run(false), run(true)
	ms := func(us int64) time.Duration { return time.Duration(us) * time.Microsecond }
	b, r := base.Latency, radio.Latency
	if b.EndToEnd == nil || r.EndToEnd == nil || b.FirstMessage == nil || r.FirstMessage == nil {
		t.Fatalf("latencies missing: %+v, %+v", b, r)
	}
	t.Logf("end-to-end p50 %v → %v, min %v → %v; first message min %v → %v",
		ms(b.EndToEnd.P50Micros), ms(r.EndToEnd.P50Micros), ms(b.EndToEnd.MinMicros), ms(r.EndToEnd.MinMicros),
		ms(b.FirstMessage.MinMicros), ms(r.FirstMessage.MinMicros))
	// Every publish waits 1 s for its promotion, and every connection opens from idle: the
	// radio run's minimum and median end-to-end latency and its quickest first message each lie
	// about 1 s above the run without radio states. 700 ms leaves room for a busy machine
	// slowing the runs unevenly; without radio states the difference is about 0.
	for _, c := range []struct {
		what        string
		radio, base int64
	}{
		{"end-to-end minimum", r.EndToEnd.MinMicros, b.EndToEnd.MinMicros},
		{"end-to-end median", r.EndToEnd.P50Micros, b.EndToEnd.MinMicros},
		{"first-message minimum", r.FirstMessage.MinMicros, b.FirstMessage.MinMicros},
	} {
		if d := ms(c.radio - c.base); d < 700*time.Millisecond {
			t.Errorf("%s: %v with radio states, %v above the run without (its minimum), want the 1 s promotion", c.what, ms(c.radio), d)
		}
	}
	if _, ok := base.Network.(map[string]any)["radio"]; ok {
		t.Errorf("network.radio without spec.network.radio")
	}
	nr, _ := radio.Network.(map[string]any)["radio"].(map[string]any)
	if nr == nil || nr["inactivityTimer"] != "1s" || nr["promotionDelay"] != "1s" || nr["pagingCycle"] != "2.56s" {
		t.Fatalf("network.radio %v, want nb-iot's numbers with the 1 s timer", nr)
	}
	// Every publish and every connection.
	if p, _ := nr["promotions"].(uint64); p < 8 {
		t.Errorf("network.radio counts %v promotions, want at least 8", nr["promotions"])
	}
	if h, _ := nr["holdMillis"].(float64); h < 8000 {
		t.Errorf("network.radio holdMillis %v, want at least 8 promotions of 1 s", nr["holdMillis"])
	}

	// The energy: every device (4 publishers, 4 subscribers) accounted over the whole window,
	// each state at the model's power, each promotion its 1 s, per message and battery life
	// following from the totals.
	if base.Energy != nil {
		t.Errorf("energy without spec.network.radio.energy: %+v", base.Energy)
	}
	e := radio.Energy
	if e == nil {
		t.Fatal("no energy with spec.network.radio.energy")
	}
	t.Logf("energy: %s", e.Summary())
	var seconds, mj float64
	for _, st := range e.States {
		seconds += st.Seconds
		mj += st.Millijoules
		if d := st.Millijoules - st.Seconds*st.MilliwattsSet; d > 1e-6*st.Millijoules+1e-9 || d < -1e-6*st.Millijoules-1e-9 {
			t.Errorf("%s: %.6g mJ for %.6g s at %g mW", st.State, st.Millijoules, st.Seconds, st.MilliwattsSet)
		}
		// A promotion counts when its packet goes on the air in the window, and its second is
		// cut at the window's edges: each device may have one cut at either end.
		if st.State == "promotion" && (st.Seconds < float64(e.Promotions-e.Devices) || st.Seconds > float64(e.Promotions+e.Devices)) {
			t.Errorf("%d promotions took %.3f s, want 1 s each (give or take one per device at the window's edges)", e.Promotions, st.Seconds)
		}
	}
	if e.Model != "nb-iot" || e.Devices != 8 || e.Seconds != radio.MeasuredSeconds || seconds < 8*e.Seconds*0.9999 || seconds > 8*e.Seconds*1.0001 {
		t.Errorf("model %s, %d devices, %.3f device-seconds over a %.3f s window; want 8 devices the whole window", e.Model, e.Devices, seconds, e.Seconds)
	}
	if e.Promotions < 8 || mj < e.Millijoules*0.9999 || mj > e.Millijoules*1.0001 {
		t.Errorf("%d promotions (want every publish's and delivery's), states %.6g mJ of %.6g", e.Promotions, mj, e.Millijoules)
	}
	if e.PerMessageMillijoules == nil || e.Messages != float64(radio.Sent+radio.ReceivedInWindow) || *e.PerMessageMillijoules != e.Millijoules/e.Messages {
		t.Errorf("per message %v over %v messages; sent %d, received in the window %d", e.PerMessageMillijoules, e.Messages, radio.Sent, radio.ReceivedInWindow)
	}
	if e.BatteryDays == nil || *e.BatteryDays != 5000/e.MeanMilliamps/24 || e.MeanMilliamps < 1 {
		t.Errorf("battery %v days at %.3f mA", e.BatteryDays, e.MeanMilliamps)
	}
}

// TestCheckRefusesBadRadio: a Go caller's spec.network.radio is checked before anything starts,
// the error naming the field.
func TestCheckRefusesBadRadio(t *testing.T) {
	mb, err := manifest.Parse([]byte("apiVersion: msgbench.io/v1alpha1\nkind: MessagingBenchmark\nmetadata: {name: r}\nspec: {protocol: mqtt, network: {profile: lte}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		radio v1alpha1.RadioSpec
		want  string
	}{
		{v1alpha1.RadioSpec{PagingCycle: &metav1.Duration{Duration: 4 * time.Hour}}, "spec.network.radio.pagingCycle: "},
		{v1alpha1.RadioSpec{InactivityTimer: &metav1.Duration{}}, "spec.network.radio.inactivityTimer: "},
	} {
		mb.Spec.Network.Radio = &c.radio
		if _, err := Check(&mb.Spec, Options{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %q", c.radio, err, c.want)
		}
	}
	mb.Spec.Network = v1alpha1.NetworkSpec{Profile: "wifi", Radio: &v1alpha1.RadioSpec{}}
	if _, err := Check(&mb.Spec, Options{}); err == nil || !strings.Contains(err.Error(), "spec.network.radio: only the nb-iot") {
		t.Errorf("radio on wifi without numbers: %v", err)
	}
}
