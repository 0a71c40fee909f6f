package results

import (
	"strings"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// ProtocolLabel is the protocol as spoken, version included (Environment.Protocol): "MQTT 3.1.1",
// "MQTT 5.0", "MQTT-SN 1.2", "HTTP/1.1", "HTTP/2", "HTTP/3", "MQTT 3.1.1 over QUIC", "Kafka".
func ProtocolLabel(s *v1alpha1.MessagingBenchmarkSpec) string {
	mqtt := "MQTT 3.1.1"
	if s.MQTT.Version == v1alpha1.MQTT5 {
		mqtt = "MQTT 5.0"
	}
	switch s.Protocol {
	case v1alpha1.ProtocolMQTT:
		if s.MQTT.WebSocket() {
			return mqtt + " over WebSocket"
		}
		return mqtt
	case v1alpha1.ProtocolMQTTQUIC:
		return mqtt + " over QUIC"
	case v1alpha1.ProtocolMQTTSN:
		return "MQTT-SN 1.2"
	case v1alpha1.ProtocolHTTP:
		switch s.HTTP.Version {
		case v1alpha1.HTTP2:
			return "HTTP/2"
		case v1alpha1.HTTP3:
			return "HTTP/3"
		}
		return "HTTP/1.1"
	case v1alpha1.ProtocolKafka:
		return "Kafka"
	}
	return string(s.Protocol)
}

// mergeEnvironment is the environment of merged workers: the first's, with each description
// that differs between workers (CPU model, kernel, negotiated TLS …) listing every value seen,
// so a merge never hides that workers ran on different machines or handshakes.
func mergeEnvironment(parts []*Result) Environment {
	env := parts[0].Environment
	for _, f := range []func(*Environment) *string{
		func(e *Environment) *string { return &e.CPUModel },
		func(e *Environment) *string { return &e.Kernel },
		func(e *Environment) *string { return &e.GoVersion },
		func(e *Environment) *string { return &e.MsgbenchVersion },
		func(e *Environment) *string { return &e.MsgbenchCommit },
		func(e *Environment) *string { return &e.TLSVersion },
		func(e *Environment) *string { return &e.TLSGroup },
		func(e *Environment) *string { return &e.TLSCipherSuite },
	} {
		var seen []string
		for _, p := range parts {
			if v := *f(&p.Environment); v != "" && !contains(seen, v) {
				seen = append(seen, v)
			}
		}
		*f(&env) = strings.Join(seen, " | ")
	}
	return env
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
