package drivers

import (
	"crypto/tls"
	"sync"
)

// ClientTLS hands each client (one device) its TLS configuration. With resumption
// (spec.tls.resumption, or spec.quic.zeroRTT) each client gets its own copy of the run's
// configuration with its own session cache, so a reconnecting client resumes its own session
// and never one another device obtained; without, every client shares the run's configuration
// and no session is kept.
type ClientTLS struct {
	base   *tls.Config
	resume bool

	mu  sync.Mutex
	per map[string]*tls.Config
}

// NewClientTLS derives the per-client configurations from base (nil: no TLS) for cfg's group
// (its TLS options' Resumption).
func NewClientTLS(base *tls.Config, cfg Config) *ClientTLS {
	return &ClientTLS{base: base, resume: base != nil && cfg.Group != nil && cfg.Group.TLS.Resumption}
}

// sessionsPerClient bounds a client's cache: it talks to one server (Kafka: a few brokers).
const sessionsPerClient = 8

// For is client id's configuration (nil without TLS). Do not modify it; Clone it first.
func (t *ClientTLS) For(id string) *tls.Config {
	if !t.resume {
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
	if c.ClientSessionCache == nil { // a cache the caller set is kept: it chose to share it
		c.ClientSessionCache = tls.NewLRUClientSessionCache(sessionsPerClient)
	}
	t.per[id] = c
	return c
}
