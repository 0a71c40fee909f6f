package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/internal/testenv"
	"github.com/msgbench/msgbench/plan"

	"github.com/quic-go/quic-go/http3"
)

// gatewayPlanFile writes the compiled plan of a sample manifest (named for the benchmark, as the
// operator and msgbench run name theirs), its version replaced by version when not empty, and
// returns the file's path.
func gatewayPlanFile(t *testing.T, sample, version string) string {
	t.Helper()
	mb, err := manifest.ReadFile(repo("config", "samples", sample))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Compile(&mb.Spec, plan.Admitted)
	if err != nil {
		t.Fatal(err)
	}
	p.Benchmark = plan.NameOf(mb)
	data, err := plan.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if version != "" {
		data = bytes.Replace(data, []byte(`"`+plan.Version+`"`), []byte(`"`+version+`"`), 1)
	}
	path := filepath.Join(t.TempDir(), plan.FileName)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestGatewayRefusesItsInputClearly: `msgbench gateway` runs the plan it is given (--plan) or
// a manifest (-f), not both, and refuses a plan of another msgbench by its version.
func TestGatewayRefusesItsInputClearly(t *testing.T) {
	sample := repo("config", "samples", "mqtt-sn-qos1.yaml")
	current := gatewayPlanFile(t, "mqtt-sn-qos1.yaml", "")
	other := gatewayPlanFile(t, "mqtt-sn-qos1.yaml", "plan.msgbench.io/v0")
	base := []string{"gateway", "--mode", "mqtt-sn", "--listen", "127.0.0.1:0", "--broker", "127.0.0.1:1"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--plan", other}, `version "plan.msgbench.io/v0"`},
		{[]string{"--plan", current, "-f", sample}, "-f and --plan"},
		{[]string{"--plan", current, "--set", "qos=0"}, "--set with --plan"},
		{[]string{"--plan", "/nonexistent/plan.json"}, "/nonexistent/plan.json"},
		{[]string{"--mode", "http", "--plan", current}, "no group of the plan"},
	} {
		_, err := msgbench(t, append(append([]string{}, base...), tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want it to mention %q", tc.args, err, tc.want)
		}
	}
}

// TestGatewayServesItsPlan: `msgbench gateway --plan` serves the plan's HTTP group in front of
// a broker, and its metrics carry the benchmark the plan names.
func TestGatewayServesItsPlan(t *testing.T) {
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Stop() }()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	metrics := ln.Addr().String()
	_ = ln.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, done := startGateway(ctx, t, "--mode", "http", "--listen", "127.0.0.1:0", "--broker", b.Addr,
		"--plan", gatewayPlanFile(t, "http-1-1.yaml", ""), "--metrics", metrics)
	resp, err := http.Post("http://"+addr+"/topics/plan?qos=1", "application/octet-stream", strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("POST through the gateway: %s", resp.Status)
	}
	resp, err = http.Get("http://" + metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if !strings.Contains(string(body), `msgbench_gateway_messages_in_total{benchmark="http-1-1",component="gateway"`) {
		t.Errorf("gateway metrics without the plan's benchmark:\n%s", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("msgbench gateway after its context ended: %v", err)
	}
}

// TestGatewayRequiresClientCertificates: `msgbench gateway --client-ca` (the operator's gateway
// pods with spec.tls.clientCertificates, and msgbench run's) requires each client's certificate
// and verifies it with the devices' CA, over TCP (HTTP/1.1) and over QUIC (HTTP/3, where the
// handshake's bytes vary too much from run to run to show a certificate): a POST without one is
// refused in the handshake, one with a certificate of another CA too, one with a device's
// certificate goes through; --client-ca without TLS is refused.
func TestGatewayRequiresClientCertificates(t *testing.T) {
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Stop() }()
	dir := t.TempDir()
	server, err := certs.New("gateway", []string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, caKey, err := certs.NewCA("devices", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"tls.crt": server.ServerCert, "tls.key": server.ServerKey, "client-ca.crt": caPEM}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	clientCA := []string{"--client-ca", filepath.Join(dir, "client-ca.crt")}
	noTLS := append([]string{"gateway", "--mode", "http", "--listen", "127.0.0.1:0", "--broker", b.Addr,
		"--plan", gatewayPlanFile(t, "http-1-1.yaml", "")}, clientCA...)
	if _, err := msgbench(t, noTLS...); err == nil || !strings.Contains(err.Error(), "--client-ca") {
		t.Errorf("--client-ca without --tls-cert: error %v", err)
	}
	device := func(caPEM, caKey []byte) *tls.Certificate {
		issuer, err := certs.NewIssuer(caPEM, caKey, "", "")
		if err != nil {
			t.Fatal(err)
		}
		cert, err := issuer.Certificate("device-1")
		if err != nil {
			t.Fatal(err)
		}
		return cert
	}
	otherPEM, otherKey, err := certs.NewCA("not the devices' CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sample string
		client func(*tls.Config) http.RoundTripper
	}{
		{"http-1-1.yaml", func(cfg *tls.Config) http.RoundTripper { return &http.Transport{TLSClientConfig: cfg} }},
		{"http-3.yaml", func(cfg *tls.Config) http.RoundTripper { return &http3.Transport{TLSClientConfig: cfg} }},
	} {
		t.Run(c.sample, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			addr, done := startGateway(ctx, t, append([]string{"--mode", "http", "--listen", "127.0.0.1:0", "--broker", b.Addr,
				"--plan", gatewayPlanFile(t, c.sample, ""), "--tls-cert", filepath.Join(dir, "tls.crt"), "--tls-key", filepath.Join(dir, "tls.key")}, clientCA...)...)
			// post answers the status of a POST made with cert (none: nil).
			post := func(cert *tls.Certificate) (int, error) {
				cfg, err := certs.ClientTLS(server.CACert, "127.0.0.1", "")
				if err != nil {
					t.Fatal(err)
				}
				if cert != nil { // sent whatever CAs the server names, so the server's check decides
					cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
				}
				rt := c.client(cfg)
				if cl, ok := rt.(io.Closer); ok {
					defer func() { _ = cl.Close() }()
				}
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+addr+"/topics/mtls?qos=1", strings.NewReader("hello"))
				if err != nil {
					t.Fatal(err)
				}
				hc := &http.Client{Transport: rt, Timeout: 5 * time.Second}
				resp, err := hc.Do(req)
				if err != nil {
					return 0, err
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				return resp.StatusCode, nil
			}
			if status, err := post(nil); err == nil {
				t.Errorf("POST without a client certificate: %d, want the handshake refused", status)
			}
			if status, err := post(device(otherPEM, otherKey)); err == nil {
				t.Errorf("POST with a certificate of another CA: %d, want the handshake refused", status)
			}
			status, err := post(device(caPEM, caKey))
			if err != nil {
				t.Fatalf("POST with the device's certificate: %v", err)
			}
			if status != http.StatusNoContent {
				t.Errorf("POST with the device's certificate: %d", status)
			}
			cancel()
			if err := <-done; err != nil {
				t.Errorf("msgbench gateway after its context ended: %v", err)
			}
		})
	}
}

// startGateway runs `msgbench gateway args…` in this process until ctx ends and returns the
// address it serves on (from its "serving on" line) and the command's end.
func startGateway(ctx context.Context, t *testing.T, args ...string) (string, <-chan error) {
	t.Helper()
	cmd := newRootCommand()
	var stderr testenv.SyncBuffer
	cmd.SetOut(io.Discard)
	cmd.SetErr(&stderr)
	cmd.SetArgs(append([]string{"gateway"}, args...))
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	serving := regexp.MustCompile(`serving on (\S+),`)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if m := serving.FindStringSubmatch(stderr.String()); m != nil {
			return m[1], done
		}
		select {
		case err := <-done:
			t.Fatalf("msgbench gateway ended: %v\n%s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("msgbench gateway did not serve:\n%s", stderr.String())
		}
	}
}
