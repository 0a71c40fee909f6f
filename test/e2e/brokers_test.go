//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// TestBrokers runs the samples of the brokers other than Mosquitto whose images hack/images.sh
// builds from Debian packages (RabbitMQ, Artemis), on the node, in the restricted namespace:
// each must end Succeeded with every message delivered, from a broker pod that really ran the
// image e2e-node.sh gave the operator, with the broker's CPU measured by its usage sidecar.
func TestBrokers(t *testing.T) {
	for _, b := range []struct {
		file      string
		container string
		image     string // e2e.env key
	}{
		{"broker-rabbitmq.yaml", "rabbitmq", "E2E_RABBITMQ_IMAGE"},
		{"broker-artemis.yaml", "artemis", "E2E_ARTEMIS_IMAGE"},
	} {
		// 500 msg/s, not the sample's 2,000: QoS 2 at 2,000 msg/s is this 2-core node's ceiling
		// for a JVM broker (Artemis sent 1,576–1,846 of 2,000 with 1 s and 5 s warm-ups, and an
		// open loop that falls behind fails the run). The test is about the image running and
		// delivering every message exactly, not the rate.
		mb := load(t, sample{file: b.file, edit: func(spec map[string]any) {
			spec["workload"].(map[string]any)["rate"] = 500
		}})
		t.Run(mb.Name, func(t *testing.T) {
			want := cfg[b.image]
			if want == "" {
				t.Skipf("%s is not set: hack/e2e-node.sh up imports the image and writes it to e2e.env", b.image)
			}
			start := time.Now()
			// A JVM or an Erlang VM starts in seconds, not milliseconds: more time than a Mosquitto.
			final, phases := runToEnd(t, mb, 6*time.Minute, nil)
			defer deleteBenchmark(t, final)
			mustSucceed(t, final)
			checkSucceeded(t, final)
			checkExactDelivery(t, final)
			checkCost(t, final)
			checkPods(t, final)
			checkBrokerImage(t, final, b.container, want)
			checkObjectStore(t, final)
			sum := final.Status.Summary
			record("%-28s Succeeded in %4.0fs  %v  sent %d received %d lost %d dup %d  %d msg/s  p50 %dµs p99 %dµs  broker cpu %d ms rss %d MiB",
				mb.Name, time.Since(start).Seconds(), phases, sum.Sent, sum.Received, sum.Lost, sum.Duplicates,
				sum.ReceivedPerSecond, ptr.Deref(sum.LatencyP50Micros, 0), ptr.Deref(sum.LatencyP99Micros, 0),
				ptr.Deref(sum.BrokerCPUMillis, 0), ptr.Deref(sum.BrokerMaxRSSBytes, 0)>>20)
		})
	}
}

// checkExactDelivery: at QoS 1 and 2 every subscriber got every message of its topic — the
// unique deliveries are exactly sent × subscribers per topic — and at QoS 2 none twice.
func checkExactDelivery(t *testing.T, mb *v1alpha1.MessagingBenchmark) {
	t.Helper()
	s, w := mb.Status.Summary, mb.Spec.Workload
	if mb.Spec.QoS < 1 || w.Topics == 0 {
		return
	}
	want := s.Sent * int64(w.Subscribers) / int64(w.Topics)
	if s.Lost != 0 || s.Received-s.Duplicates != want {
		t.Errorf("QoS %d: sent %d, received %d (%d duplicates), lost %d: want %d unique deliveries and none lost",
			mb.Spec.QoS, s.Sent, s.Received, s.Duplicates, s.Lost, want)
	}
	if mb.Spec.QoS == 2 && s.Duplicates != 0 {
		t.Errorf("QoS 2 delivered %d duplicates", s.Duplicates)
	}
}

// checkBrokerImage: exactly one broker pod, whose broker container ran the image built from
// Debian's packages (imported into the node, never pulled) and started once.
func checkBrokerImage(t *testing.T, mb *v1alpha1.MessagingBenchmark, container, image string) {
	t.Helper()
	var pods corev1.PodList
	if err := c.List(context.Background(), &pods, client.InNamespace(mb.Namespace),
		client.MatchingLabels{v1alpha1.LabelBenchmark: mb.Name, v1alpha1.LabelComponent: v1alpha1.ComponentBroker}); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 {
		t.Fatalf("broker pods: %d, want 1", len(pods.Items))
	}
	p := pods.Items[0]
	var found bool
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name != container {
			continue
		}
		found = true
		if cs.Image != image || cs.ImageID == "" || cs.State.Running == nil || cs.RestartCount != 0 {
			t.Errorf("broker pod %s container %s: image %q (id %q), state %+v, %d restarts; want %s running, never restarted",
				p.Name, container, cs.Image, cs.ImageID, cs.State, cs.RestartCount, image)
		}
	}
	if !found {
		t.Errorf("broker pod %s has no container %s (statuses %+v)", p.Name, container, p.Status.ContainerStatuses)
	}
}
