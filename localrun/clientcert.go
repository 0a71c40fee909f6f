package localrun

import (
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/certs"
)

// clientCerts is the devices' CA of a run with spec.tls.clientCertificates: the one msgbench
// generates, or the user's from certFile and keyFile (relative to the manifest's folder).
type clientCerts struct {
	caPEM, keyPEM []byte
	issuer        *certs.Issuer
}

// loadClientCerts reads or makes the devices' CA (nil without client certificates).
func loadClientCerts(spec *v1alpha1.MessagingBenchmarkSpec, o Options) (*clientCerts, error) {
	cc := spec.ClientCertificates()
	if cc == nil {
		return nil, nil
	}
	c := &clientCerts{}
	var err error
	switch {
	case cc.CA == nil:
		if c.caPEM, c.keyPEM, err = certs.NewCA("msgbench devices CA", 24*time.Hour); err != nil {
			return nil, err
		}
	case cc.CA.SecretRef != nil:
		return nil, fmt.Errorf("spec.tls.clientCertificates.ca.secretRef: msgbench run reads no Kubernetes Secret; give the CA as certFile and keyFile")
	default:
		read := func(field, f string) ([]byte, error) {
			if !filepath.IsAbs(f) {
				f = filepath.Join(o.ManifestDir, f)
			}
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("spec.tls.clientCertificates.ca.%s: %w", field, err)
			}
			return b, nil
		}
		if c.caPEM, err = read("certFile", cc.CA.CertFile); err != nil {
			return nil, err
		}
		if c.keyPEM, err = read("keyFile", cc.CA.KeyFile); err != nil {
			return nil, err
		}
	}
	if c.issuer, err = certs.NewIssuer(c.caPEM, c.keyPEM, string(cc.KeyType), cc.CommonName); err != nil {
		return nil, fmt.Errorf("spec.tls.clientCertificates.ca: %w", err)
	}
	return c, nil
}

// requireClientCerts makes a Go server (msgbench's gateways) require and verify the devices'
// certificates.
func (c *clientCerts) requireClientCerts(cfg *tls.Config) error {
	if c == nil || cfg == nil {
		return nil
	}
	pool, err := certs.CertPool(c.caPEM)
	if err != nil {
		return err
	}
	cfg.ClientAuth, cfg.ClientCAs = tls.RequireAndVerifyClientCert, pool
	return nil
}

// issuer is the run's device certificate issuer, nil without client certificates.
func (c *clientCerts) issuerOrNil() *certs.Issuer {
	if c == nil {
		return nil
	}
	return c.issuer
}

// caOrNil is the devices' CA certificate, nil without client certificates.
func (c *clientCerts) caOrNil() []byte {
	if c == nil {
		return nil
	}
	return c.caPEM
}

// writeClientCA writes the devices' CA (certificate and key) for the worker processes and
// returns their flags.
func (c *clientCerts) workerFlags(dir string) ([]string, error) {
	if c == nil {
		return nil, nil
	}
	caFile, keyFile := filepath.Join(dir, "client-ca.crt"), filepath.Join(dir, "client-ca.key")
	if err := os.WriteFile(caFile, c.caPEM, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(keyFile, c.keyPEM, 0o600); err != nil {
		return nil, err
	}
	return []string{"--client-ca", caFile, "--client-ca-key", keyFile}, nil
}
