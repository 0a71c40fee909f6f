package drivers

import (
	"crypto/tls"
	"sync"

	"github.com/msgbench/msgbench/internal/certs"
)

// ClientTLS hands each client (one device) its TLS configuration. With resumption
// (spec.tls.resumption, or spec.quic.zeroRTT) each client gets its own copy of the run's
// configuration with its own session cache, so a reconnecting client resumes its own session
// and never one another device obtained; with client certificates
// (spec.tls.clientCertificates) its own copy presents its own certificate, made when a server
// first asks for it (GetClientCertificate) and kept for its later connections. Without either,
// every client shares the run's configuration and no session is kept.
type ClientTLS struct {
	base   *tls.Config
	resume bool
	issuer *certs.Issuer

	mu  sync.Mutex
	per map[string]*tls.Config
}

// NewClientTLS derives the per-client configurations from base (nil: no TLS) for cfg's group
// (its TLS options' Resumption) and cfg.ClientCerts.
func NewClientTLS(base *tls.Config, cfg Config) *ClientTLS {
	t := &ClientTLS{base: base, resume: base != nil && cfg.Group != nil && cfg.Group.TLS.Resumption}
	if base != nil {
		t.issuer = cfg.ClientCerts
	}
	return t
}

// sessionsPerClient bounds a client's cache: it talks to one server (Kafka: a few brokers).
const sessionsPerClient = 8

// For is client id's configuration (nil without TLS). Do not modify it; Clone it first.
func (t *ClientTLS) For(id string) *tls.Config {
	if !t.resume && t.issuer == nil {
		return t.base
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.per[id]; ok {
		return c
	}
	if t.per == nil {
		t.per = map[string]*tls.Config{}
	}
	c := t.base.Clone()
	if t.resume && c.ClientSessionCache == nil { // a cache the caller set is kept: it chose to share it
		c.ClientSessionCache = tls.NewLRUClientSessionCache(sessionsPerClient)
	}
	if t.issuer != nil {
		c.GetClientCertificate = deviceCertificate(t.issuer, id)
	}
	t.per[id] = c
	return c
}

// deviceCertificate makes client id's certificate the first time a server asks for one (a
// server that asks for none costs nothing) and returns the same one afterwards.
func deviceCertificate(issuer *certs.Issuer, id string) func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	var once sync.Once
	var cert *tls.Certificate
	var err error
	return func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		once.Do(func() { cert, err = issuer.Certificate(id) })
		return cert, err
	}
}
