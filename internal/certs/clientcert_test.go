package certs_test

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"testing"
	"time"

	"github.com/msgbench/msgbench/internal/certs"
)

// TestIssuerSignsVerifiableDeviceCertificates: each device's certificate carries its client id
// as the common name, is for client authentication, and chains to the CA; another CA rejects it.
func TestIssuerSignsVerifiableDeviceCertificates(t *testing.T) {
	caPEM, keyPEM, err := certs.NewCA("devices", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	otherCA, _, err := certs.NewCA("other", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, kt := range []string{certs.KeyECDSAP256, certs.KeyRSA2048} {
		iss, err := certs.NewIssuer(caPEM, keyPEM, kt, "dev-{clientId}")
		if err != nil {
			t.Fatal(err)
		}
		c, err := iss.Certificate("sensor-7")
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := x509.ParseCertificate(c.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		if leaf.Subject.CommonName != "dev-sensor-7" {
			t.Errorf("%s: CN %q, want dev-sensor-7", kt, leaf.Subject.CommonName)
		}
		pool, _ := certs.CertPool(caPEM)
		opts := x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
		if _, err := leaf.Verify(opts); err != nil {
			t.Errorf("%s: does not verify against its CA: %v", kt, err)
		}
		other, _ := certs.CertPool(otherCA)
		opts.Roots = other
		if _, err := leaf.Verify(opts); err == nil {
			t.Errorf("%s: verifies against another CA", kt)
		}
	}
	if _, err := certs.NewIssuer(caPEM, keyPEM, "ed25519", ""); err == nil {
		t.Error("key type ed25519 accepted")
	}
	_, otherKey, _ := certs.NewCA("x", time.Hour)
	if _, err := certs.NewIssuer(caPEM, otherKey, "", ""); err == nil {
		t.Error("a key that is not the CA's accepted")
	}
	b, _ := certs.New("server", []string{"localhost"}, time.Hour)
	if _, err := certs.NewIssuer(b.ServerCert, b.ServerKey, "", ""); err == nil {
		t.Error("a server certificate accepted as a CA")
	}
	if blk, _ := pem.Decode(keyPEM); blk == nil {
		t.Fatal("key PEM")
	}
}

// BenchmarkDeviceCertificate: key generation and signing of one device certificate.
// docs/tls.md quotes the rate (go test -run x -bench DeviceCertificate ./internal/certs/).
func BenchmarkDeviceCertificate(b *testing.B) {
	caPEM, keyPEM, err := certs.NewCA("devices", time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	for _, kt := range []string{certs.KeyECDSAP256, certs.KeyRSA2048} {
		b.Run(kt, func(b *testing.B) {
			iss, err := certs.NewIssuer(caPEM, keyPEM, kt, "")
			if err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				if _, err := iss.Certificate(fmt.Sprint("d", i)); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "certs/s")
		})
	}
}
