package mqttsn_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/loadgen/drivers/driverstest"
)

// TestConformance runs the driver contract through the MQTT-SN gateway in front of Mosquitto,
// with normal topic ids. QoS -1 is left out: it has no connection, so nothing to close or drain.
// The retry interval outlasts the suite's stalls, so a stalled session waits instead of failing.
func TestConformance(t *testing.T) {
	b := startBroker(t)
	conformanceSpec := func(qos int32) *v1alpha1.MessagingBenchmarkSpec {
		s := spec(qos, v1alpha1.TopicIDNormal, "")
		s.MQTTSN.RetryInterval = metav1.Duration{Duration: 2 * time.Second}
		s.Workload.Publishers, s.Workload.Subscribers = 64, 64 // the gateway admits the suite's clients
		return s
	}
	g := startGateway(t, b.Addr, "127.0.0.1:0", conformanceSpec(1))
	driverstest.Run(t, driverstest.Harness{
		Protocol: string(v1alpha1.ProtocolMQTTSN),
		Spec:     conformanceSpec,
		Address:  g.Addr().String(),
		Network:  "udp",
		QoS:      []int32{0, 1, 2},
	})
}
