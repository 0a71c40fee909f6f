package resources_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/kafka"
	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/internal/testenv"
	"github.com/msgbench/msgbench/plan/plantest"
)

func kafkaSample(t *testing.T, name string) *v1alpha1.MessagingBenchmark {
	t.Helper()
	mb, err := manifest.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "samples", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	mb.Namespace, mb.UID = "bench", types.UID("5f0c1d2e-0000-4000-8000-000000000001")
	return mb
}

// TestKafkaGolden pins the Strimzi objects of the Kafka samples, and of one with TLS 1.2,
// replicas, resources and broker.config (refresh with go test ./controllers/resources -update).
func TestKafkaGolden(t *testing.T) {
	tlsVariant := func(mb *v1alpha1.MessagingBenchmark) {
		mb.Spec.TLS = &v1alpha1.TLSSpec{Enabled: true, Version: v1alpha1.TLS12}
		mb.Spec.Kafka.Replicas, mb.Spec.Kafka.Partitions = 3, 6
		mb.Spec.Broker.Config = map[string]string{"num.network.threads": "4"}
		mb.Spec.Broker.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("2Gi")}
	}
	cases := []struct {
		golden, sample string
		tweak          func(*v1alpha1.MessagingBenchmark)
	}{
		{"kafka-acks1", "kafka-acks1", nil},
		{"kafka-idempotent", "kafka-idempotent", nil},
		{"kafka-tls12-3replicas", "kafka-acks1", tlsVariant},
	}
	for _, c := range cases {
		t.Run(c.golden, func(t *testing.T) {
			mb := kafkaSample(t, c.sample)
			if c.tweak != nil {
				c.tweak(mb)
			}
			objs, err := resources.Render(mb, resources.DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			for _, o := range objs {
				if !strings.HasPrefix(o.GetObjectKind().GroupVersionKind().Group, "kafka.strimzi.io") {
					continue
				}
				data, err := yaml.Marshal(o)
				if err != nil {
					t.Fatal(err)
				}
				b.WriteString("---\n")
				b.Write(data)
			}
			path := filepath.Join("testdata", c.golden+".golden.yaml")
			if *update {
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./controllers/resources -update)", err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Errorf("Strimzi objects differ from %s; run go test ./controllers/resources -update and review the diff", path)
			}
		})
	}
}

// TestKafkaObjects checks what every Kafka benchmark's objects must say, whatever the golden
// files hold.
func TestKafkaObjects(t *testing.T) {
	for _, tls := range []bool{false, true} {
		mb := kafkaSample(t, "kafka-acks1")
		if tls {
			mb.Spec.TLS = &v1alpha1.TLSSpec{Enabled: true, Version: v1alpha1.TLS13}
		}
		objs, err := resources.KafkaObjects(mb, plantest.Kubernetes(t, mb))
		if err != nil {
			t.Fatal(err)
		}
		if len(objs) != 2+int(mb.Spec.Workload.Topics) {
			t.Fatalf("%d objects, want Kafka, KafkaNodePool and %d KafkaTopics", len(objs), mb.Spec.Workload.Topics)
		}
		k := objs[0].(*unstructured.Unstructured)
		listeners, _, _ := unstructured.NestedSlice(k.Object, "spec", "kafka", "listeners")
		if len(listeners) != map[bool]int{false: 1, true: 2}[tls] {
			t.Errorf("tls %v: %d listeners", tls, len(listeners))
		}
		if v, _, _ := unstructured.NestedString(k.Object, "spec", "kafka", "version"); v != kafka.Version {
			t.Errorf("Kafka version %q, want %s (what local runs use)", v, kafka.Version)
		}
		wantAddr := "kafka-acks1-kafka-bootstrap.bench.svc:9092"
		if tls {
			wantAddr = "kafka-acks1-kafka-bootstrap.bench.svc:9093"
			cert, _, _ := unstructured.NestedString(listeners[1].(map[string]any), "configuration", "brokerCertChainAndKey", "secretName")
			if cert != resources.TLSSecretName(mb) {
				t.Errorf("TLS listener serves Secret %q, want %q", cert, resources.TLSSecretName(mb))
			}
			hosts := strings.Join(resources.CertificateHosts(mb), ",")
			for _, h := range []string{"kafka-acks1-kafka-bootstrap.bench.svc", "*.kafka-acks1-kafka-brokers.bench.svc"} {
				if !strings.Contains(hosts, h) {
					t.Errorf("certificate hosts lack %s: %s", h, hosts)
				}
			}
		}
		if got := resources.WorkerClientAddress(mb, plantest.Kubernetes(t, mb)); got != wantAddr {
			t.Errorf("tls %v: workers connect to %s, want Strimzi's bootstrap %s", tls, got, wantAddr)
		}
		for _, o := range objs[1:] {
			if o.GetLabels()[resources.LabelStrimziCluster] != k.GetName() {
				t.Errorf("%s %s: label strimzi.io/cluster %q, want %q", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), o.GetLabels()[resources.LabelStrimziCluster], k.GetName())
			}
		}
		topic := objs[2].(*unstructured.Unstructured)
		if n, _, _ := unstructured.NestedString(topic.Object, "spec", "topicName"); n != "msgbench-0" {
			t.Errorf("topic 0 is named %q, want the workers' topic msgbench-0", n)
		}
	}
}

