package localrun

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strings"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/embedded"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/internal/certs"
)

// startBroker starts the broker the spec asks for and decides where the clients connect.
func (r *runner) startBroker(ctx context.Context) error {
	switch r.spec.Broker.Type {
	case v1alpha1.BrokerExternal:
		r.broker = r.spec.Broker.External.Address
		r.env.Broker = "external " + r.broker
	case v1alpha1.BrokerKafka:
		if err := r.startKafka(ctx); err != nil {
			return err
		}
	default:
		if err := r.startMosquitto(ctx); err != nil {
			return err
		}
	}
	r.address = r.broker // startGateway points the clients at the gateway instead
	if r.spec.BrokerTLS() {
		cfg, err := certs.ClientTLS(r.brokerCA, hostOf(r.broker), r.spec.ClientTLSVersion())
		if err != nil {
			return err
		}
		r.clientTLS = cfg
	}
	return nil
}

func (r *runner) startMosquitto(ctx context.Context) error {
	if _, err := mosquitto.Binary(); err != nil {
		if r.o.NoEmbedded {
			return fmt.Errorf("%w; the embedded broker is disabled (--no-embedded-broker)", err)
		}
		return r.startEmbedded(ctx)
	}
	if r.o.BrokerPort != 0 {
		// Mosquitto's own bind error can race with the readiness probe; check the port first.
		ln, err := r.net.listenTCP(ctx, hostPort(r.net.serverHost, r.o.BrokerPort))
		if err != nil {
			return portError(err, r.o.BrokerPort)
		}
		_ = ln.Close()
	}
	p, err := mosquitto.Start(ctx, mosquitto.Options{
		Host: r.net.serverHost, Port: r.o.BrokerPort, TLS: r.spec.BrokerTLS(), TLSVersion: r.spec.ClientTLSVersion(),
		Bundle: r.bundle, MaxInflight: int(r.spec.MQTT.Inflight), Extra: r.spec.Broker.Config, Start: r.net.start, Dial: r.net.serverDial,
		Listen: func(ctx context.Context, network, address string) (net.Listener, error) {
			return r.net.listenTCP(ctx, address)
		},
	})
	if err != nil {
		return portError(err, r.o.BrokerPort)
	}
	r.onTeardown(func() { _ = p.Stop() })
	r.broker, r.brokerCA = p.Addr, p.CA
	if r.spec.BrokerTLS() {
		r.broker = p.TLSAddr
	}
	r.usage = p.Usage
	r.env.Broker = "mosquitto " + p.Version
	r.logf("broker: mosquitto %s on %s (pid %d)", p.Version, r.broker, p.PID())
	return nil
}

func (r *runner) startEmbedded(ctx context.Context) error {
	ln, err := r.net.listenTCP(ctx, hostPort(r.net.serverHost, r.o.BrokerPort))
	if err != nil {
		return portError(err, r.o.BrokerPort)
	}
	cfg, err := r.serverTLS()
	if err != nil {
		_ = ln.Close()
		return err
	}
	if !r.spec.BrokerTLS() {
		cfg = nil
	}
	b, err := embedded.Start(ln, cfg, int(r.spec.MQTT.Inflight))
	if err != nil {
		_ = ln.Close()
		return err
	}
	r.onTeardown(func() { _ = b.Stop() })
	r.broker = b.Addr
	if r.bundle != nil {
		r.brokerCA = r.bundle.CACert
	}
	r.env.Broker = embedded.Name()
	r.logf("broker: %s on %s", r.env.Broker, r.broker)
	return nil
}

func (r *runner) serverTLS() (*tls.Config, error) {
	if r.bundle == nil {
		return nil, nil
	}
	return r.bundle.ServerTLS()
}

func portError(err error, port int) error {
	if port != 0 && strings.Contains(strings.ToLower(err.Error()), "address already in use") {
		return fmt.Errorf("port %d is busy: choose another with --broker-port, or 0 for a free one: %w", port, err)
	}
	return err
}

func hostOf(addr string) string {
	if i := strings.LastIndex(addr, ":"); i > 0 {
		return strings.Trim(addr[:i], "[]")
	}
	return addr
}
