// Package plan compiles a MessagingBenchmark's spec, once, into the run plan the parts of
// msgbench read: the network resolved (base link per direction, timeline steps, radio, round
// trip), the rules that go beyond the CRD's schema and CEL checked, and the run's clients as a
// list of groups (today's flat spec compiles to one group). A part takes its typed share of the
// plan instead of reading and resolving the raw spec again (docs/plan.md).
//
// Compile is a pure function: the same spec and target always give the same plan or the same
// error, and an error names the field.
package plan

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/devicetls"
)

// Version names the plan's shape; it changes when a field's meaning does.
const Version = "plan.msgbench.io/v1alpha1"

// Target is where the plan runs, which decides the rules that apply to one place only.
type Target string

const (
	// Local is `msgbench run`: the link is emulated in user space on this machine.
	Local Target = "local"
	// Kubernetes is the operator: Chaos Mesh shapes the pods' traffic.
	Kubernetes Target = "kubernetes"
	// Admitted is a spec whoever started the run has checked already — the operator or msgbench
	// run, for a worker they started — or a result's record of a run that happened: it is
	// resolved the same way, without the rules that decide whether a run may start (a result
	// stays readable when a later msgbench refuses what an earlier one ran).
	Admitted Target = "admitted"
)

// Plan is one run, compiled.
type Plan struct {
	Version string
	Target  Target
	// Network is spec.network resolved once.
	Network Network
	// Timing is the run's clock: warm-up, measured window, timeline buckets.
	Timing Timing
	// Broker is the broker the clients (or their gateways) reach.
	Broker Broker
	// Workers is spec.workers.replicas: how many load-generator processes share the clients
	// (Group.Share deals them).
	Workers int
	// Groups are the run's clients, one group per kind of device. A flat spec is one group.
	Groups []Group
	// Benchmark names the run the plan is for: what its metrics series are labelled with. Set by
	// whoever compiles a benchmark (NameOf); empty for a spec compiled alone.
	Benchmark Name
	// Source is the spec the plan was compiled from, defaulted, kept as the run's record (a
	// result stores it and a report compiles it again). No part decides from it: what a part
	// needs is a field of the plan.
	Source *v1alpha1.MessagingBenchmarkSpec
}

// Name is the benchmark a plan is for: its name and namespace, and for a suite's run its suite,
// point and repetition.
type Name struct {
	Name, Namespace          string
	Suite, Point, Repetition string
}

// NameOf is mb's Name (a suite's run carries its suite, point and repetition in its labels and
// annotations).
func NameOf(mb *v1alpha1.MessagingBenchmark) Name {
	return Name{Name: mb.Name, Namespace: mb.Namespace, Suite: mb.Labels[v1alpha1.LabelSuite],
		Point: mb.Annotations[v1alpha1.AnnotationPoint], Repetition: mb.Annotations[v1alpha1.AnnotationRepetition]}
}

// Broker is what the plan decides about the broker.
type Broker struct {
	// Type is spec.broker.type (mosquitto when unset).
	Type v1alpha1.BrokerType
	// TLS says whether the broker itself serves TLS (v1alpha1 BrokerTLS): its clients reach it
	// over TLS, or over QUIC straight to its QUIC listener.
	TLS bool
	// TLSVersion is the TLS version the broker's clients use ("1.2" or "1.3"), when TLS is set.
	TLSVersion string
}

