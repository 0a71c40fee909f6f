package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// What the plan decides for msgbench's gateways (package gateway): which groups a gateway
// serves, and the settings it holds on the broker's side for them. A gateway reads these and
// its groups' protocol options, never the spec.

// GatewayOptions are what the gateway of a group (Group.Gateway set) decides on its side: how it
// speaks to the broker for the group's clients, whose own protocol (MQTT-SN, HTTP) says nothing
// about it.
type GatewayOptions struct {
	// MQTTVersion is the MQTT version the gateway's broker connections speak: spec.mqtt.version,
	// 3.1.1 when unset. (The QUIC gateway passes its clients' bytes on as they are.)
	MQTTVersion v1alpha1.MQTTVersion
	// MQTTSNMode is spec.mqttsn.gatewayMode for an MQTT-SN group: transparent (one broker
	// connection per client; when unset) or aggregating (a pool shared by all clients). Empty for
	// the other protocols.
	MQTTSNMode v1alpha1.MQTTSNGatewayMode
	// AcceptEarlyPublishes is spec.http.acceptEarlyPublishes for an HTTP group: the gateway acts
	// on a publish that may be replayed (sent in 0-RTT before the handshake completed, or marked
	// "Early-Data: 1") instead of answering 425 Too Early. False for the other protocols.
	AcceptEarlyPublishes bool
}

// gatewayOptions are the GatewayOptions of the group spec describes, nil when its clients talk
// to the broker directly.
func gatewayOptions(spec *v1alpha1.MessagingBenchmarkSpec) *GatewayOptions {
	if spec.GatewayMode() == "" {
		return nil
	}
	o := &GatewayOptions{MQTTVersion: v1alpha1.MQTT311}
	if spec.MQTT.Version == v1alpha1.MQTT5 {
		o.MQTTVersion = v1alpha1.MQTT5
	}
	if spec.Protocol == v1alpha1.ProtocolHTTP {
		o.AcceptEarlyPublishes = spec.HTTP.AcceptEarlyPublishes
	}
	if spec.Protocol == v1alpha1.ProtocolMQTTSN {
		o.MQTTSNMode = spec.MQTTSN.GatewayMode
		if o.MQTTSNMode == "" {
			o.MQTTSNMode = v1alpha1.GatewayTransparent
		}
	}
	return o
}

// GatewayGroups are the groups whose clients reach the broker through the msgbench gateway of
// mode ("mqtt-sn", "http", "quic"), in the plan's order: what that gateway serves. One gateway
// serves every group of its mode.
func (p *Plan) GatewayGroups(mode string) []Group {
	var out []Group
	for _, g := range p.Groups {
		if mode != "" && g.Gateway == mode {
			out = append(out, g)
		}
	}
	return out
}

// Clients is how many clients the group has, publishers and subscribers: how many sessions it
// may hold at a gateway at once.
func (g *Group) Clients() int { return int(g.Publishers) + int(g.Subscribers) }

// externalGateway is spec.gateway.external.address when the spec's clients go through a
// gateway, else "".
func externalGateway(spec *v1alpha1.MessagingBenchmarkSpec) string {
	if spec.GatewayMode() == "" || spec.Gateway.External == nil {
		return ""
	}
	return spec.Gateway.External.Address
}

// checkExternalGateway refuses an external gateway the run's groups cannot share: one address
// serves one protocol, so the groups that need a gateway must all need the same kind; and one
// that no group goes through.
func checkExternalGateway(spec *v1alpha1.MessagingBenchmarkSpec, p *Plan) error {
	if spec.HTTP.Endpoint != nil && !slices.ContainsFunc(p.Groups, func(g Group) bool { return g.HTTP != nil && g.HTTP.Endpoint != nil }) {
		return fmt.Errorf("spec.http.endpoint: no group speaks http (spec.protocol %s): only HTTP clients send its requests", spec.Protocol)
	}
	if spec.Gateway.External == nil {
		return nil
	}
	var modes []string
	for _, g := range p.Groups {
		if g.Gateway != "" && !slices.Contains(modes, g.Gateway) {
			modes = append(modes, g.Gateway)
		}
	}
	switch {
	case len(modes) == 0:
		return fmt.Errorf("spec.gateway.external: no group goes through a gateway (mqtt and kafka clients, and mqtt-quic to a broker that serves QUIC, reach the broker directly): leave it out, or set spec.broker.external for the broker")
	case len(modes) > 1:
		return fmt.Errorf("spec.gateway.external: the groups go through %s gateways, and one address serves one protocol: run the groups of one protocol per benchmark", strings.Join(modes, " and "))
	}
	return nil
}
