package plan

import (
	"slices"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/devicetls"
)

// How the clients reach the broker, decided from the groups: what the parts that set up the path
// (the Chaos Mesh objects, the clients' TLS) read instead of spec.protocol.

// DirectToBroker reports whether some group's clients talk to the broker straight, with no msgbench
// gateway between (mqtt, kafka, and mqtt-quic to a broker that serves QUIC itself).
func (p *Plan) DirectToBroker() bool {
	return slices.ContainsFunc(p.Groups, func(g Group) bool { return g.Gateway == "" })
}

// Gateway is the msgbench gateway the run puts in front of the broker ("mqtt-sn", "http",
// "quic"), or "" when every group talks to the broker directly or through an external gateway.
func (p *Plan) Gateway() string {
	for _, g := range p.Groups {
		if g.Gateway != "" && g.ExternalGateway == "" {
			return g.Gateway
		}
	}
	return ""
}

// GatewayTLS reports whether the run's gateway serves TLS (to a group that asks for it, or QUIC).
func (p *Plan) GatewayTLS() bool {
	return slices.ContainsFunc(p.Groups, func(g Group) bool { return g.Gateway != "" && g.ExternalGateway == "" && g.GatewayTLS })
}

// ExternalGateway is the address of the external gateway some group goes through
// (spec.gateway.external), or "".
func (p *Plan) ExternalGateway() string {
	for _, g := range p.Groups {
		if g.ExternalGateway != "" {
			return g.ExternalGateway
		}
	}
	return ""
}

// NeedsCertificate reports whether the run needs a server certificate: the broker serves TLS
// itself, or the gateway does.
func (p *Plan) NeedsCertificate() bool { return p.Broker.TLS || p.GatewayTLS() }

// TLSPath is how group g's clients reach the server their TLS ends at, for devicetls's Check,
// Apply and Client: the TLS version, QUIC, whether that server is the broker itself (mqtt and
// kafka clients), whether it can enforce a TLS 1.3 suite (only Mosquitto, reached by MQTT over
// TCP), and HTTP/2 (no CBC suites).
func (p *Plan) TLSPath(g Group) devicetls.Path {
	return devicetls.Path{
		Version: g.TLSVersion,
		QUIC:    g.QUIC(),
		Broker:  g.Protocol == v1alpha1.ProtocolMQTT || g.Protocol == v1alpha1.ProtocolKafka,
		EnforcesTLS13: g.Protocol == v1alpha1.ProtocolMQTT && g.Gateway == "" && (g.MQTT == nil || !g.MQTT.WebSocket) &&
			p.Broker.Type == v1alpha1.BrokerMosquitto,
		HTTP2: g.Protocol == v1alpha1.ProtocolHTTP && g.HTTPVersion == v1alpha1.HTTP2,
	}
}

// WebSocket reports whether some group's clients carry MQTT over WebSocket: the broker must serve
// a WebSocket listener.
func (p *Plan) WebSocket() bool {
	return slices.ContainsFunc(p.Groups, func(g Group) bool { return g.MQTT != nil && g.MQTT.WebSocket })
}

// GatewayModes are the msgbench gateways the run starts for its groups to reach the broker
// through, one per mode in use ("mqtt-sn", "http", "quic"), in the groups' order: none for the
// groups that go through an external gateway (Group.ExternalGateway).
func (p *Plan) GatewayModes() []string {
	var modes []string
	for _, g := range p.Groups {
		if g.Gateway != "" && g.ExternalGateway == "" && !slices.Contains(modes, g.Gateway) {
			modes = append(modes, g.Gateway)
		}
	}
	return modes
}