// Group is one kind of client: the same protocol, QoS and load model for each of its members.
type Group struct {
	Name     string
	Protocol v1alpha1.Protocol
	// HTTPVersion is spec.http.version when Protocol is http.
	HTTPVersion v1alpha1.HTTPVersion
	QoS         int32
	Publishers  int32
	Subscribers int32
	Topics      int32
	// Load is the group's load model: rate, message count, connect ramp, churn.
	Load Load
	// Inflight is the most messages a publisher keeps unacknowledged, at least 1:
	// spec.mqtt.inflight, the window every msgbench protocol uses.
	Inflight int
	// Gateway is the msgbench gateway between the group's clients and the broker ("mqtt-sn",
	// "http" or "quic"), or "" when they talk to the broker directly (v1alpha1 GatewayMode).
	Gateway string
	// GatewayTLS says whether that gateway serves its clients TLS (QUIC always does).
	GatewayTLS bool
	// ExternalGateway is spec.gateway.external.address for a group whose clients go through a
	// gateway (Gateway set): msgbench starts none of that mode, and they connect there.
	ExternalGateway string
	// TLSVersion is the TLS version the clients use ("1.2" or "1.3"; QUIC is always 1.3).
	TLSVersion string

	// What every driver reads: the payload size (spec.workload.payloadBytes), the topics' names
	// (TopicName: spec.workload.topicPrefix) and the clients' TLS settings.
	PayloadBytes int32
	// Payload varies a device group's messages (publish.payload: a size distribution or a JSON
	// template; payload.go), PayloadBytes then being the largest; nil: PayloadBytes each.
	Payload     *Payload
	TopicPrefix string
	TLS         TLSOptions
	// The group's protocol options (options.go), defaulted and checked: MQTT for mqtt and
	// mqtt-quic, MQTTSN, HTTP and Kafka for theirs; QUICTransport when QUIC() holds. The options
	// of the protocols the group does not speak are nil.
	MQTT          *MQTTOptions
	MQTTSN        *MQTTSNOptions
	HTTP          *HTTPOptions
	QUICTransport *QUICOptions
	Kafka         *KafkaOptions
	// GatewayOptions are the group's gateway's own settings (gateway.go), nil without one.
	GatewayOptions *GatewayOptions
	// Fleet is the group's place in a run with spec.groups (groups.go): its topic group or
	// subscription, its client ids and its publishers' ids. nil for a flat spec's one group.
	Fleet *Fleet
	// Network is the group's own link (spec.groups[].network), nil when its clients take the
	// run's (Plan.Network).
	Network *Network
	// Identity is its devices' client ids and credentials (identity.go), nil for msgbench's
	// default ids without credentials.
	Identity *Identity
}

// QUIC reports whether the group's clients talk over QUIC (UDP), whose handshake needs a
// 1200-byte datagram.
func (g Group) QUIC() bool {
	return g.Protocol == v1alpha1.ProtocolMQTTQUIC || (g.Protocol == v1alpha1.ProtocolHTTP && g.HTTPVersion == v1alpha1.HTTP3)
}

// DialsTLS reports whether the connections the group's clients dial are encrypted: to their
// gateway when it serves TLS, or straight to a broker that does (QUIC always is).
func (g Group) DialsTLS(b Broker) bool {
	if g.Gateway != "" {
		return g.GatewayTLS
	}
	return b.TLS
}

// Compile checks spec against the rules the API server cannot (or, for a manifest read without
// one, did not) apply and resolves it into a Plan for target. spec must be defaulted (the CRD's
// defaults applied), as the API server and `msgbench run` leave it.
func Compile(spec *v1alpha1.MessagingBenchmarkSpec, target Target) (*Plan, error) {
	if spec == nil {
		return nil, fmt.Errorf("spec: missing")
	}
	switch target {
	case Local, Kubernetes, Admitted:
	default:
		return nil, fmt.Errorf("plan: unknown target %q", target)
	}
	p := &Plan{Version: Version, Target: target, Timing: compileTiming(spec), Workers: max(1, int(spec.Workers.Replicas)),
		Broker: Broker{Type: spec.Broker.Type, TLS: spec.BrokerTLS(), TLSVersion: spec.ClientTLSVersion()}, Groups: []Group{flatGroup(spec)}, Source: spec}
	if p.Broker.Type == "" {
		p.Broker.Type = v1alpha1.BrokerMosquitto
	}
	var err error
	if p.Network, err = compileNetwork(spec, target); err != nil {
		return nil, err
	}
	if len(spec.Groups) > 0 {
		if target != Admitted {
			if err := checkFleetForm(spec); err != nil {
				return nil, err
			}
		}
		if err := compileFleet(spec, p, target); err != nil {
			return nil, err
		}
	} else {
		if err := compileOptions(spec, &p.Groups[0]); err != nil {
			return nil, err
		}
		if _, err := compileIdentity(spec, nil, &p.Groups[0], target); err != nil {
			return nil, err
		}
		// The clients' TLS settings against how the group's TLS ends (the operator's workers
		// applied them only once running, after everything was created).
		if target != Admitted {
			if err := devicetls.Check(spec, p.TLSPath(p.Groups[0])); err != nil {
				return nil, err
			}
		}
	}
	if err := checkExternalGateway(spec, p); err != nil {
		return nil, err
	}
	if target == Local {
		for i, g := range p.Groups {
			if g.Network == nil {
				if err := checkQUICMTU(spec, g, p.Network.Link); err != nil {
					return nil, err
				}
			} else if err := checkQUICMTU(GroupView(spec, &spec.Groups[i]), g, g.Network.Link); err != nil {
				// The group's own link: its fields, in the advice too.
				return nil, errors.New(strings.ReplaceAll(err.Error(), "spec.network.", "spec.groups["+g.Name+"].network."))
			}
		}
	}
	return p, nil
}

