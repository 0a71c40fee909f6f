package plan

import "github.com/msgbench/msgbench/api/v1alpha1"

// ProtocolLabel is the group's protocol as spoken, version included (a result's
// environment.protocol): "MQTT 3.1.1", "MQTT 5.0", "MQTT 3.1.1 over WebSocket", "MQTT-SN 1.2",
// "HTTP/1.1", "HTTP/2", "HTTP/3", "MQTT 3.1.1 over QUIC", "Kafka".
func (g *Group) ProtocolLabel() string {
	switch {
	case g.MQTT != nil:
		mqtt := "MQTT 3.1.1"
		if g.MQTT.Version == v1alpha1.MQTT5 {
			mqtt = "MQTT 5.0"
		}
		switch {
		case g.Protocol == v1alpha1.ProtocolMQTTQUIC:
			return mqtt + " over QUIC"
		case g.MQTT.WebSocket:
			return mqtt + " over WebSocket"
		}
		return mqtt
	case g.MQTTSN != nil:
		return "MQTT-SN 1.2"
	case g.HTTP != nil:
		switch g.HTTP.Version {
		case v1alpha1.HTTP2:
			return "HTTP/2"
		case v1alpha1.HTTP3:
			return "HTTP/3"
		}
		return "HTTP/1.1"
	case g.Kafka != nil:
		return "Kafka"
	}
	return string(g.Protocol)
}
