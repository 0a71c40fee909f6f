package loadgen_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/loadgen"
)

// TestSlowRampOffersTheWholeSchedule: publishers connecting more slowly than the warm-up lasts
// used to start their schedules late, so the slots before their connect were neither sent nor
// counted (401 of 600 sent, unsent 0, Succeeded). Every client now connects before the start:
// the window offers its whole schedule, and sent + unsent is exactly what it put there.
func TestSlowRampOffersTheWholeSchedule(t *testing.T) {
	t.Parallel() // its own broker
	b := startMosquitto(t, "")
	spec := baseSpec()
	spec.QoS = 0
	spec.Workload.Publishers, spec.Workload.Subscribers, spec.Workload.Topics = 60, 1, 1
	spec.Workload.ConnectRate = 60 // a one-second ramp
	spec.Workload.Rate = 120
	spec.Workload.Warmup.Duration = 0
	spec.Workload.Duration.Duration = 2 * time.Second
	res := run(t, spec, loadgen.Options{Address: b.Addr})
	if got := res.Sent + res.Unsent; got != 240 {
		t.Errorf("sent %d + unsent %d = %d, want the 240 the schedule puts in the window (120/s × 2 s)", res.Sent, res.Unsent, got)
	}
	if res.Sent < 235 {
		t.Errorf("sent %d of 240: the window did not offer its whole load", res.Sent)
	}
	if res.ConnectRamp == nil || res.ConnectRamp.Connections != 61 {
		t.Errorf("connect ramp %+v, want 61 connections measured", res.ConnectRamp)
	}
}

// TestStalledBrokerFails: a broker frozen (SIGSTOP) for longer than the window's end leaves most
// of the schedule unsent. The allowance no longer grows with the slowest acknowledgement (the
// stall itself), so the run fails instead of passing with "publish ack max 8 s".
func TestStalledBrokerFails(t *testing.T) {
	t.Parallel() // its own broker
	b := startMosquitto(t, "")
	spec := baseSpec()
	spec.QoS = 1
	spec.Workload.Publishers, spec.Workload.Subscribers, spec.Workload.Topics = 1, 1, 1
	spec.Workload.Rate = 100
	spec.Workload.Warmup.Duration = 500 * time.Millisecond
	spec.Workload.Duration.Duration = 2 * time.Second
	go func() {
		time.Sleep(time.Second) // half a second into the window
		_ = syscall.Kill(b.PID(), syscall.SIGSTOP)
		time.Sleep(3 * time.Second)
		_ = syscall.Kill(b.PID(), syscall.SIGCONT)
	}()
	t.Cleanup(func() { _ = syscall.Kill(b.PID(), syscall.SIGCONT) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	spec.Workload.TimelineInterval.Duration = 100 * time.Millisecond
	res, err := loadgen.Run(ctx, loadgen.Options{Name: "stall", Spec: spec, Address: b.Addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("phase %s: sent %d unsent %d, ack %+v: %s", res.Phase, res.Sent, res.Unsent, res.Latency.PublishAck, res.Message)
	if res.Phase != "Failed" || res.Unsent < 50 {
		t.Errorf("phase %s with %d unsent of %d: a broker frozen through the window's end must fail the run", res.Phase, res.Unsent, res.Sent+res.Unsent)
	}
}

// TestWireBytesPerMessageExcludeWarmup: bytes per message divide bytes and messages of the same
// window. It used to divide every byte of the run, warm-up included, by the window's messages: a
// 3 s warm-up before a 1 s window tripled it.
func TestWireBytesPerMessageExcludeWarmup(t *testing.T) {
	t.Parallel() // its own broker
	b := startMosquitto(t, "")
	perMessage := func(warmup time.Duration) float64 {
		spec := baseSpec()
		spec.Workload.Publishers, spec.Workload.Subscribers, spec.Workload.Topics = 1, 1, 1
		spec.Workload.Rate = 200
		spec.Workload.Warmup.Duration = warmup
		spec.Workload.Duration.Duration = time.Second
		res := run(t, spec, loadgen.Options{Address: b.Addr})
		if res.Wire.BytesPerMessage == nil {
			t.Fatalf("warm-up %s: no bytesPerMessage", warmup)
		}
		return *res.Wire.BytesPerMessage
	}
	short, long := perMessage(200*time.Millisecond), perMessage(3*time.Second)
	t.Logf("bytes per message: %.1f after a 200 ms warm-up, %.1f after 3 s", short, long)
	if long > short*1.1 || long < short*0.9 {
		t.Errorf("bytes per message %.1f after a 3 s warm-up, %.1f after 200 ms: the warm-up's bytes are counted", long, short)
	}
	// QoS 1, 64 B payload, one subscriber: PUBLISH up (2+2+len("msgbench-0")+64 … ) and down, PUBACK
	// both ways; a few hundred bytes, never the whole run's.
	if short > 300 {
		t.Errorf("bytes per message %.1f, want under 300 for a 64 B QoS 1 message", short)
	}
}

// TestDutyCycleWindowIsObserved: a duty-cycled fleet with one wake in the window used to report
// the whole window as measured from a process that ended after the wake. The window now lasts
// as long as it says: the devices sleep until its end.
func TestDutyCycleWindowIsObserved(t *testing.T) {
	t.Parallel() // its own broker
	b := startMosquitto(t, "")
	spec := baseSpec()
	spec.Workload.Publishers, spec.Workload.Subscribers, spec.Workload.Topics = 2, 1, 1
	spec.Workload.Warmup.Duration = 0
	spec.Workload.Duration.Duration = 2 * time.Second
	spec.Workload.DutyCycle = &v1alpha1.DutyCycleSpec{Period: dur(3 * time.Second), MessagesPerWake: 1} // wakes at 0 and 1.5 s, then none before 3 s
	began := time.Now()
	res := run(t, spec, loadgen.Options{Address: b.Addr})
	took := time.Since(began)
	if took < 2*time.Second {
		t.Errorf("the run took %s, yet measured %.2f s", took, res.MeasuredSeconds)
	}
	if res.MeasuredSeconds < 1.99 || res.MeasuredSeconds > 2.01 {
		t.Errorf("measured %.2f s, want 2", res.MeasuredSeconds)
	}
	if res.Sent != 2 || res.Throughput.SentPerSecond != 1 {
		t.Errorf("sent %d at %.2f/s, want 2 at 1/s over the 2 s window", res.Sent, res.Throughput.SentPerSecond)
	}
}