// CompileBenchmark is Compile of mb's spec, the plan named for mb (Plan.Benchmark).
func CompileBenchmark(mb *v1alpha1.MessagingBenchmark, target Target) (*Plan, error) {
	p, err := Compile(&mb.Spec, target)
	if err != nil {
		return nil, err
	}
	p.Benchmark = NameOf(mb)
	return p, nil
}

// flatGroup is the one group a spec without groups describes.
func flatGroup(spec *v1alpha1.MessagingBenchmarkSpec) Group {
	return Group{
		Name:            "default",
		Protocol:        spec.Protocol,
		HTTPVersion:     spec.HTTP.Version,
		QoS:             spec.QoS,
		Publishers:      spec.Workload.Publishers,
		Subscribers:     spec.Workload.Subscribers,
		Topics:          spec.Workload.Topics,
		Load:            compileLoad(&spec.Workload),
		Inflight:        max(1, int(spec.MQTT.Inflight)),
		Gateway:         spec.GatewayMode(),
		GatewayTLS:      spec.GatewayMode() != "" && spec.GatewayTLS(),
		ExternalGateway: externalGateway(spec),
		TLSVersion:      spec.ClientTLSVersion(),

		GatewayOptions: gatewayOptions(spec),
	}
}

// SchedulingStall is the load generator's own scheduling allowance: 50 benchmarks at once on 2
// cores under -race left a QoS 0 publisher 2 messages of 20 msg/s behind on loopback.
const SchedulingStall = 100 * time.Millisecond

// tcpMinRTO is Linux's lowest TCP retransmission timeout (TCP_RTO_MIN, 200 ms); QUIC's probe
// timeout on a fresh path is of the same order.
const tcpMinRTO = 200 * time.Millisecond

// StallAllowance is the longest an open-loop publisher may fall behind once near the window's
// end and still be counted as sustaining its load, from the plan alone: one SchedulingStall; on
// a link that loses packets, two retransmissions in a row with their round trips (TCP's minimum
// timeout, or MQTT-SN's retry interval at QoS 1 and 2); the outages spec.network.timeline plans;
// and a radio's promotion delay and paging cycle. The largest over the groups. A link or broker
// that cannot carry the rate falls behind by more, window after window; a broker that stalls for
// longer than this fails the run.
func (p *Plan) StallAllowance() time.Duration {
	allow := p.Network.stallAllowance(p.Groups)
	for _, g := range p.Groups {
		if g.Network != nil {
			allow = max(allow, g.Network.stallAllowance([]Group{g}))
		}
	}
	return allow
}

// stallAllowance is StallAllowance for the groups behind link n.
func (n *Network) stallAllowance(groups []Group) time.Duration {
	if !n.Impaired {
		return SchedulingStall
	}
	rtt := n.SlowestRTT()
	var retry time.Duration
	if n.MayLose() {
		for _, g := range groups {
			// TCP (and QUIC): a loss, then a loss of the retransmission, backed off twice as long.
			r := 3 * (tcpMinRTO + rtt)
			if g.MQTTSN != nil && g.QoS > 0 {
				// MQTT-SN waits its whole retry interval (T_retry, 10 s by default) once.
				r = max(r, g.MQTTSN.RetryInterval+rtt)
			}
			retry = max(retry, r)
		}
	}
	allow := SchedulingStall + retry
	for _, o := range n.Outages {
		allow += o + rtt
	}
	if n.Radio != nil {
		allow += n.Radio.PromotionDelay + n.Radio.PagingCycle
	}
	return allow
}
