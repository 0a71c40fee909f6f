// Package mqttquic is the load generator's MQTT-over-QUIC driver (protocol mqtt-quic): the MQTT
// driver's sessions, each on one bidirectional stream of its own QUIC connection with ALPN
// "mqtt", as EMQX serves MQTT over QUIC. Wire counters are UDP bytes and datagrams below QUIC's
// encryption.
package mqttquic

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/wire"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/loadgen/drivers/mqtt"
	"github.com/msgbench/msgbench/loadgen/drivers/mqttquic/quicconn"
)

// ALPN is the TLS application protocol of MQTT over QUIC (EMQX's choice, followed by its clients).
const ALPN = "mqtt"

func init() {
	drivers.Register(string(v1alpha1.ProtocolMQTTQUIC), func(cfg drivers.Config) (drivers.Driver, error) {
		return New(cfg, Options{ZeroRTT: cfg.Group.QUICTransport != nil && cfg.Group.QUICTransport.ZeroRTT})
	})
}

// Options tune the QUIC transport beyond the group's options.
type Options struct {
	// ZeroRTT (spec.quic.zeroRTT, in the group's QUIC options) resumes TLS sessions and sends
	// CONNECT in 0-RTT packets when the client holds a session ticket for the server (from its
	// own earlier connection: each client has its own session cache): connect then takes one
	// round trip instead of two. A client's first connection always takes the full handshake.
	ZeroRTT bool
}

// New returns an mqtt-quic driver.
func New(cfg drivers.Config, o Options) (drivers.Driver, error) {
	if cfg.Group == nil || cfg.Group.MQTT == nil {
		return nil, drivers.NoOptions(cfg, string(v1alpha1.ProtocolMQTTQUIC))
	}
	return mqtt.New(cfg, Transport(cfg, o))
}

// TLSConfig is the client TLS configuration of MQTT over QUIC derived from base (cfg.TLS; nil
// trusts the system roots): TLS 1.3 and ALPN "mqtt". Sessions are cached per client
// (drivers.ClientTLS) for resumption and 0-RTT.
func TLSConfig(base *tls.Config, address string) *tls.Config {
	var c *tls.Config
	if base != nil {
		c = base.Clone()
	} else {
		c = &tls.Config{}
	}
	c.MinVersion, c.MaxVersion = tls.VersionTLS13, tls.VersionTLS13
	c.NextProtos = []string{ALPN}
	if c.ServerName == "" {
		if host, _, err := net.SplitHostPort(address); err == nil {
			c.ServerName = host
		}
	}
	return c
}

// QUICConfig is the client QUIC configuration: the idle timeout outlasts the MQTT keep-alive
// (the group's MQTT options' KeepAlive), so an idle but healthy session is never cut by QUIC.
func QUICConfig(keepAlive time.Duration) *quic.Config {
	idle := 90 * time.Second
	if ka := keepAlive * 2; ka > idle {
		idle = ka
	}
	return &quic.Config{MaxIdleTimeout: idle, HandshakeIdleTimeout: 30 * time.Second}
}

// Transport is the MQTT driver transport of mqtt-quic: a QUIC connection per session and its
// first bidirectional stream. cfg.Group must have MQTT options (New checks).
func Transport(cfg drivers.Config, o Options) mqtt.Transport {
	if o.ZeroRTT && !cfg.Group.TLS.Resumption {
		g := *cfg.Group // Options.ZeroRTT without the spec's: still one session cache per client
		g.TLS.Resumption = true
		cfg.Group = &g
	}
	clientTLS := drivers.NewClientTLS(TLSConfig(cfg.TLS, cfg.Address), cfg)
	qconf := QUICConfig(cfg.Group.MQTT.KeepAlive)
	dial := cfg.Dialer()
	return func(ctx context.Context, client drivers.Client) (net.Conn, func() wire.Counters, error) {
		c, err := quicconn.Dial(ctx, dial, cfg.Address, clientTLS.For(client.ID), qconf, o.ZeroRTT)
		if err != nil {
			return nil, nil, err
		}
		// OpenStream, not OpenStreamSync: the server allows a stream from the start, and the
		// stream's first bytes (CONNECT) ride in the packet that completes the handshake (or in
		// 0-RTT packets).
		s, err := c.OpenStream()
		if err != nil {
			_ = c.Close()
			return nil, nil, fmt.Errorf("QUIC stream to %s: %w", cfg.Address, err)
		}
		return quicconn.NewStreamConn(c, s), c.Counters, nil
	}
}
