package v1alpha1

import (
	"strconv"
	"time"
)

// Decisions about a spec that the operator and the local runner both make; keeping them here
// makes the two modes provision the same things.

// GatewayMode is the msgbench gateway the protocol needs between clients and the MQTT broker
// ("mqtt-sn", "http" or "quic"), or "" when clients talk to the broker directly: mqtt and kafka
// always, and mqtt-quic against EMQX, whose own QUIC listener serves MQTT over QUIC (as in
// reference study 3).
func (s *MessagingBenchmarkSpec) GatewayMode() string {
	switch s.Protocol {
	case ProtocolMQTTSN:
		return "mqtt-sn"
	case ProtocolHTTP:
		return "http"
	case ProtocolMQTTQUIC:
		if s.Broker.Type.ServesQUIC() {
			return ""
		}
		return "quic"
	}
	return ""
}

// ServesQUIC reports whether the broker serves MQTT over QUIC itself (EMQX's QUIC listener).
func (t BrokerType) ServesQUIC() bool { return t == BrokerEMQX }

// MQTTBroker reports whether msgbench runs this broker as an MQTT broker: every managed type but
// kafka (which Strimzi or the local KRaft node runs).
func (t BrokerType) MQTTBroker() bool { return t != BrokerExternal && t != BrokerKafka }

// Local reports whether a local run can start the broker. The brokers a local run can install from package registries (Debian, Maven Central)
// are mosquitto, kafka, rabbitmq and artemis; the others run on Kubernetes from their images.
func (t BrokerType) Local() bool {
	switch t {
	case BrokerMosquitto, BrokerKafka, BrokerRabbitMQ, BrokerArtemis, BrokerExternal, "":
		return true
	}
	return false
}

// TLSEnabled reports spec.tls.enabled.
func (s *MessagingBenchmarkSpec) TLSEnabled() bool { return s.TLS != nil && s.TLS.Enabled }

// BrokerTLS reports whether the broker itself serves TLS: for mqtt and kafka clients with
// spec.tls, and for mqtt-quic straight to a broker's QUIC listener (QUIC always encrypts).
// Gateways terminate their clients' TLS and reach the broker in the clear.
func (s *MessagingBenchmarkSpec) BrokerTLS() bool {
	return s.GatewayMode() == "" && (s.TLSEnabled() || s.Protocol == ProtocolMQTTQUIC)
}

// GatewayTLS reports whether the gateway serves TLS: with spec.tls, and always for QUIC.
func (s *MessagingBenchmarkSpec) GatewayTLS() bool {
	return s.TLSEnabled() || s.Protocol == ProtocolMQTTQUIC || (s.Protocol == ProtocolHTTP && s.HTTP.Version == HTTP3)
}

// NeedsCertificate reports whether a server certificate is needed at all.
func (s *MessagingBenchmarkSpec) NeedsCertificate() bool {
	return s.BrokerTLS() || (s.GatewayMode() != "" && s.GatewayTLS())
}

// ClientTLSVersion is the TLS version clients use ("1.2" or "1.3"); QUIC always uses 1.3.
func (s *MessagingBenchmarkSpec) ClientTLSVersion() string {
	if s.TLS == nil || s.TLS.Version == "" || s.Protocol == ProtocolMQTTQUIC || (s.Protocol == ProtocolHTTP && s.HTTP.Version == HTTP3) {
		return string(TLS13)
	}
	return string(s.TLS.Version)
}

// Impaired reports whether spec.network asks for an emulated link: a profile other than none,
// or a timeline, whose steps may impair a link that starts unimpaired, or radio states.
func (s *MessagingBenchmarkSpec) Impaired() bool {
	return (s.Network.Profile != "" && s.Network.Profile != ProfileNone) || len(s.Network.Timeline) > 0 || s.Network.Radio != nil
}

// The fields below are pointers because their CRD default is not Go's zero value while the zero
// value is a setting of its own (false, 0). As plain values, a Go client's unset field would
// reach the API server as an explicit false or 0 and silently replace the default — a typed
// HTTP benchmark opened a new connection per message. Unset (nil) means the default, here too.

// CleanSessionOrDefault is spec.mqtt.cleanSession; unset means true.
func (m *MQTTSpec) CleanSessionOrDefault() bool { return m.CleanSession == nil || *m.CleanSession }

// KeepAliveSecondsOrDefault is spec.mqtt.keepAliveSeconds; unset means 60.
func (m *MQTTSpec) KeepAliveSecondsOrDefault() int32 {
	if m.KeepAliveSeconds == nil {
		return DefaultKeepAliveSeconds
	}
	return *m.KeepAliveSeconds
}

// ClientKeepAlive is the keep-alive interval the clients announce to the broker (or the MQTT-SN
// gateway): spec.mqtt.keepAliveSeconds for the MQTT family, 0 for HTTP and Kafka, which have none.
func (s *MessagingBenchmarkSpec) ClientKeepAlive() time.Duration {
	switch s.Protocol {
	case ProtocolMQTT, ProtocolMQTTSN, ProtocolMQTTQUIC:
		return time.Duration(s.MQTT.KeepAliveSecondsOrDefault()) * time.Second
	}
	return 0
}

// WebSocket reports whether MQTT runs over WebSocket (spec.mqtt.transport websocket).
func (m *MQTTSpec) WebSocket() bool { return m.Transport == TransportWebSocket }

// WebSocketPathOrDefault is spec.mqtt.webSocketPath; unset means /mqtt.
func (m *MQTTSpec) WebSocketPathOrDefault() string {
	if m.WebSocketPath == "" {
		return "/mqtt"
	}
	return m.WebSocketPath
}

// MaxRetriesOrDefault is spec.mqttsn.maxRetries; unset means 5.
func (m *MQTTSNSpec) MaxRetriesOrDefault() int32 {
	if m.MaxRetries == nil {
		return DefaultMQTTSNMaxRetries
	}
	return *m.MaxRetries
}

// KeepAliveOrDefault is spec.http.keepAlive; unset means true.
func (h *HTTPSpec) KeepAliveOrDefault() bool { return h.KeepAlive == nil || *h.KeepAlive }

// Defaults of the pointer fields, equal to their +kubebuilder:default markers
// (TestPointerDefaultsMatchTheCRD checks them against the generated schema).
const (
	DefaultKeepAliveSeconds int32 = 60
	DefaultMQTTSNMaxRetries int32 = 5
)

// TopicName is the name of topic t (0-based) of the workload: topicPrefix followed by t. The load
// generator, the gateways' predefined topics and the operator's KafkaTopics all name topics so.
func (w *WorkloadSpec) TopicName(t int) string { return w.TopicPrefix + strconv.Itoa(t) }

// ClientsOfWorker is how many clients worker i of n holds: topics are dealt round-robin (topic t
// to worker t mod n), each topic's publishers and subscribers go with it, and the first c mod
// topics topics take one more of c clients (plan.Group.Share deals them so). Counted per topic,
// not per client, so a million clients cost nothing. Worker 0 holds the most.
func (w *WorkloadSpec) ClientsOfWorker(i, n int) int {
	topics := max(1, int(w.Topics))
	on := func(c, t int) int {
		k := c / topics
		if t < c%topics {
			k++
		}
		return k
	}
	sum := 0
	for t := i; t < topics; t += max(1, n) {
		sum += on(int(w.Publishers), t) + on(int(w.Subscribers), t)
	}
	return sum
}
