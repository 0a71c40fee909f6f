// Package serverside holds controllers/resources' tests that need a real kube-apiserver
// (envtest): `make test` runs them with KUBEBUILDER_ASSETS set; `make test-unit`, the inner
// loop, leaves this package out (UNIT_EXCLUDE in the Makefile) rather than skipping them.
package serverside_test

import (
	"context"
	"maps"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/internal/testenv"
	"github.com/msgbench/msgbench/plan"
)

// brokerSamples are the samples of each broker type but Mosquitto and Kafka (which the other
// samples cover); controllers/resources' TestRenderGolden pins their renders, and every object
// they render goes through a real API server in a restricted namespace here.
var brokerSamples = []string{"broker-rabbitmq", "broker-artemis", "broker-emqx-quic", "broker-nanomq", "broker-hivemq-ce", "broker-vernemq"}

// brokerCase is one benchmark a broker must serve.
type brokerCase struct {
	name string
	mb   *v1alpha1.MessagingBenchmark
}

// brokerBench parses a sample-like MQTT benchmark of broker type bt with TLS (version tls, "" for
// none) through manifest.Parse, which applies the CRD's defaults and rules (as
// controllers/resources' brokerBench does, with protocol mqtt and inflight 20).
func brokerBench(t *testing.T, bt v1alpha1.BrokerType, tls string, config map[string]string) *v1alpha1.MessagingBenchmark {
	t.Helper()
	if _, ok := config["accept_eula"]; bt == v1alpha1.BrokerVerneMQ && !ok {
		config = maps.Clone(config) // the API server requires it for the official image
		if config == nil {
			config = map[string]string{}
		}
		config["accept_eula"] = "yes"
	}
	var b strings.Builder
	b.WriteString("apiVersion: msgbench.io/v1alpha1\nkind: MessagingBenchmark\nmetadata:\n  name: b\nspec:\n")
	b.WriteString("  protocol: mqtt\n  qos: 1\n  broker:\n    type: " + string(bt) + "\n")
	if len(config) > 0 {
		b.WriteString("    config:\n")
		for k, v := range config {
			b.WriteString("      " + k + ": " + strconv.Quote(v) + "\n")
		}
	}
	if tls != "" {
		b.WriteString("  tls:\n    enabled: true\n    version: \"" + tls + "\"\n")
	}
	b.WriteString("  mqtt:\n    inflight: 20\n")
	b.WriteString("  workload:\n    publishers: 2\n    subscribers: 2\n    topics: 2\n    payloadBytes: 200000\n    rate: 100\n    duration: 10s\n")
	mb, err := manifest.Parse([]byte(b.String()))
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	mb.Namespace, mb.UID = "bench", types.UID("5f0c1d2e-0000-4000-8000-000000000001")
	return mb
}

// TestBrokerObjectsServerSide sends every broker object to a real kube-apiserver (server-side
// dry run), and the broker pods, as the Deployment controller would create them, into a
// namespace that enforces the restricted Pod Security Standard.
func TestBrokerObjectsServerSide(t *testing.T) {
	env, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench", Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest"}}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	var cases []brokerCase
	for _, s := range brokerSamples {
		mb, err := manifest.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "samples", s+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		mb.Namespace, mb.UID = "bench", types.UID("5f0c1d2e-0000-4000-8000-000000000001")
		cases = append(cases, brokerCase{s, mb})
	}
	eula := map[string]string{"accept_eula": "yes"}
	cases = append(cases,
		brokerCase{"rabbitmq-tls", brokerBench(t, v1alpha1.BrokerRabbitMQ, "1.2", nil)},
		brokerCase{"artemis-tls", brokerBench(t, v1alpha1.BrokerArtemis, "1.3", nil)},
		brokerCase{"emqx-tls", brokerBench(t, v1alpha1.BrokerEMQX, "1.3", nil)},
		brokerCase{"nanomq-tls", brokerBench(t, v1alpha1.BrokerNanoMQ, "1.2", nil)},
		brokerCase{"hivemq-plain", brokerBench(t, v1alpha1.BrokerHiveMQCE, "", nil)},
		brokerCase{"vernemq-tls", brokerBench(t, v1alpha1.BrokerVerneMQ, "1.2", eula)},
	)
	for _, c := range cases {
		p, err := plan.Compile(&c.mb.Spec, plan.Kubernetes)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		objs, err := resources.BrokerObjects(c.mb, p, resources.DefaultConfig())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, o := range objs {
			if err := env.Client.Create(ctx, o, client.DryRunAll); err != nil {
				t.Errorf("%s: %s %s refused: %v", c.name, o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
			}
			if d, ok := o.(*appsv1.Deployment); ok {
				pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "broker-", Namespace: "bench", Labels: d.Spec.Template.Labels},
					Spec: d.Spec.Template.Spec}
				if err := env.Client.Create(ctx, pod, client.DryRunAll); err != nil {
					t.Errorf("%s: broker pod refused in a restricted namespace: %v", c.name, err)
				}
			}
		}
	}
	// A pod that is not restricted is refused there: the check above means something.
	bad := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "bad-", Namespace: "bench"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
	if err := env.Client.Create(ctx, bad, client.DryRunAll); err == nil || !strings.Contains(err.Error(), "PodSecurity") {
		t.Errorf("an unrestricted pod was not refused by PodSecurity: %v", err)
	}
}
