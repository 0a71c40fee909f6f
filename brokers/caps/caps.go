// Package caps says what each broker msgbench runs can do, by version, so that a spec asking for
// what its broker cannot do is refused with the reason before anything starts, never measured
// as something else. What holds for every version is also refused by the API server (the CEL
// rules of api/v1alpha1); what depends on the version (known only once the local package or the
// image is chosen) is checked here, by `msgbench run` and by the operator.
package caps

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/plan"
)

// MaxQoS is the highest spec.qos a broker honours, whatever its version, for the brokers that
// stop below 2, with the refusal of a higher one. The CRD states each as a CEL rule
// (self.broker.type != '<broker>' || self.qos <= <max>, written for RabbitMQ as self.qos != 2)
// with the same message; internal/manifest's TestCELRulesAgreeWithTheGoTables holds the two
// equal case by case.
var MaxQoS = map[v1alpha1.BrokerType]Limit{
	v1alpha1.BrokerRabbitMQ: {Max: 1, Refusal: "spec.qos: RabbitMQ's MQTT plugin has no QoS 2 (it grants QoS 1 to a QoS 2 subscription and treats QoS 2 publishes as QoS 1), so a QoS 2 run would measure QoS 1; use qos 0 or 1, or another broker"},
}

// Limit is a broker's highest QoS and the refusal of a higher one.
type Limit struct {
	Max     int32
	Refusal string
}

// MQTT5Since is the first version of each broker that speaks MQTT 5, for the brokers whose older
// versions do not, with the refusal (a format of the version) of MQTT 5 on an older one. It
// depends on the version, known only once the local package or the image is chosen, so no CEL
// rule states it: TestCELRulesAgreeWithTheGoTables holds that the CRD refuses mqtt.version 5 on
// no broker.
var MQTT5Since = map[v1alpha1.BrokerType]Since{
	v1alpha1.BrokerRabbitMQ:  {3, 13, "spec.mqtt.version: RabbitMQ %s speaks MQTT 3.1.1 only (its MQTT plugin gained MQTT 5 in 3.13); use mqtt.version \"3.1.1\", or a RabbitMQ 3.13+ image (spec.broker.image)"},
	v1alpha1.BrokerArtemis:   {2, 21, "spec.mqtt.version: ActiveMQ Artemis %s speaks MQTT 3.1.1 only (MQTT 5 came in 2.21.0); use mqtt.version \"3.1.1\", or a newer image (spec.broker.image)"},
	v1alpha1.BrokerMosquitto: {1, 6, "spec.mqtt.version: Mosquitto %s speaks MQTT 3.1.1 only (MQTT 5 came in 1.6); use mqtt.version \"3.1.1\", or a newer image (spec.broker.image)"},
}

// Since is the version (major.minor) a capability came in, and the refusal (a format of the
// version) for an older one.
type Since struct {
	Major, Minor int
	Refusal      string
}

// Check returns why the broker of type t at version (e.g. "3.10.8"; "" or unparsable: unknown,
// nothing version-dependent is refused) cannot serve the plan's groups, or nil: a QoS above its
// MaxQoS (also a CEL rule; checked here for specs built in Go), or MQTT 5 — spoken by a group's
// clients or by its gateway on their behalf — before its MQTT5Since.
func Check(t v1alpha1.BrokerType, version string, p *plan.Plan) error {
	for _, g := range p.Groups {
		if l, ok := MaxQoS[t]; ok && g.QoS > l.Max {
			return plan.InGroup(&g, errors.New(l.Refusal))
		}
		mqtt5 := (g.MQTT != nil && g.MQTT.Version == v1alpha1.MQTT5) ||
			(g.GatewayOptions != nil && g.GatewayOptions.MQTTVersion == v1alpha1.MQTT5)
		if s, ok := MQTT5Since[t]; ok && mqtt5 && below(version, s.Major, s.Minor) {
			return plan.InGroup(&g, fmt.Errorf(s.Refusal, version))
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
