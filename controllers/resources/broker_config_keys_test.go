package resources_test

import (
	"strings"
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/controllers/resources"
)

// TestCheckBrokerConfigKeys: the operator's refusal before it creates anything uses the brokers'
// own tables, by the image's version, and names the key.
func TestCheckBrokerConfigKeys(t *testing.T) {
	for _, tc := range []struct {
		broker  v1alpha1.BrokerType
		key     string
		version string
		want    string // "" accepts
	}{
		{v1alpha1.BrokerMosquitto, "foo_bar", "2.0.11", "spec.broker.config.foo_bar: not a mosquitto.conf key"},
		{v1alpha1.BrokerMosquitto, "allow_anonymous", "2.0.11", "spec.broker.config.allow_anonymous: managed by msgbench"},
		{v1alpha1.BrokerMosquitto, "max_queued_messages", "2.0.11", ""},
		{v1alpha1.BrokerRabbitMQ, "foo.bar", "4.1.4", "spec.broker.config.foo.bar: not a rabbitmq.conf key of RabbitMQ 4.1"},
		{v1alpha1.BrokerRabbitMQ, "mqtt.max_session_expiry_interval_seconds", "4.1.4", ""},
		{v1alpha1.BrokerRabbitMQ, "mqtt.max_session_expiry_interval_seconds", "3.10.8", "RabbitMQ 4.1 knows this key but RabbitMQ 3.10"},
		{v1alpha1.BrokerRabbitMQ, "mqtt.exchange", "", ""},
	} {
		mb := &v1alpha1.MessagingBenchmark{Spec: v1alpha1.MessagingBenchmarkSpec{Protocol: v1alpha1.ProtocolMQTT,
			Broker: v1alpha1.BrokerSpec{Type: tc.broker, Config: map[string]string{tc.key: "1"}}}}
		err := resources.CheckBrokerConfigKeys(mb, tc.version)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s %s on %q: refused: %v", tc.broker, tc.key, tc.version, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s %s on %q: got %v, want %q", tc.broker, tc.key, tc.version, err, tc.want)
		}
	}
}
