package localrun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/internal/testenv"
)

// TestClientCertificatesLocalRun: msgbench run with spec.tls.clientCertificates — a CA the
// user supplies as files next to the manifest, Mosquitto; msgbench's generated CA, the HTTP/3
// gateway — delivers every message, and each connection carries the device's certificate: a
// server only gets one when it asks (Mosquitto's require_certificate, the gateway's
// RequireAndVerifyClientCert), so over TCP the connection's bytes grow by at least the
// certificate and its signature over the same run without the field. Over QUIC they do not show
// it: the handshake's bytes vary by a retransmitted packet (a run under CI's load measured 438
// bytes fewer with the certificate than without), so there the run's gateway says it requires
// one, and TestGatewayRequiresClientCertificates (cmd/msgbench) shows that gateway refusing a
// QUIC handshake without one.
func TestClientCertificatesLocalRun(t *testing.T) {
	if testing.Short() {
		t.Skip("-short (make test-unit): runs in make test")
	}
	if _, err := mosquitto.Binary(); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	ca, key, err := certs.NewCA("user fleet CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fleet-ca.crt"), ca, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fleet-ca.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	const base = `apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: mtls}
spec:
  qos: 1
  workload: {publishers: 2, subscribers: 2, topics: 2, messages: 100, rate: 200, warmup: 0s}
`
	// minExtra: over TCP the handshake's bytes repeat to the byte, so a certificate and its
	// signature must show (0: QUIC, whose bytes prove nothing; the gateway's log line does).
	for _, c := range []struct {
		name, spec, certs string
		minExtra          float64
	}{
		{"mosquitto, the user's CA", "  protocol: mqtt\n  tls:\n    enabled: true\n", "    clientCertificates: {ca: {certFile: fleet-ca.crt, keyFile: fleet-ca.key}}\n", 400 + 72},
		{"http3 gateway, msgbench's CA", "  protocol: http\n  http: {version: \"3\"}\n  tls:\n    enabled: true\n", "    clientCertificates: {}\n", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			bytes := map[bool]float64{}
			for _, with := range []bool{false, true} {
				doc := base + c.spec
				if with {
					doc += c.certs
				}
				mb, err := manifest.Parse([]byte(doc))
				if err != nil {
					t.Fatal(err)
				}
				var log testenv.SyncBuffer
				logf := func(format string, args ...any) {
					t.Logf(format, args...)
					fmt.Fprintf(&log, format+"\n", args...)
				}
				res, err := Run(context.Background(), mb, Options{Logf: logf, NoEmbedded: true, ManifestDir: dir})
				if err != nil {
					t.Fatal(err)
				}
				if required := strings.Contains(log.String(), "requiring each device's certificate"); c.minExtra == 0 && required != with {
					t.Errorf("client certificates %v: the gateway requires them %v:\n%s", with, required, log.String())
				}
				if res.Phase != "Succeeded" || res.Sent != 100 || res.Received != 100 || *res.Lost != 0 {
					t.Fatalf("client certificates %v: phase %s sent %d received %d: %s", with, res.Phase, res.Sent, res.Received, res.Message)
				}
				bytes[with] = *res.Wire.ConnectBytes
			}
			d := bytes[true] - bytes[false]
			t.Logf("connectBytes %.0f with client certificates, %.0f without: +%.0f", bytes[true], bytes[false], d)
			if c.minExtra > 0 && d < c.minExtra {
				t.Errorf("client certificates add %.0f bytes per connection: no certificate was sent", d)
			}
		})
	}
}
