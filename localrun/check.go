package localrun

import (
	"fmt"
	"net"
	"os/exec"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/artemis"
	"github.com/msgbench/msgbench/brokers/caps"
	"github.com/msgbench/msgbench/brokers/kafka"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/brokers/rabbitmq"
	"github.com/msgbench/msgbench/internal/devicetls"
	"github.com/msgbench/msgbench/internal/localaddr"
	"github.com/msgbench/msgbench/netem"
	"github.com/msgbench/msgbench/netem/emulator"
)

// Check refuses, before anything starts, a spec this machine cannot run although the API server
// accepts it (it may run on Kubernetes): what it needs is not installed or not allowed here, or
// the local set-up cannot provide what it asks for. Each message names the field or the missing
// piece and what to do. Run calls it first; `msgbench run` calls it before it makes the run's
// folder.
func Check(spec *v1alpha1.MessagingBenchmarkSpec, o Options) error {
	if !spec.Broker.Type.Local() {
		return notLocal(spec.Broker.Type)
	}
	if err := devicetls.Check(spec); err != nil {
		return err
	}
	switch spec.Broker.Type {
	case v1alpha1.BrokerKafka:
		if spec.Kafka.Replicas > 1 {
			return fmt.Errorf("spec.kafka.replicas: %d replicas need as many brokers, and a local run starts one Kafka node; "+
				"use --set kafka.replicas=1, or run it on Kubernetes", spec.Kafka.Replicas)
		}
		if err := kafka.CheckConfig(spec.Broker.Config); err != nil {
			return err
		}
		if _, err := exec.LookPath("java"); err != nil {
			return kafka.ErrNotInstalled
		}
		if _, err := kafka.Libs(); err != nil {
			return fmt.Errorf("spec.broker.type kafka: %w", err)
		}
	case v1alpha1.BrokerExternal:
		host, _, err := net.SplitHostPort(spec.Broker.External.Address)
		if err != nil {
			return fmt.Errorf("spec.broker.external.address: %w", err)
		}
		if err := localaddr.Check("spec.broker.external.address", host); err != nil {
			return err
		}
		if spec.Impaired() {
			return fmt.Errorf("spec.network: a local run emulates the link between two network namespaces it creates, which reach "+
				"only what it starts, not the external broker %s; remove spec.network, or run it on Kubernetes (Chaos Mesh)", spec.Broker.External.Address)
		}
	case v1alpha1.BrokerRabbitMQ:
		bin, err := rabbitmq.Binary()
		if err != nil {
			return fmt.Errorf("spec.broker.type rabbitmq: %w", err)
		}
		if err := rabbitmq.CheckConfig(spec.Broker.Config, rabbitmq.Version(bin)); err != nil {
			return err
		}
		if err := caps.Check(spec.Broker.Type, rabbitmq.Version(bin), spec); err != nil {
			return err
		}
	case v1alpha1.BrokerArtemis:
		if _, err := artemis.Java(); err != nil {
			return fmt.Errorf("spec.broker.type artemis: %w", err)
		}
		if _, err := artemis.Home(); err != nil {
			return fmt.Errorf("spec.broker.type artemis: %w", err)
		}
		if err := artemis.CheckConfig(spec.Broker.Config); err != nil {
			return err
		}
		if err := caps.Check(spec.Broker.Type, artemis.Version, spec); err != nil {
			return err
		}
	default:
		if err := mosquitto.CheckConfig(spec.Broker.Config); err != nil {
			return err
		}
		if bin, err := mosquitto.Binary(); err == nil {
			if err := caps.Check(spec.Broker.Type, mosquitto.Version(bin), spec); err != nil {
				return err
			}
		} else if o.NoEmbedded {
			return fmt.Errorf("%w; the embedded broker is disabled (--no-embedded-broker)", err)
		} else if devicetls.ServerTLS13(spec) != "" {
			return fmt.Errorf("spec.tls.cipherSuites: a TLS 1.3 suite choice is enforced by Mosquitto (ciphers_tls1.3), which is not installed (%v); "+
				"the embedded Go broker cannot restrict TLS 1.3 suites (docs/tls.md)", err)
		}
	}
	if spec.Impaired() {
		link, err := netem.Resolve(spec.Network)
		if err != nil {
			return fmt.Errorf("spec.network: %w", err)
		}
		if err := checkQUICMTU(spec, link); err != nil {
			return err
		}
		if err := checkTimeline(spec); err != nil {
			return err
		}
		if _, err := netem.ResolveRadio(spec.Network); err != nil {
			return err
		}
		if err := emulator.CheckPrivileges(); err != nil {
			return fmt.Errorf("spec.network: %w", err)
		}
	}
	return checkLimits(spec, o)
}

// notLocal explains why a broker type cannot run locally and how to run it instead.
func notLocal(t v1alpha1.BrokerType) error {
	return fmt.Errorf("spec.broker.type %s: msgbench runs %s only on Kubernetes (its official image; no Debian or Maven package "+
		"installs it here, and msgbench uses no container registry). Run it on a cluster: kubectl apply -f the manifest with the "+
		"operator installed (docs/install.md). Or start the broker yourself on this machine and point the run at it: "+
		"--set broker.type=external --set broker.external.address=127.0.0.1:1883. "+
		"Locally msgbench starts mosquitto, rabbitmq, artemis and kafka", t, t)
}

// QUICMinMTU is the smallest link MTU QUIC runs on: RFC 9000 (section 14) requires every
// datagram that carries an Initial packet to be at least 1200 bytes, and the emulated link below
// 1280 bytes is IPv4 only, so 1200 bytes of UDP payload plus the 8-byte UDP and 20-byte IPv4
// headers. QUIC sets don't-fragment, so on a smaller MTU its handshake never completes.
const QUICMinMTU = 1200 + 8 + 20

// checkQUICMTU refuses a QUIC protocol (mqtt-quic, http version 3) on an emulated link whose MTU
// (the profile's, from netem's table, or spec.network.mtuBytes) is below QUICMinMTU: the run
// would start everything and then fail on the handshake. On Kubernetes the rule does not apply:
// pods keep their interface MTU.
func checkQUICMTU(spec *v1alpha1.MessagingBenchmarkSpec, link netem.Link) error {
	quic := spec.Protocol == v1alpha1.ProtocolMQTTQUIC || (spec.Protocol == v1alpha1.ProtocolHTTP && spec.HTTP.Version == v1alpha1.HTTP3)
	if !quic || link.EffectiveMTU() >= QUICMinMTU {
		return nil
	}
	what := string(spec.Protocol)
	if spec.Protocol == v1alpha1.ProtocolHTTP {
		what = "http version 3 (HTTP/3)"
	}
	where := fmt.Sprintf("spec.network.mtuBytes: an MTU of %d bytes", link.EffectiveMTU())
	if spec.Network.MTUBytes == nil {
		where = fmt.Sprintf("spec.network.profile: %s's MTU of %d bytes", spec.Network.Profile, link.EffectiveMTU())
	}
	return fmt.Errorf("%s is too small for %s: QUIC's handshake needs 1200-byte UDP datagrams (RFC 9000 section 14), "+
		"an MTU of at least %d bytes, and it sets don't-fragment, so the run would fail on the handshake; "+
		"set spec.network.mtuBytes to 1280 (docs/netem.md), or use a TCP protocol", where, what, QUICMinMTU)
}
