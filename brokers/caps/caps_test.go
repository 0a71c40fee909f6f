package caps

import (
	"strings"
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/plan"
)

func TestCheck(t *testing.T) {
	spec := func(qos int32, v v1alpha1.MQTTVersion) *v1alpha1.MessagingBenchmarkSpec {
		return &v1alpha1.MessagingBenchmarkSpec{Protocol: v1alpha1.ProtocolMQTT, QoS: qos, MQTT: v1alpha1.MQTTSpec{Version: v}}
	}
	for _, c := range []struct {
		t       v1alpha1.BrokerType
		version string
		spec    *v1alpha1.MessagingBenchmarkSpec
		want    string // "" = accepted; else a part of the error
	}{
		{v1alpha1.BrokerRabbitMQ, "3.10.8", spec(1, v1alpha1.MQTT311), ""},
		{v1alpha1.BrokerRabbitMQ, "3.10.8", spec(2, v1alpha1.MQTT311), "spec.qos: RabbitMQ's MQTT plugin has no QoS 2"},
		{v1alpha1.BrokerRabbitMQ, "3.10.8", spec(1, v1alpha1.MQTT5), "spec.mqtt.version: RabbitMQ 3.10.8 speaks MQTT 3.1.1 only"},
		{v1alpha1.BrokerRabbitMQ, "3.13.0", spec(1, v1alpha1.MQTT5), ""},
		{v1alpha1.BrokerRabbitMQ, "4.1.4", spec(1, v1alpha1.MQTT5), ""},
		{v1alpha1.BrokerRabbitMQ, "", spec(1, v1alpha1.MQTT5), ""},       // unknown version: not refused
		{v1alpha1.BrokerRabbitMQ, "latest", spec(1, v1alpha1.MQTT5), ""}, // unparsable: not refused
		{v1alpha1.BrokerArtemis, "2.20.0", spec(2, v1alpha1.MQTT5), "Artemis 2.20.0 speaks MQTT 3.1.1 only"},
		{v1alpha1.BrokerArtemis, "2.40.0", spec(2, v1alpha1.MQTT5), ""},
		{v1alpha1.BrokerMosquitto, "1.5.7", spec(1, v1alpha1.MQTT5), "Mosquitto 1.5.7"},
		{v1alpha1.BrokerMosquitto, "2.0.11", spec(2, v1alpha1.MQTT5), ""},
		{v1alpha1.BrokerRabbitMQ, "3.10.8", &v1alpha1.MessagingBenchmarkSpec{Protocol: v1alpha1.ProtocolMQTTSN, QoS: 2}, "spec.qos"},
	} {
		c.spec.Broker.Type = c.t
		p, err := plan.Compile(c.spec, plan.Admitted)
		if err != nil {
			t.Fatalf("%+v: %v", c.spec, err)
		}
		err = Check(c.t, c.version, p)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %s qos %d %s: refused: %v", c.t, c.version, c.spec.QoS, c.spec.MQTT.Version, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s %s qos %d %s: error %v, want one containing %q", c.t, c.version, c.spec.QoS, c.spec.MQTT.Version, err, c.want)
		}
	}
}
