package loadgen_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/loadgen"
	"github.com/msgbench/msgbench/results"
)

// clientCertBroker starts a real Mosquitto whose MQTTS listener requires a client certificate
// signed by caPEM and takes its common name as the username (use_identity_as_username), with an
// ACL that lets only the users named in cns publish and subscribe.
func clientCertBroker(t *testing.T, caPEM []byte, cns []string) *mosquitto.Process {
	t.Helper()
	acl := filepath.Join(t.TempDir(), "acl")
	var b strings.Builder
	for _, cn := range cns {
		fmt.Fprintf(&b, "user %s\ntopic readwrite #\n\n", cn)
	}
	if err := os.WriteFile(acl, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := mosquitto.Start(context.Background(), mosquitto.Options{TLS: true, TLSVersion: "1.3", MaxInflight: 20,
		ClientCA: caPEM, IdentityAsUsername: true,
		Access: map[string]string{"acl_file": acl, "allow_anonymous": "false", "log_type": "notice"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop() })
	return p
}

// clientCertRun runs 2 publishers and 2 subscribers, 100 messages at QoS 1, over MQTT/TLS 1.3
// to b, each client presenting its certificate from issuer (nil: none).
func clientCertRun(t *testing.T, b *mosquitto.Process, issuer *certs.Issuer) (*results.Result, error) {
	t.Helper()
	spec := baseSpec()
	spec.Workload.Messages, spec.Workload.Duration.Duration, spec.Workload.Warmup.Duration, spec.Workload.Rate = 100, 0, 0, 200
	spec.TLS = &v1alpha1.TLSSpec{Enabled: true, Version: v1alpha1.TLS13}
	if issuer != nil {
		spec.TLS.ClientCertificates = &v1alpha1.ClientCertificatesSpec{}
	}
	cfg, err := certs.ClientTLS(b.CA, "127.0.0.1", "1.3")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return loadgen.Run(ctx, loadgen.Options{Spec: spec, Name: "mtls", RunID: "cc", Address: b.TLSAddr, TLS: cfg, ClientCerts: issuer})
}

var ccClients = []string{"mbcc-p0", "mbcc-p1", "mbcc-s0", "mbcc-s1"}

// TestClientCertificatesToMosquitto: Mosquitto requiring client certificates, each device's
// common name its username in an ACL that names every device: a run whose devices present their
// own certificates (msgbench's CA, and a CA the user supplies as PEM files) delivers every
// message, and the broker's log names each device by its certificate; a run whose devices
// present none fails with the server's alert in words.
func TestClientCertificatesToMosquitto(t *testing.T) {
	if testing.Short() {
		t.Skip("-short (make test-unit): runs in make test")
	}
	caPEM, keyPEM, err := certs.NewCA("msgbench devices", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cns := make([]string, len(ccClients))
	for i, id := range ccClients {
		cns[i] = "device-" + id
	}
	t.Run("per-device certificates", func(t *testing.T) {
		b := clientCertBroker(t, caPEM, cns)
		issuer, err := certs.NewIssuer(caPEM, keyPEM, certs.KeyECDSAP256, "device-{clientId}")
		if err != nil {
			t.Fatal(err)
		}
		res, err := clientCertRun(t, b, issuer)
		if err != nil {
			t.Fatal(err)
		}
		if res.Phase != "Succeeded" || res.Sent != 100 || res.Received != 100 || *res.Lost != 0 || *res.Duplicates != 0 {
			t.Fatalf("phase %s sent %d received %d lost %v dups %v: %s", res.Phase, res.Sent, res.Received, *res.Lost, *res.Duplicates, res.Message)
		}
		log := b.Log()
		for _, id := range ccClients {
			if want := fmt.Sprintf("as %s (p2, c1, k", id); !strings.Contains(log, want) || !strings.Contains(log, "u'device-"+id+"'") {
				t.Errorf("the broker's log does not name %s with username device-%s (its certificate's CN):\n%s", id, id, log)
			}
		}
		// Without client certificates, against the same broker (its own ACL-less run below).
		withCerts := *res.Wire.ConnectBytes
		plain := startMosquitto(t, "1.3")
		res2, err := clientCertRun(t, plain, nil)
		if err != nil || res2.Phase != "Succeeded" {
			t.Fatalf("without client certificates: %v %v", err, res2)
		}
		c, _ := issuer.Certificate("mbcc-p0")
		leaf := len(c.Certificate[0])
		d := withCerts - *res2.Wire.ConnectBytes
		t.Logf("connectBytes: %.0f with a client certificate (%d-byte DER), %.0f without: +%.0f", withCerts, leaf, *res2.Wire.ConnectBytes, d)
		// The client's Certificate (leaf + 11 B of framing) and CertificateVerify (an ECDSA
		// P-256 signature, ~72 B, + 8), the server's CertificateRequest, and OpenSSL's two
		// session tickets, which now carry the client's certificate (a stateless ticket holds
		// the session, peer certificate included): about three times the certificate.
		if lo, hi := float64(3*leaf+81), float64(3*leaf+400); d < lo || d > hi {
			t.Errorf("client certificates add %.0f bytes to a connection, want %.0f..%.0f", d, lo, hi)
		}
	})
	t.Run("a CA the user supplies", func(t *testing.T) {
		dir := t.TempDir()
		userCA, _ := writeUserCA(t, dir)
		b := clientCertBroker(t, userCA, ccClients)
		ca, _ := os.ReadFile(filepath.Join(dir, "ca.crt"))
		key, _ := os.ReadFile(filepath.Join(dir, "ca.key"))
		issuer, err := certs.NewIssuer(ca, key, "", "")
		if err != nil {
			t.Fatal(err)
		}
		res, err := clientCertRun(t, b, issuer)
		if err != nil {
			t.Fatal(err)
		}
		if res.Phase != "Succeeded" || res.Sent != 100 || res.Received != 100 || *res.Lost != 0 {
			t.Fatalf("phase %s sent %d received %d: %s", res.Phase, res.Sent, res.Received, res.Message)
		}
		// msgbench's own CA is not the one this broker trusts.
		other, err := certs.NewIssuer(caPEM, keyPEM, "", "")
		if err != nil {
			t.Fatal(err)
		}
		res, err = clientCertRun(t, b, other)
		if err == nil && res.Phase == "Succeeded" {
			t.Fatal("devices signed by a CA the broker does not trust connected")
		}
		msg := fmt.Sprint(err, resMessage(res))
		if !strings.Contains(msg, "unknown certificate authority") || !strings.Contains(msg, "spec.tls.clientCertificates.ca") {
			t.Errorf("the refusal does not say the CA is unknown: %s", msg)
		}
	})
	t.Run("no certificate", func(t *testing.T) {
		b := clientCertBroker(t, caPEM, cns)
		res, err := clientCertRun(t, b, nil)
		if err == nil && res.Phase == "Succeeded" {
			t.Fatal("a run without client certificates succeeded against a broker that requires them")
		}
		msg := fmt.Sprint(err, resMessage(res))
		if !strings.Contains(msg, "certificate required: the server requires a client certificate") || !strings.Contains(msg, "set spec.tls.clientCertificates") {
			t.Errorf("the failure does not explain the missing certificate: %s", msg)
		}
	})
}

func resMessage(r *results.Result) string {
	if r == nil {
		return ""
	}
	return " " + r.Message
}

// writeUserCA writes a CA as a user would have it, made with x509 directly: ca.crt and an
// SEC 1 key (EC PRIVATE KEY) in dir.
func writeUserCA(t *testing.T, dir string) (caPEM, keyPEM []byte) {
	t.Helper()
	caPEM, pkcs8, err := certs.NewCA("user fleet CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(pkcs8)
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	sec1, err := x509.MarshalECPrivateKey(k.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1})
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.key"), keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return caPEM, keyPEM
}
