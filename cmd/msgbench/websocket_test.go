package main

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/results"
)

// TestRunOverWebSocket runs `msgbench run --set mqtt.transport=websocket` against the local
// Mosquitto, over ws at QoS 0, 1 and 2 and over wss, beside the same run over TCP: exact delivery
// (600 of 600), the protocol as spoken in the result, and the wire figures the WebSocket adds:
// every client's upgrade (well over 150 bytes: the request alone is 160+) in connectBytes, and up
// to 6 bytes (2-byte header + 4-byte mask key, less when a frame carries several packets) per
// publish in publishBytesPerMessage.
func TestRunOverWebSocket(t *testing.T) {
	run := func(t *testing.T, name string, set ...string) *results.Result {
		t.Helper()
		out := t.TempDir()
		args := []string{"run", "-q", "-f", repo("config", "samples", "mqtt-qos1.yaml"), "--out", out, "--name", name,
			"--set", "workload.publishers=2", "--set", "workload.subscribers=2", "--set", "workload.topics=2",
			"--set", "workload.payloadBytes=64", "--set", "workload.rate=400", "--set", "workload.messages=600",
			"--set", "workload.warmup=0s", "--set", "timeout=2m"}
		for _, s := range set {
			args = append(args, "--set", s)
		}
		if output, err := msgbenchProcess(t, 3*time.Minute, nil, args...); err != nil {
			t.Fatalf("%v\n%s", err, output)
		}
		r, err := results.ReadFile(filepath.Join(out, name, "latest", "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		checkSanity(t, r)
		if r.Sent != 600 || r.Received != 600 {
			t.Errorf("sent %d, received %d: want 600 each", r.Sent, r.Received)
		}
		if !strings.HasPrefix(r.Environment.Broker, "mosquitto ") {
			t.Errorf("broker %q, want the local Mosquitto", r.Environment.Broker)
		}
		return r
	}
	// The five runs side by side, each a process of its own (msgbenchProcess) with its own
	// Mosquitto: a fixed message count (no open-loop rate to sustain), and the wire figures
	// compared are bytes, not times.
	var mu sync.Mutex
	got := map[string]*results.Result{}
	subtests := []subtest{{name: "tcp-qos1", f: func(t *testing.T) {
		r := run(t, "tcp-qos1", "qos=1")
		mu.Lock()
		got["tcp-qos1"] = r
		mu.Unlock()
	}}}
	for _, tc := range []struct {
		name string
		set  []string
	}{
		{"ws-qos0", []string{"qos=0"}},
		{"ws-qos1", []string{"qos=1"}},
		{"ws-qos2", []string{"qos=2"}},
		{"wss-qos1-tls13", []string{"qos=1", "tls.enabled=true", `tls.version="1.3"`}},
	} {
		subtests = append(subtests, subtest{name: tc.name, f: func(t *testing.T) {
			r := run(t, tc.name, append(tc.set, "mqtt.transport=websocket")...)
			if r.Spec.MQTT.Transport != "websocket" {
				t.Fatalf("spec.mqtt.transport %q in the result", r.Spec.MQTT.Transport)
			}
			if !strings.Contains(r.Environment.Protocol, "WebSocket") {
				t.Errorf("protocol %q does not say WebSocket", r.Environment.Protocol)
			}
			mu.Lock()
			got[tc.name] = r
			mu.Unlock()
		}})
	}
	runSubtests(t, 5, subtests)
	tcp, r := got["tcp-qos1"], got["ws-qos1"]
	if tcp == nil || r == nil {
		t.Fatal("no tcp-qos1 or ws-qos1 result to compare")
	}
	if d := *r.Wire.ConnectBytes - *tcp.Wire.ConnectBytes; d < 150 || d > 600 {
		t.Errorf("connectBytes %.0f over WebSocket, %.0f over TCP: the upgrade should add 150-600 bytes", *r.Wire.ConnectBytes, *tcp.Wire.ConnectBytes)
	}
	if d := *r.Wire.PublishBytesPerMessage - *tcp.Wire.PublishBytesPerMessage; d <= 0 || d > 6 {
		t.Errorf("publishBytesPerMessage %.2f over WebSocket, %.2f over TCP: frames should add up to 6 bytes", *r.Wire.PublishBytesPerMessage, *tcp.Wire.PublishBytesPerMessage)
	}
}

// TestRunOverWebSocketRefused: without Mosquitto, a WebSocket run is refused (the embedded broker
// serves TCP only) instead of quietly running over TCP.
func TestRunOverWebSocketRefused(t *testing.T) {
	t.Setenv(mosquitto.BinaryEnv, "/nonexistent/mosquitto")
	_, err := msgbench(t, "run", "-q", "-f", repo("config", "samples", "mqtt-websocket.yaml"), "--out", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "spec.mqtt.transport websocket") || !strings.Contains(err.Error(), "embedded broker serves MQTT over TCP only") {
		t.Fatalf("error %v, want a refusal naming spec.mqtt.transport", err)
	}
}
