package controllers_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/kafka"
	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/internal/testenv"
	"github.com/msgbench/msgbench/plan/plantest"
	"github.com/msgbench/msgbench/suite"
)

// The suite's real Kafka, started by the first test that needs it (a JVM takes tens of seconds
// on a shared machine; the other tests do not wait for it).
var (
	kafkaOnce sync.Once
	kafkaProc *kafka.Process
	kafkaErr  error
)

func localKafka(t testing.TB) *kafka.Process {
	t.Helper()
	kafkaOnce.Do(func() {
		if _, err := kafka.Libs(); err != nil {
			out, err := exec.Command(filepath.Join(testenv.RepoRoot(), "hack", "kafka.sh")).Output()
			if err != nil {
				kafkaErr = fmt.Errorf("hack/kafka.sh: %w", err)
				return
			}
			_ = os.Setenv(kafka.LibsEnv, strings.TrimSpace(string(out)))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		kafkaProc, kafkaErr = kafka.Start(ctx, kafka.Options{})
	})
	if kafkaErr != nil {
		t.Fatal(kafkaErr)
	}
	return kafkaProc
}

// stopLocalKafka stops the suite's Kafka if a test started it (called by TestMain).
func stopLocalKafka() {
	if kafkaProc != nil {
		_ = kafkaProc.Stop()
	}
}

// workerAddress is where the fake kubelet's in-process workers connect: the suite's Mosquitto,
// or for Kafka benchmarks the local Kafka standing in for Strimzi's bootstrap Service.
func workerAddress(t testing.TB, protocol v1alpha1.Protocol) string {
	if protocol == v1alpha1.ProtocolKafka {
		return localKafka(t).Addr
	}
	return broker.Addr
}

// TestStrimziObjectsOfEverySample applies the Kafka, KafkaNodePool and KafkaTopics of every
// Kafka sample, the SINETStream study's included, to the API server (server-side apply, dry
// run): the project's minimal CRDs accept them, and so do Strimzi 1.2.0's own with
// MSGBENCH_THIRD_PARTY_CRDS=/path/to/strimzi/crds.
func TestStrimziObjectsOfEverySample(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	t.Logf("Strimzi CRDs from %s", env.ThirdPartyCRDs)
	seen := 0
	err := filepath.WalkDir(filepath.Join(testenv.RepoRoot(), "config", "samples"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		mbs, err := samplesIn(path)
		if err != nil {
			return err
		}
		for _, mb := range mbs {
			if mb.Spec.Broker.Type != v1alpha1.BrokerKafka {
				continue
			}
			seen++
			for _, tls := range []bool{false, true} {
				if tls {
					mb.Spec.TLS = &v1alpha1.TLSSpec{Enabled: true, Version: v1alpha1.TLS13}
				}
				mb.Namespace, mb.UID = ns, "7c6b3c1e-1111-4111-8111-000000000002"
				objs, err := resources.KafkaObjects(mb, plantest.Kubernetes(t, mb))
				if err != nil {
					t.Errorf("%s %s: %v", path, mb.Name, err)
					break
				}
				for _, o := range objs {
					u := o.(*unstructured.Unstructured).DeepCopy()
					u.SetOwnerReferences(nil) // the owner does not exist in a dry run
					if err := env.Client.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("test"), client.DryRunAll); err != nil {
						t.Errorf("%s %s (tls %v): %s %s refused: %v", filepath.Base(path), mb.Name, tls, u.GetKind(), u.GetName(), err)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 26 { // kafka-acks1, kafka-idempotent and the study's 24 Kafka cells
		t.Errorf("found %d Kafka samples, want at least 26", seen)
	}
}

// samplesIn reads the benchmarks of a sample file: the one MessagingBenchmark, or for a study's
// MessagingBenchmarkSuite the first run of every point of its matrix.
func samplesIn(path string) ([]*v1alpha1.MessagingBenchmark, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if manifest.Kind(data) != "MessagingBenchmarkSuite" {
		mb, err := manifest.ReadFile(path)
		return []*v1alpha1.MessagingBenchmark{mb}, err
	}
	d, err := manifest.ReadSuiteDoc(path)
	if err != nil {
		return nil, err
	}
	points, err := suite.Expand(d.Suite, d.Template)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var mbs []*v1alpha1.MessagingBenchmark
	for _, p := range points {
		mb, err := suite.Benchmark(d.Suite, d.Template, p, 1)
		if err != nil {
			return nil, err
		}
		mbs = append(mbs, mb)
	}
	return mbs, nil
}

// strimzi plays Strimzi's part: it reports the benchmark's Kafka and KafkaTopics ready (for
// their generation, with the listeners' bootstrap addresses), after reporting the Kafka NotReady
// for as long as hold is set.
type strimzi struct {
	hold      atomic.Bool
	bootstrap string // when set, reported instead of the real bootstrap address
	// topicError, when set, is the NotReady message of every KafkaTopic.
	topicError string
}

const strimziNotReady = "Pod benchmark-kafka-0 is not ready: 0/1 nodes are available: insufficient memory"

func startStrimzi(t *testing.T, ns string, s *strimzi) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			s.tick(ctx, ns)
			time.Sleep(100 * time.Millisecond)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

func list(ctx context.Context, ns string, gvk schema.GroupVersionKind) []unstructured.Unstructured {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := env.Client.List(ctx, l, client.InNamespace(ns)); err != nil {
		return nil
	}
	return l.Items
}

func (s *strimzi) tick(ctx context.Context, ns string) {
	for _, k := range list(ctx, ns, resources.KafkaGVK) {
		status := map[string]any{"observedGeneration": k.GetGeneration()}
		if s.hold.Load() {
			status["conditions"] = []any{map[string]any{"type": "NotReady", "status": "True", "reason": "Creating", "message": strimziNotReady}}
		} else {
			boot := k.GetName() + "-kafka-bootstrap." + ns + ".svc"
			if s.bootstrap != "" {
				boot = s.bootstrap
			}
			status["conditions"] = []any{map[string]any{"type": "Ready", "status": "True"}}
			status["kafkaVersion"] = kafka.Version
			status["listeners"] = []any{
				map[string]any{"name": "plain", "bootstrapServers": boot + ":9092"},
				map[string]any{"name": "tls", "bootstrapServers": boot + ":9093"},
			}
		}
		k.Object["status"] = status
		_ = env.Client.Status().Update(ctx, &k)
	}
	for _, kt := range list(ctx, ns, resources.KafkaTopicGVK) {
		cond := map[string]any{"type": "Ready", "status": "True"}
		if s.topicError != "" {
			cond = map[string]any{"type": "Ready", "status": "False", "reason": "KafkaError", "message": s.topicError}
		}
		kt.Object["status"] = map[string]any{"observedGeneration": kt.GetGeneration(), "conditions": []any{cond}}
		_ = env.Client.Status().Update(ctx, &kt)
	}
}

// TestKafkaBenchmarkEndToEnd runs a Kafka benchmark through the operator: the Strimzi objects
// are applied, Strimzi's NotReady message shows in BrokerReady while the cluster starts, the
// workers get the bootstrap address and, once Strimzi reports everything ready, run against a
// real Kafka (standing in for the Strimzi cluster); cleanup deletes the Strimzi objects.
func TestKafkaBenchmarkEndToEnd(t *testing.T) {
	t.Parallel()
	localKafka(t)
	ns := newNamespace(t)
	startOperator(t, ns)
	startKubelet(t, ns, nil)
	s := &strimzi{}
	s.hold.Store(true)
	startStrimzi(t, ns, s)
	createBenchmark(t, ns, "kafka-e2e", fmt.Sprintf(`
protocol: kafka
qos: 2
broker: {type: kafka}
kafka: {partitions: 2, lingerMs: 1}
workload: {publishers: 2, subscribers: 2, topics: 2, topicPrefix: %s-, payloadBytes: 1024, rate: 50, duration: 2s, warmup: 500ms}
`, ns))

	// While Strimzi says NotReady, its words are the benchmark's.
	deadline := time.Now().Add(30 * time.Second)
	for {
		mb := get(t, ns, "kafka-e2e")
		c := condition(mb, v1alpha1.ConditionBrokerReady)
		if c.Status == "False" && strings.Contains(c.Message, strimziNotReady) && strings.Contains(mb.Status.Message, strimziNotReady) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("BrokerReady %+v, message %q: Strimzi's NotReady message must show", c, mb.Status.Message)
		}
		time.Sleep(100 * time.Millisecond)
	}
	mb := get(t, ns, "kafka-e2e")
	topic := &unstructured.Unstructured{}
	topic.SetGroupVersionKind(resources.KafkaTopicGVK)
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: resources.KafkaTopicName(mb, 1)}, topic); err != nil {
		t.Fatal(err)
	}
	if p, _, _ := unstructured.NestedInt64(topic.Object, "spec", "partitions"); p != 2 {
		t.Errorf("KafkaTopic partitions %d, want spec.kafka.partitions 2", p)
	}
	var job batchv1.Job
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: resources.NamesOf(mb).Workers}, &job); err == nil {
		t.Fatal("workers started before Strimzi reported the broker ready")
	}

	s.hold.Store(false)
	mb = waitFinished(t, ns, "kafka-e2e", 2*time.Minute)
	if mb.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("phase %s: %s", mb.Status.Phase, mb.Status.Message)
	}
	c := condition(mb, v1alpha1.ConditionBrokerReady)
	want := "kafka-e2e-kafka-bootstrap." + ns + ".svc:9092"
	if c.Status != "True" || !strings.Contains(c.Message, want) {
		t.Errorf("BrokerReady %+v, want True naming %s", c, want)
	}
	res := resultConfigMap(t, ns, mb)
	if res.Sent == 0 || *res.Lost != 0 || *res.Duplicates != 0 {
		t.Errorf("sent %d received %d lost %d duplicates %d", res.Sent, res.Received, *res.Lost, *res.Duplicates)
	}
	// Cleanup (OnCompletion) deletes every Strimzi object.
	for _, gvk := range []schema.GroupVersionKind{resources.KafkaGVK, resources.KafkaNodePoolGVK, resources.KafkaTopicGVK} {
		deadline := time.Now().Add(20 * time.Second)
		for len(list(context.Background(), ns, gvk)) > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%s objects left after cleanup", gvk.Kind)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// TestKafkaWorkerArgs: the workers' --broker is Strimzi's bootstrap Service of the listener
// the benchmark uses.
func TestKafkaWorkerArgs(t *testing.T) {
	for _, tls := range []bool{false, true} {
		mb := &v1alpha1.MessagingBenchmark{}
		mb.Name, mb.Namespace = "bench", "ns"
		mb.Spec.Protocol, mb.Spec.Broker.Type, mb.Spec.Workers.Replicas = v1alpha1.ProtocolKafka, v1alpha1.BrokerKafka, 1
		want := "bench-kafka-bootstrap.ns.svc:9092"
		if tls {
			mb.Spec.TLS = &v1alpha1.TLSSpec{Enabled: true, Version: v1alpha1.TLS13}
			want = "bench-kafka-bootstrap.ns.svc:9093"
		}
		args := strings.Join(resources.WorkersJob(mb, plantest.Kubernetes(t, mb), resources.DefaultConfig()).Spec.Template.Spec.Containers[0].Args, " ")
		if !strings.Contains(args, "--broker "+want) {
			t.Errorf("tls %v: worker args %q lack --broker %s", tls, args, want)
		}
		if tls != strings.Contains(args, "--ca ") {
			t.Errorf("tls %v: worker args %q", tls, args)
		}
	}
}

// TestKafkaWrongBootstrapFails: when Strimzi reports a bootstrap address other than the one the
// workers would use, the run fails saying both, instead of starting workers that cannot connect.
func TestKafkaWrongBootstrapFails(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	startOperator(t, ns)
	startKubelet(t, ns, nil)
	startStrimzi(t, ns, &strimzi{bootstrap: "elsewhere.example.svc"})
	createBenchmark(t, ns, "kafka-wrong", "protocol: kafka\nbroker: {type: kafka}\nworkload: {duration: 1s}")
	mb := waitFinished(t, ns, "kafka-wrong", time.Minute)
	if mb.Status.Phase != v1alpha1.PhaseFailed || !strings.Contains(mb.Status.Message, "elsewhere.example.svc:9092") ||
		!strings.Contains(mb.Status.Message, "kafka-wrong-kafka-bootstrap."+ns+".svc:9092") {
		t.Errorf("phase %s, message %q", mb.Status.Phase, mb.Status.Message)
	}
}

// TestKafkaNeverReadyFailsWithStrimzisWords: a Kafka or KafkaTopic that Strimzi never reports
// ready ends the run at spec.timeout, and the failure says what Strimzi said.
func TestKafkaNeverReadyFailsWithStrimzisWords(t *testing.T) {
	t.Parallel()
	const topicError = "Replication factor: 3 larger than available brokers: 1."
	cases := []struct {
		name string
		s    *strimzi
		want string
	}{
		{"kafka", &strimzi{}, strimziNotReady},
		{"topic", &strimzi{topicError: topicError}, topicError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			startOperator(t, ns)
			startKubelet(t, ns, nil)
			c.s.hold.Store(c.s.topicError == "")
			startStrimzi(t, ns, c.s)
			createBenchmark(t, ns, "kafka-stuck", "protocol: kafka\nbroker: {type: kafka}\ntimeout: 4s\nworkload: {duration: 1s, warmup: 1s}")
			mb := waitFinished(t, ns, "kafka-stuck", time.Minute)
			if mb.Status.Phase != v1alpha1.PhaseFailed || !strings.Contains(mb.Status.Message, "timed out") || !strings.Contains(mb.Status.Message, c.want) {
				t.Errorf("phase %s, message %q: want a timeout naming %q", mb.Status.Phase, mb.Status.Message, c.want)
			}
			if cond := condition(mb, v1alpha1.ConditionBrokerReady); cond.Status != "False" || !strings.Contains(cond.Message, c.want) {
				t.Errorf("BrokerReady %+v", cond)
			}
		})
	}
}
