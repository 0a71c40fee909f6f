package loadgen_test

import (
	"context"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/msgbench/msgbench/loadgen"
	"github.com/msgbench/msgbench/results"
)

// runAny runs a worker and returns its result whatever its phase.
func runAny(t *testing.T, o loadgen.Options) (*results.Result, time.Duration) {
	t.Helper()
	o.Name = "test"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	res, err := loadgen.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	return res, time.Since(start)
}

// TestMessagesAllInWarmupFail: with workload.messages every message can go out during the
// warm-up; the run measured nothing and must say so (it said Succeeded with "measured 0.00 s,
// sent 0", and a negative load-generator CPU time).
func TestMessagesAllInWarmupFail(t *testing.T) {
	t.Parallel() // its own broker
	b := startMosquitto(t, "")
	spec := baseSpec()
	spec.Workload.Messages = 100
	spec.Workload.Rate = 2000
	spec.Workload.Warmup.Duration = time.Second
	res, _ := runAny(t, loadgen.Options{Spec: spec, Address: b.Addr})
	if res.Phase != "Failed" || !strings.HasPrefix(res.Message, "measured nothing") || !strings.Contains(res.Message, "workload.warmup") {
		t.Errorf("phase %s, message %q; want Failed, measured nothing, naming workload.warmup", res.Phase, res.Message)
	}
	if res.Sent != 0 || res.MeasuredSeconds != 0 {
		t.Errorf("sent %d in %.2f s; want nothing measured", res.Sent, res.MeasuredSeconds)
	}
	if res.Resources.LoadgenCPUSeconds < 0 {
		t.Errorf("loadgenCPUSeconds %v < 0", res.Resources.LoadgenCPUSeconds)
	}
}

// slowWriter takes delay per write: a link that cannot carry the rate asked for.
type slowWriter struct {
	net.Conn
	delay time.Duration
}

func (s *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(s.delay)
	return s.Conn.Write(p)
}

// TestOpenLoopStopsWithTheWindow: an open loop faster than the link (QoS 1, one message in
// flight, 20 ms per write: at most 50/s of the 400/s asked) stops publishing when the window
// ends, counts what it could not send as unsent, and fails for not sustaining the offered load.
// It used to publish its backlog for ever (an MQTT-SN run over a lossy link was still
// "Measuring 1m53s/10s" when killed).
func TestOpenLoopStopsWithTheWindow(t *testing.T) {
	t.Parallel() // its own broker
	b := startMosquitto(t, "")
	spec := baseSpec()
	spec.Workload.Publishers, spec.Workload.Subscribers, spec.Workload.Topics = 1, 1, 1
	spec.MQTT.Inflight = 1
	spec.Workload.Rate = 400
	spec.Workload.Warmup.Duration = 0
	spec.Workload.Duration.Duration = 2 * time.Second
	var d net.Dialer
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, address)
		if err != nil {
			return nil, err
		}
		return &slowWriter{Conn: c, delay: 20 * time.Millisecond}, nil
	}
	res, took := runAny(t, loadgen.Options{Spec: spec, Address: b.Addr, Dial: dial})
	t.Logf("took %s: sent %d, unsent %d, measured %.2f s, %s", took, res.Sent, res.Unsent, res.MeasuredSeconds, res.Message)
	if took > 6*time.Second {
		t.Errorf("the run took %s for a 2 s window: publishing went on after it", took)
	}
	// The schedule starts once the publisher is connected (~40 ms of slow writes into the
	// window here, without warm-up).
	if res.Sent+res.Unsent < 770 || res.Sent+res.Unsent > 800 {
		t.Errorf("sent %d + unsent %d; want the ~800 the schedule called for", res.Sent, res.Unsent)
	}
	if res.Sent > 110 || res.Unsent < 690 {
		t.Errorf("sent %d, unsent %d: the link carries at most 50/s", res.Sent, res.Unsent)
	}
	if res.MeasuredSeconds != 2 {
		t.Errorf("measured %.3f s, want 2", res.MeasuredSeconds)
	}
	if res.Throughput.OfferedPerSecond != 400 || res.Throughput.SentPerSecond > 55 {
		t.Errorf("offered %.0f/s, sent %.0f/s", res.Throughput.OfferedPerSecond, res.Throughput.SentPerSecond)
	}
	if res.Phase != "Failed" || !strings.Contains(res.Message, "offered load was not sustained") || !hasCaveat(res, results.CaveatOfferedLoadNotSustained) {
		t.Errorf("phase %s, message %q, caveats %+v", res.Phase, res.Message, res.Caveats)
	}
}

// TestMeasuredIsTheWindowThatRan: a broker killed one second into a three-second window leaves
// a one-second measurement, and rates over that second (the result said 3.00 s and divided by
// it).
func TestMeasuredIsTheWindowThatRan(t *testing.T) {
	t.Parallel() // its own broker
	b := startMosquitto(t, "")
	spec := baseSpec()
	spec.Workload.Rate = 400
	spec.Workload.Warmup.Duration = 0
	spec.Workload.Duration.Duration = 3 * time.Second
	ready := func() {
		go func() {
			time.Sleep(time.Second + 100*time.Millisecond) // the start gate adds nothing here
			_ = syscall.Kill(b.PID(), syscall.SIGKILL)
		}()
	}
	res, _ := runAny(t, loadgen.Options{Spec: spec, Address: b.Addr, Ready: ready})
	t.Logf("measured %.3f s, sent %d (%.0f/s): %s", res.MeasuredSeconds, res.Sent, res.Throughput.SentPerSecond, res.Message)
	if res.MeasuredSeconds < 0.9 || res.MeasuredSeconds > 1.4 {
		t.Errorf("measured %.3f s; the broker died about 1.1 s into the window", res.MeasuredSeconds)
	}
	if r := res.Throughput.SentPerSecond; r < 350 || r > 450 {
		t.Errorf("sent %.0f/s; want about the 400/s sent while the broker lived", r)
	}
	if res.Phase != "Failed" || !strings.Contains(res.Message, "stopped early") || !hasCaveat(res, results.CaveatEndedEarly) {
		t.Errorf("phase %s, message %q", res.Phase, res.Message)
	}
}

func hasCaveat(r *results.Result, typ string) bool {
	for _, c := range r.Caveats {
		if c.Type == typ {
			return true
		}
	}
	return false
}