func TestKafkaBrokerConfig(t *testing.T) {
	cases := []struct {
		config map[string]string
		bad    string // a word the refusal names, "" when accepted
	}{
		{map[string]string{"num.io.threads": "8", "log.retention.ms": "60000"}, ""},
		{map[string]string{"listeners": "PLAINTEXT://:1"}, "listeners"},
		{map[string]string{"ssl.keystore.location": "/x"}, "spec.tls"},
		{map[string]string{"advertised.listeners": "x"}, "advertised.listeners"},
		{map[string]string{"process.roles": "broker"}, "KRaft"},
	}
	for _, c := range cases {
		mb := kafkaSample(t, "kafka-acks1")
		mb.Spec.Broker.Config = c.config
		_, err := resources.KafkaObjects(mb, plantest.Kubernetes(t, mb))
		switch {
		case c.bad == "" && err != nil:
			t.Errorf("%v refused: %v", c.config, err)
		case c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad) || !strings.Contains(err.Error(), "spec.broker.config")):
			t.Errorf("%v: error %v, want one naming spec.broker.config and %q", c.config, err, c.bad)
		}
	}
}

// TestKafkaNamesFit: every name Strimzi derives from the cluster (pods <cluster>-<pool>-<id>)
// stays a DNS label, and two long names never share a cluster.
func TestKafkaNamesFit(t *testing.T) {
	a, b := &v1alpha1.MessagingBenchmark{}, &v1alpha1.MessagingBenchmark{}
	a.Name, b.Name = "sinetstream-5g-sa-kafka-102400b-8threads", "sinetstream-5g-sa-kafka-102400b-4threads"
	na, nb := resources.KafkaClusterName(a), resources.KafkaClusterName(b)
	if na == nb {
		t.Fatalf("two benchmarks share Kafka %s", na)
	}
	for _, n := range []string{na, nb} {
		if pod := n + "-" + n + "-14"; len(pod) > 63 || strings.Contains(n, ".") {
			t.Errorf("broker pod %s has %d characters", pod, len(pod))
		}
	}
	short := &v1alpha1.MessagingBenchmark{}
	short.Name = "kafka-acks1"
	if got := resources.KafkaClusterName(short); got != "kafka-acks1" {
		t.Errorf("short name became %q", got)
	}
}

// TestKafkaCredentialsOnKubernetes: the Strimzi Kafka has no SASL listener for the devices'
// users, so Render refuses Kafka credentials with broker.type kafka, naming the field and what
// to do; with an external Kafka the worker pods get the credentials (a Secret's, mounted).
func TestKafkaCredentialsOnKubernetes(t *testing.T) {
	mb := kafkaSample(t, "kafka-acks1")
	mb.Spec.Identity = &v1alpha1.IdentitySpec{Username: "dev-{index}", Password: "pw-{index}", SASLMechanism: v1alpha1.SASLScramSHA512}
	_, err := resources.Render(mb, resources.DefaultConfig())
	if err == nil || !strings.Contains(err.Error(), "spec.identity.username: on Kubernetes, the Strimzi Kafka msgbench runs has no SASL listener") || !strings.Contains(err.Error(), "broker.type external") {
		t.Errorf("broker.type kafka with credentials: %v", err)
	}
	mb.Spec.Broker = v1alpha1.BrokerSpec{Type: v1alpha1.BrokerExternal, External: &v1alpha1.ExternalBroker{Address: "kafka.example:9093"}}
	mb.Spec.Identity = &v1alpha1.IdentitySpec{ClientID: "meter-{index}", Credentials: &v1alpha1.CredentialsSource{SecretRef: &v1alpha1.LocalSecretReference{Name: "meters"}}, SASLMechanism: v1alpha1.SASLScramSHA256}
	objs, err := resources.Render(mb, resources.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	data, err := yaml.Marshal(objs)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "secretName: meters") || !strings.Contains(string(data), resources.CredentialsDir+"/meters") {
		t.Errorf("the workers do not mount the credentials Secret meters:\n%s", data)
	}
}
