package localrun

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strings"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/artemis"
	"github.com/msgbench/msgbench/brokers/brokerproc"
	"github.com/msgbench/msgbench/brokers/embedded"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/brokers/rabbitmq"
	"github.com/msgbench/msgbench/internal/devicetls"
	"github.com/msgbench/msgbench/internal/proc"
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
	case v1alpha1.BrokerRabbitMQ:
		if err := r.startRabbitMQ(ctx); err != nil {
			return err
		}
	case v1alpha1.BrokerArtemis:
		if err := r.startArtemis(ctx); err != nil {
			return err
		}
	case v1alpha1.BrokerMosquitto, "":
		if err := r.startMosquitto(ctx); err != nil {
			return err
		}
	default: // Check refuses these first; never run another broker in a type's place
		return notLocal(r.spec.Broker.Type)
	}
	if r.brokerMQTT == "" {
		r.brokerMQTT = r.broker
	}
	r.address = r.broker // startGateway points the clients at the gateway instead
	if r.plan.Broker.TLS {
		cfg, err := devicetls.Client(r.brokerCA, hostOf(r.broker), r.plan.Groups[0].TLSVersion, r.plan.Groups[0].TLS.Offer)
		if err != nil {
			return err
		}
		r.clientTLS = cfg
		return r.probeDeviceTLS(ctx)
	}
	return nil
}

func (r *runner) startMosquitto(ctx context.Context) error {
	if _, err := mosquitto.Binary(); err != nil {
		if r.plan.WebSocket() {
			return fmt.Errorf("spec.mqtt.transport websocket: %w (the embedded broker serves MQTT over TCP only)", err)
		}
		if r.o.NoEmbedded {
			return fmt.Errorf("%w; the embedded broker is disabled (--no-embedded-broker)", err)
		}
		if r.clientCerts != nil {
			return fmt.Errorf("spec.tls.clientCertificates: %w; the embedded broker msgbench would run instead cannot require client certificates", err)
		}
		return r.startEmbedded(ctx)
	}
	if err := r.checkPort(ctx); err != nil {
		return err
	}
	p, err := mosquitto.Start(ctx, r.brokerOptions())
	if err != nil {
		return portError(err, r.o.BrokerPort)
	}
	r.adopt(p, "mosquitto "+p.Version, p.Addr, p.TLSAddr, p.CA)
	r.adoptWebSocket(p.Listeners)
	return nil
}

// brokerOptions are the settings of the local broker, whichever it is: on the server side of the
// link, TLS as the spec asks with the run's certificates, the spec's inflight window and extra
// settings.
func (r *runner) brokerOptions() brokerproc.Options {
	return brokerproc.Options{
		Host: r.net.serverHost, Port: r.o.BrokerPort, TLS: r.plan.Broker.TLS, TLSVersion: r.plan.Broker.TLSVersion, TLS13Suites: devicetls.ServerTLS13(r.spec),
		TLS12Ciphers: devicetls.ServerTLS12(r.spec),
		Bundle:       r.bundle, MaxInflight: int(r.spec.MQTT.Inflight), Extra: r.spec.Broker.Config, Start: r.net.start, Dial: r.net.serverDial,
		Listen: func(ctx context.Context, _, address string) (net.Listener, error) {
			return r.net.listenTCP(ctx, address)
		},
		WebSocket: r.plan.WebSocket(), WebSocketPath: r.spec.MQTT.WebSocketPathOrDefault(),
		ClientCA: r.clientCerts.caOrNil(),
	}
}

// localBroker is what a started broker process gives the run (brokerproc.Process has it all).
type localBroker interface {
	Stop() error
	PID() int
	Usage() (proc.Usage, error)
}

// adopt makes p the run's broker: stopped at teardown, clients pointed at its plain or TLS
// listener, its CPU and memory measured, its name and version in the result.
func (r *runner) adopt(p localBroker, name, addr, tlsAddr string, ca []byte) {
	r.onTeardown(func() { _ = p.Stop() })
	r.broker, r.brokerCA = addr, ca
	if r.plan.Broker.TLS {
		r.broker = tlsAddr
	}
	r.brokerMQTT = r.broker
	r.usage, r.brokerPID = p.Usage, p.PID()
	r.env.Broker = name
	r.logf("broker: %s on %s (pid %d)", name, r.broker, p.PID())
}

// adoptWebSocket points the clients at the broker's MQTT-over-WebSocket listener (wss with TLS)
// when spec.mqtt.transport is websocket.
func (r *runner) adoptWebSocket(l brokerproc.Listeners) {
	if !r.plan.WebSocket() {
		return
	}
	r.brokerWS = l.WSAddr
	if r.plan.Broker.TLS {
		r.brokerWS = l.WSSAddr
	}
	if r.spec.MQTT.WebSocket() {
		r.broker = r.brokerWS
	}
	r.logf("broker: MQTT over WebSocket at %s%s", r.brokerWS, l.WebSocketPath)
}

// checkPort refuses a pinned --broker-port that is busy before a broker's own bind error races
// with its readiness probe.
func (r *runner) checkPort(ctx context.Context) error {
	if r.o.BrokerPort == 0 {
		return nil
	}
	ln, err := r.net.listenTCP(ctx, hostPort(r.net.serverHost, r.o.BrokerPort))
	if err != nil {
		return portError(err, r.o.BrokerPort)
	}
	return ln.Close()
}

// startRabbitMQ starts Debian's RabbitMQ with its MQTT plugin (and its own epmd) on the server
// side of the link.
func (r *runner) startRabbitMQ(ctx context.Context) error {
	if err := r.checkPort(ctx); err != nil {
		return err
	}
	p, err := rabbitmq.Start(ctx, r.brokerOptions())
	if err != nil {
		return portError(err, r.o.BrokerPort)
	}
	r.adopt(p, "rabbitmq "+p.Version, p.Addr, p.TLSAddr, p.CA)
	r.adoptWebSocket(p.Listeners)
	return nil
}

// startArtemis starts ActiveMQ Artemis from the distribution hack/artemis.sh fetched.
func (r *runner) startArtemis(ctx context.Context) error {
	if err := r.checkPort(ctx); err != nil {
		return err
	}
	p, err := artemis.Start(ctx, r.brokerOptions())
	if err != nil {
		return portError(err, r.o.BrokerPort)
	}
	r.adopt(p, "artemis "+p.Version, p.Addr, p.TLSAddr, p.CA)
	r.adoptWebSocket(p.Listeners)
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
	if !r.plan.Broker.TLS {
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
