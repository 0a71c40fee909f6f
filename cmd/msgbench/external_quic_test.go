package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/gateway"
	"github.com/msgbench/msgbench/gateway/quic"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/testbin"
	"github.com/msgbench/msgbench/results"
)

// TestExternalQUICListener: MQTT over QUIC to a QUIC listener msgbench does not start
// (spec.gateway.external), whose certificate is its own, from a private CA the machine trusts
// (SSL_CERT_FILE, as an operator adds a CA to a host or an image): `msgbench run` starts no QUIC
// gateway, its clients verify the listener's certificate and every message arrives. The listener
// is msgbench's QUIC gateway started by the test as another program would run it, in front of
// Mosquitto. Without the CA trusted, the run fails naming the certificate.
func TestExternalQUICListener(t *testing.T) {
	if _, err := mosquitto.Binary(); err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	b, err := mosquitto.Start(ctx, mosquitto.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	bundle, err := certs.New("quic.listener.test", []string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	serverTLS, err := bundle.ServerTLS()
	if err != nil {
		t.Fatal(err)
	}
	gw, err := quic.Start(ctx, gateway.Options{Listen: "127.0.0.1:0", Broker: b.Addr, TLS: serverTLS})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Close() })
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	manifest := filepath.Join(dir, "quic.yaml")
	if err := os.WriteFile(ca, bundle.CACert, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manifest, fmt.Appendf(nil, `
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: external-quic}
spec:
  protocol: mqtt-quic
  qos: 1
  broker:
    type: external
    external: {address: %q}
  gateway:
    external: {address: %q}
  workload: {publishers: 2, subscribers: 2, topics: 2, payloadBytes: 64, rate: 50, warmup: 1s, duration: 2s}
`, b.Addr, gw.Addr()), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := testbin.Msgbench(t)
	run := func(env ...string) (*results.Result, string, error) {
		out := t.TempDir()
		cmd := exec.Command(bin, "run", "-q", "-f", manifest, "--out", out)
		cmd.Env = append(os.Environ(), env...)
		output, err := cmd.CombinedOutput()
		data, rerr := os.ReadFile(filepath.Join(out, "external-quic", "latest", "result.json"))
		if rerr != nil {
			return nil, string(output), fmt.Errorf("%w; no result.json: %w", err, rerr)
		}
		var r results.Result
		if jerr := json.Unmarshal(data, &r); jerr != nil {
			return nil, string(output), jerr
		}
		return &r, string(output), err
	}
	r, output, err := run("SSL_CERT_FILE=" + ca)
	if err != nil {
		t.Fatalf("%v\n%s", err, output)
	}
	if r.Phase != "Succeeded" || r.Sent == 0 || r.Received != r.Expected || r.Lost == nil || *r.Lost != 0 {
		t.Errorf("phase %s: sent %d, expected %d, received %d, lost %v", r.Phase, r.Sent, r.Expected, r.Received, r.Lost)
	}
	if !strings.Contains(r.Environment.Gateway, "external at "+gw.Addr().String()) || r.Environment.TLSVersion != "TLS 1.3" {
		t.Errorf("environment: gateway %q, TLS %q", r.Environment.Gateway, r.Environment.TLSVersion)
	}
	// The listener's CA not trusted: the handshake fails on the certificate, and the run says so.
	r, output, err = run("SSL_CERT_FILE=" + filepath.Join(dir, "none.pem"))
	if err == nil || r == nil || r.Phase != "Failed" || !strings.Contains(output, "certificate") {
		t.Errorf("untrusted listener: err %v, result %+v, output:\n%s", err, r, output)
	}
}

// TestExternalWebSocketURL: MQTT over WebSocket to a broker msgbench does not start, at its
// WebSocket listener's address and path (spec.broker.external, spec.mqtt.transport websocket,
// webSocketPath): every message arrives. (Mosquitto's listener serves any path, so a wrong one
// is not refused by it.)
func TestExternalWebSocketURL(t *testing.T) {
	if _, err := mosquitto.Binary(); err != nil {
		t.Skip(err)
	}
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{WebSocket: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	f := filepath.Join(t.TempDir(), "ws.yaml")
	if err := os.WriteFile(f, fmt.Appendf(nil, `
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: external-ws}
spec:
  protocol: mqtt
  qos: 1
  mqtt: {transport: websocket, webSocketPath: %q}
  broker: {type: external, external: {address: %q}}
  workload: {publishers: 2, subscribers: 2, topics: 2, payloadBytes: 64, rate: 50, warmup: 1s, duration: 2s}
`, b.WebSocketPath, b.WSAddr), 0o600); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := msgbench(t, "run", "-q", "-f", f, "--out", out); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(out, "external-ws", "latest", "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r results.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	if r.Phase != "Succeeded" || r.Sent == 0 || r.Received != r.Expected || *r.Lost != 0 || !strings.Contains(r.Environment.Protocol, "WebSocket") {
		t.Errorf("phase %s, protocol %q: sent %d, expected %d, received %d, lost %v", r.Phase, r.Environment.Protocol, r.Sent, r.Expected, r.Received, r.Lost)
	}
}
