package main

import (
	"context"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/results"
)

// countingRelay forwards every TCP connection it accepts to target and counts them.
type countingRelay struct {
	ln    net.Listener
	conns atomic.Int64
	wg    sync.WaitGroup
}

func newCountingRelay(t *testing.T, target string) *countingRelay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &countingRelay{ln: ln}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.conns.Add(1)
			r.wg.Add(1)
			go func() {
				defer r.wg.Done()
				defer c.Close()
				up, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer up.Close()
				done := make(chan struct{})
				go func() { _, _ = io.Copy(up, c); _ = up.(*net.TCPConn).CloseWrite(); close(done) }()
				_, _ = io.Copy(c, up)
				_ = c.(*net.TCPConn).CloseWrite()
				<-done
			}()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); r.wg.Wait() })
	return r
}

// TestLoadgenEndpoint: --endpoint GROUP=ADDR sends that group's clients to ADDR and no other
// group's. The sensors connect through a relay that counts connections, the backend straight to
// --broker: the relay sees exactly the sensors' connections, and every reading reaches the
// backend through the broker. Were the flag ignored, the relay would see none. A group the plan
// does not have is refused (it would silently connect to --broker).
func TestLoadgenEndpoint(t *testing.T) {
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Stop() }()
	relay := newCountingRelay(t, b.Addr)
	const sensors = 12
	out := filepath.Join(t.TempDir(), "r.json")
	fanIn := repo("config", "samples", "fleets", "telemetry-fan-in.yaml")
	set := []string{"--set", "groups[sensors].count=12", "--set", "groups[sensors].publish.interval=1s",
		"--set", "workload.duration=2s", "--set", "workload.warmup=500ms"}
	_, err = msgbench(t, append([]string{"loadgen", "-f", fanIn, "--broker", b.Addr, "--endpoint", "sensors=" + relay.ln.Addr().String(),
		"--out", out}, set...)...)
	if err != nil {
		t.Fatal(err)
	}
	if n := relay.conns.Load(); n != sensors {
		t.Errorf("the relay given as the sensors' --endpoint took %d connections, want the %d sensors' (and not the backend's)", n, sensors)
	}
	r, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var pair *results.PairResult
	for i := range r.Pairs {
		if r.Pairs[i].From == "sensors" && r.Pairs[i].To == "backend" {
			pair = &r.Pairs[i]
		}
	}
	if pair == nil || pair.Expected == 0 || pair.Received != pair.Expected {
		t.Errorf("sensors → backend: %+v; want every reading received", pair)
	}

	// The same with no broker at --broker: the backend cannot connect, the sensors still do.
	_, err = msgbench(t, append([]string{"loadgen", "-f", fanIn, "--broker", "127.0.0.1:1", "--endpoint", "sensors=" + relay.ln.Addr().String()}, set...)...)
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("backend without a broker at --broker: %v, want a connect error naming 127.0.0.1:1", err)
	}

	_, err = msgbench(t, append([]string{"loadgen", "-f", fanIn, "--broker", b.Addr, "--endpoint", "sensor=" + relay.ln.Addr().String()}, set...)...)
	if err == nil || !strings.Contains(err.Error(), `--endpoint sensor=`) || !strings.Contains(err.Error(), "sensors, backend") {
		t.Errorf("an --endpoint naming no group: %v", err)
	}
	_, err = msgbench(t, "loadgen", "-f", repo("config", "samples", "mqtt-qos1.yaml"), "--broker", b.Addr, "--endpoint", "default=127.0.0.1:1")
	if err == nil || !strings.Contains(err.Error(), "no device groups") {
		t.Errorf("an --endpoint for a flat benchmark: %v", err)
	}
}
