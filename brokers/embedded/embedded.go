// Package embedded runs an MQTT broker inside the msgbench process (mochi-mqtt) for machines
// without Mosquitto. Its numbers are not Mosquitto's: results name it as the broker, and its
// CPU is part of the msgbench process's.
package embedded

import (
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"runtime/debug"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/auth"
	"github.com/mochi-mqtt/server/v2/listeners"
)

// Broker is a running embedded broker.
type Broker struct {
	server *mqtt.Server
	Addr   string
}

// Name is how results name this broker, e.g. "embedded mochi-mqtt v2.7.9".
func Name() string {
	v := "unknown version"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == "github.com/mochi-mqtt/server/v2" {
				v = d.Version
			}
		}
	}
	return "embedded mochi-mqtt " + v + " (in the msgbench process; Mosquitto not installed)"
}

// Start serves MQTT on ln (TLS on top when tlsCfg is set) until Stop.
func Start(ln net.Listener, tlsCfg *tls.Config, inflight int) (*Broker, error) {
	caps := mqtt.NewDefaultServerCapabilities()
	if inflight > 0 && inflight < 65536 {
		caps.ReceiveMaximum = uint16(inflight)
	}
	caps.MaximumClientWritesPending = 64 * 1024
	s := mqtt.New(&mqtt.Options{
		Capabilities: caps,
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err := s.AddHook(new(auth.AllowHook), nil); err != nil {
		return nil, err
	}
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
	}
	if err := s.AddListener(listeners.NewNet("msgbench", ln)); err != nil {
		return nil, err
	}
	if err := s.Serve(); err != nil {
		return nil, err
	}
	return &Broker{server: s, Addr: ln.Addr().String()}, nil
}

// Stop closes every client and the listener.
func (b *Broker) Stop() error { return b.server.Close() }
