package kafka_test

import (
	"syscall"
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/loadgen/drivers/driverstest"
)

// TestConformance runs the driver contract against the package's Kafka (acks=0, 1 and all with
// idempotence; about 7 s on the shared JVM). A Kafka client learns the broker's advertised address from
// metadata, so no proxy can stand in front of it: the stall is SIGSTOP of the broker's JVM (by
// PID), resumed with SIGCONT however the case ends.
func TestConformance(t *testing.T) {
	driverstest.Run(t, driverstest.Harness{
		Protocol: string(v1alpha1.ProtocolKafka),
		Spec: func(int32) *v1alpha1.MessagingBenchmarkSpec {
			return kafkaSpec(uniquePrefix(t))
		},
		Address: broker.Addr,
		Network: "tcp",
		Stall: func(t *testing.T) func() {
			if err := syscall.Kill(broker.PID(), syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			resume := func() { _ = syscall.Kill(broker.PID(), syscall.SIGCONT) }
			t.Cleanup(resume)
			return resume
		},
		QoS: []int32{0, 1, 2},
	})
}
