package mqtt_test

import (
	"context"
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/loadgen/drivers/driverstest"
	_ "github.com/msgbench/msgbench/loadgen/drivers/mqtt"
)

// TestConformance runs the driver contract against Mosquitto, for MQTT 3.1.1 and 5.
func TestConformance(t *testing.T) {
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{MaxInflight: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	for _, version := range []v1alpha1.MQTTVersion{v1alpha1.MQTT311, v1alpha1.MQTT5} {
		t.Run(string(version), func(t *testing.T) {
			driverstest.Run(t, driverstest.Harness{
				Protocol: string(v1alpha1.ProtocolMQTT),
				Spec: func(int32) *v1alpha1.MessagingBenchmarkSpec {
					return &v1alpha1.MessagingBenchmarkSpec{
						Protocol: v1alpha1.ProtocolMQTT,
						MQTT:     v1alpha1.MQTTSpec{Version: version},
						Workload: v1alpha1.WorkloadSpec{TopicPrefix: "conformance/"},
					}
				},
				Address: b.Addr,
				Network: "tcp",
				QoS:     []int32{0, 1, 2},
			})
		})
	}
}
