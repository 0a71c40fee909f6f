// Package caps says what each broker msgbench runs can do, by version, so that a spec asking for
// what its broker cannot do is refused with the reason before anything starts, never measured
// as something else. What holds for every version is also refused by the API server (the CEL
// rules of api/v1alpha1); what depends on the version (known only once the local package or the
// image is chosen) is checked here, by `msgbench run` and by the operator.
package caps

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// Check returns why the broker of type t at version (e.g. "3.10.8"; "" or unparsable: unknown,
// nothing version-dependent is refused) cannot run spec, or nil.
func Check(t v1alpha1.BrokerType, version string, spec *v1alpha1.MessagingBenchmarkSpec) error {
	mqtt5 := spec.Protocol != v1alpha1.ProtocolKafka && spec.MQTT.Version == v1alpha1.MQTT5
	switch t {
	case v1alpha1.BrokerRabbitMQ:
		if spec.QoS == 2 { // also a CEL rule; kept here for specs built in Go
			return fmt.Errorf("spec.qos: RabbitMQ's MQTT plugin has no QoS 2 (it grants QoS 1 to a QoS 2 subscription and treats QoS 2 publishes as QoS 1); use qos 0 or 1, or another broker")
		}
		if mqtt5 && below(version, 3, 13) {
			return fmt.Errorf("spec.mqtt.version: RabbitMQ %s speaks MQTT 3.1.1 only (its MQTT plugin gained MQTT 5 in 3.13); use mqtt.version \"3.1.1\", or a RabbitMQ 3.13+ image (spec.broker.image)", version)
		}
	case v1alpha1.BrokerArtemis:
		if mqtt5 && below(version, 2, 21) {
			return fmt.Errorf("spec.mqtt.version: ActiveMQ Artemis %s speaks MQTT 3.1.1 only (MQTT 5 came in 2.21.0); use mqtt.version \"3.1.1\", or a newer image (spec.broker.image)", version)
		}
	case v1alpha1.BrokerMosquitto:
		if mqtt5 && below(version, 1, 6) {
			return fmt.Errorf("spec.mqtt.version: Mosquitto %s speaks MQTT 3.1.1 only (MQTT 5 came in 1.6); use mqtt.version \"3.1.1\", or a newer image (spec.broker.image)", version)
		}
	}
	return nil
}

// below reports whether version is known and older than major.minor.
func below(version string, major, minor int) bool {
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(strings.TrimFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil {
		return false
	}
	return ma < major || (ma == major && mi < minor)
}
