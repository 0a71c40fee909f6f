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
	"github.com/msgbench/msgbench/netem/emulator"
	"github.com/msgbench/msgbench/plan"
)

// Check refuses, before anything starts, a spec this machine cannot run although the API server
// accepts it (it may run on Kubernetes): what it needs is not installed or not allowed here, or
// the local set-up cannot provide what it asks for. Each message names the field or the missing
// piece and what to do. Run calls it first; `msgbench run` calls it before it makes the run's
// folder.
func Check(spec *v1alpha1.MessagingBenchmarkSpec, o Options) (*plan.Plan, error) {
	// The broker's refusals come first (caps.Check reads the plan's groups, so the plan is
	// compiled before), then the plan's own: its rules, the clients' TLS among them.
	p, compileErr := plan.Compile(spec, plan.Local)
	if err := checkBroker(spec, p, o); err != nil {
		return nil, err
	}
	if compileErr != nil {
		return nil, compileErr
	}
	if ext := p.ExternalGateway(); ext != "" && spec.HTTP.Endpoint != nil {
		host, _, _ := net.SplitHostPort(ext)
		if err := localaddr.Check("spec.http.endpoint.url", host); err != nil {
			return nil, err
		}
		if p.Network.Impaired {
			return nil, fmt.Errorf("spec.network: a local run emulates the link between two network namespaces it creates, which reach only what it starts, not the endpoint %s; remove spec.network, or run it on Kubernetes (Chaos Mesh)", ext)
		}
	}
	if err := checkDiscoveryHosts(spec, p); err != nil {
		return nil, err
	}
	if p.Network.Impaired {
		if err := emulator.CheckPrivileges(); err != nil {
			return nil, fmt.Errorf("spec.network: %w", err)
		}
	}
	if err := checkLimits(spec, p, o); err != nil {
		return nil, err
	}
	if _, err := loadCredentials(p, o); err != nil {
		return nil, err
	}
	return p, nil
}

// checkBroker refuses a broker this machine cannot start or reach. p is the spec's
// plan, nil when it does not compile (Check then reports why, after these).
func checkBroker(spec *v1alpha1.MessagingBenchmarkSpec, p *plan.Plan, o Options) error {
	if !spec.Broker.Type.Local() {
		return notLocal(spec.Broker.Type)
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
		if g := spec.Gateway.External; g != nil {
			host, _, err := net.SplitHostPort(g.Address)
			if err != nil {
				return fmt.Errorf("spec.gateway.external.address: %w", err)
			}
			if err := localaddr.Check("spec.gateway.external.address", host); err != nil {
				return err
			}
		}
	case v1alpha1.BrokerRabbitMQ:
		bin, err := rabbitmq.Binary()
		if err != nil {
			return fmt.Errorf("spec.broker.type rabbitmq: %w", err)
		}
		if err := rabbitmq.CheckConfig(spec.Broker.Config, rabbitmq.Version(bin)); err != nil {
			return err
		}
		if err := capsCheck(spec.Broker.Type, rabbitmq.Version(bin), p); err != nil {
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
		if err := capsCheck(spec.Broker.Type, artemis.Version, p); err != nil {
			return err
		}
	default:
		if err := mosquitto.CheckConfig(spec.Broker.Config); err != nil {
			return err
		}
		if bin, err := mosquitto.Binary(); err == nil {
			if err := capsCheck(spec.Broker.Type, mosquitto.Version(bin), p); err != nil {
				return err
			}
		} else if o.NoEmbedded {
			return fmt.Errorf("%w; the embedded broker is disabled (--no-embedded-broker)", err)
		} else if devicetls.ServerTLS13(spec) != "" {
			return fmt.Errorf("spec.tls.cipherSuites: a TLS 1.3 suite choice is enforced by Mosquitto (ciphers_tls1.3), which is not installed (%v); "+
				"the embedded Go broker cannot restrict TLS 1.3 suites (docs/tls.md)", err)
		}
	}
	return nil
}

// notLocal explains why a broker type cannot run locally and how to run it instead.
func notLocal(t v1alpha1.BrokerType) error {
	return fmt.Errorf("spec.broker.type %s: msgbench runs %s only on Kubernetes (its official image; no Debian or Maven package "+
		"installs it here, and msgbench uses no container registry). Run it on a cluster: kubectl apply -f the manifest with the "+
		"operator installed (docs/install.md). Or start the broker yourself on this machine and point the run at it: "+
		"--set broker.type=external --set broker.external.address=127.0.0.1:1883. "+
		"Locally msgbench starts mosquitto, rabbitmq, artemis and kafka", t, t)
}

// capsCheck is caps.Check of a plan that may not have compiled (nil: Check reports why after the
// broker's refusals).
func capsCheck(t v1alpha1.BrokerType, version string, p *plan.Plan) error {
	if p == nil {
		return nil
	}
	return caps.Check(t, version, p)
}

// checkDiscoveryHosts refuses a spec.mqttsn.discovery.address a local run would have to look up
// (it resolves only this machine's names, never DNS), before anything starts.
func checkDiscoveryHosts(spec *v1alpha1.MessagingBenchmarkSpec, p *plan.Plan) error {
	for _, g := range p.Groups {
		if g.MQTTSN == nil || g.MQTTSN.Discovery == nil || g.MQTTSN.Discovery.Address == "" {
			continue
		}
		a, err := g.MQTTSN.Discovery.SearchAddress("0.0.0.0:1") // only its host is checked here
		if err != nil {
			return err
		}
		host, _, _ := net.SplitHostPort(a)
		field := "spec.mqttsn.discovery.address"
		if d := spec.MQTTSN.Discovery; d == nil || d.Address != g.MQTTSN.Discovery.Address {
			field = fmt.Sprintf("spec.groups[%s].mqttsn.discovery.address", g.Name)
		}
		if err := localaddr.Check(field, host); err != nil {
			return err
		}
	}
	return nil
}
