package kafka_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

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
			// SIGSTOP stops a JVM's threads one by one as each is scheduled; until the whole
			// process shows stopped, a network thread can still answer (CI once saw a publish
			// acknowledged right after the signal).
			waitStopped(t, broker.PID())
			return resume
		},
		QoS: []int32{0, 1, 2},
	})
}

// waitStopped waits until every thread of process pid is stopped (state T in /proc), then a
// little longer for replies already on their way.
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
		stopped := len(tasks) > 0
		for _, f := range tasks {
			data, err := os.ReadFile(f)
			if i := bytes.LastIndexByte(data, ')'); err != nil || i < 0 || i+2 >= len(data) || (data[i+2] != 'T' && data[i+2] != 't') {
				stopped = false
				break
			}
		}
		if stopped {
			time.Sleep(50 * time.Millisecond)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the broker (pid %d) did not stop within 5 s of SIGSTOP", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
