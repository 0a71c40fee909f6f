// Package certs makes the TLS material of a benchmark run: a CA generated for the run and a
// server certificate it signs, so MQTTS, HTTPS, QUIC and Kafka TLS need nothing from the user.
package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// Bundle is a CA and a server certificate signed by it, PEM-encoded (the keys of a
// kubernetes.io/tls Secret plus ca.crt).
type Bundle struct {
	CACert     []byte // ca.crt
	ServerCert []byte // tls.crt
	ServerKey  []byte // tls.key
}

// New makes a CA and a server certificate valid for hosts (DNS names or IP addresses) for the
// given lifetime. Keys are ECDSA P-256: TLS 1.2 then negotiates ECDHE-ECDSA-AES128-GCM-SHA256,
// whose records cost 29 bytes.
func New(commonName string, hosts []string, lifetime time.Duration) (*Bundle, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := caTemplate(commonName+" CA", lifetime)
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: commonName, Organization: []string{"msgbench"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(lifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	// PKCS #8: the one unencrypted key form every consumer reads (Go, OpenSSL, and Kafka and
	// Strimzi, which accept no other).
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &Bundle{
		CACert:     pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		ServerCert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		ServerKey:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return n
}

// CertPool parses PEM CA certificates into a pool.
func CertPool(caPEM []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("no CA certificate found in PEM data")
	}
	return pool, nil
}

// ServerTLS is a server-side tls.Config for the bundle's certificate.
func (b *Bundle) ServerTLS() (*tls.Config, error) {
	cert, err := tls.X509KeyPair(b.ServerCert, b.ServerKey)
	if err != nil {
		return nil, fmt.Errorf("server certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// ClientTLS is a client tls.Config that trusts caPEM (the system's roots when nil) and speaks
// exactly the given version ("1.2" or "1.3"). TLS 1.2 is limited to AES-GCM suites, whose
// per-record overhead the measurement docs state (29 bytes).
func ClientTLS(caPEM []byte, serverName, version string) (*tls.Config, error) {
	cfg := &tls.Config{ServerName: serverName}
	if caPEM != nil {
		pool, err := CertPool(caPEM)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	switch version {
	case "1.2":
		cfg.MinVersion, cfg.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
		cfg.CipherSuites = []uint16{
			tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
			tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
		}
	case "1.3", "":
		cfg.MinVersion, cfg.MaxVersion = tls.VersionTLS13, tls.VersionTLS13
	default:
		return nil, fmt.Errorf("tls.version %q: want \"1.2\" or \"1.3\"", version)
	}
	return cfg, nil
}

// caTemplate is a CA certificate's template: valid from an hour ago (clock skew) for lifetime,
// signing leaf certificates only.
func caTemplate(commonName string, lifetime time.Duration) *x509.Certificate {
	now := time.Now()
	return &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: commonName, Organization: []string{"msgbench"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(lifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
}
