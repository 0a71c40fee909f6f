package v1alpha1_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	var err error
	env, err = testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop envtest:", err)
	}
	os.Exit(code)
}

var nsCounter atomic.Int32

// namespace creates a fresh namespace for one test.
func namespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("t%d-%d", time.Now().UnixNano()%100000, nsCounter.Add(1))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := env.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return name
}

func sampleFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	root := filepath.Join(testenv.RepoRoot(), "config", "samples")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".yaml") {
			if data, err := os.ReadFile(path); err == nil && manifest.Kind(data) == "MessagingBenchmarkSuite" {
				return nil // the studies' suites are not MessagingBenchmarks
			}
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 20 {
		t.Fatalf("found only %d samples under %s", len(files), root)
	}
	return files
}

func readObject(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return obj
}

// TestSamplesAreAcceptedWithDefaults creates every sample on the real API server, reads it back
// typed, and checks the server applied the CRD's defaults.
func TestSamplesAreAcceptedWithDefaults(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	names := map[string]string{}
	for _, path := range sampleFiles(t) {
		rel, _ := filepath.Rel(testenv.RepoRoot(), path)
		obj := readObject(t, path)
		if prev, dup := names[obj.GetName()]; dup {
			t.Errorf("%s and %s share metadata.name %q; kubectl apply -f of the folder would merge them", prev, rel, obj.GetName())
		}
		names[obj.GetName()] = rel
		obj.SetNamespace(ns)
		if field := testenv.LocalOnly(path); field != "" {
			// Refused here by design, by a Kubernetes-only rule naming the field; msgbench run
			// runs it (TestEverySampleRunsLocally).
			err := env.Client.Create(ctx, obj)
			// The rule is the network's, wherever the network is (a group's too): its message
			// names spec.network.radio, the error's path the field itself.
			if err == nil || !strings.Contains(err.Error(), field+": Forbidden: on Kubernetes, ") {
				t.Errorf("%s is local-only (%s): want the API server's \"%s: Forbidden: on Kubernetes, …\" refusal, got %v", rel, field, field, err)
			}
			if _, err := manifest.ReadFile(path); err != nil {
				t.Errorf("%s: msgbench run refuses it: %v", rel, err)
			}
			continue
		}
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Errorf("%s rejected: %v", rel, err)
			continue
		}
		var mb v1.MessagingBenchmark
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), &mb); err != nil {
			t.Errorf("%s: read back: %v", rel, err)
			continue
		}
		// Local runs must see exactly the spec the API server stores.
		local, err := manifest.ReadFile(path)
		if err != nil {
			t.Errorf("%s: local parsing: %v", rel, err)
		} else if !equality.Semantic.DeepEqual(local.Spec, mb.Spec) {
			t.Errorf("%s: local defaulting differs from the API server's:\n local  %+v\n server %+v", rel, local.Spec, mb.Spec)
		}
		s := mb.Spec
		checks := []struct {
			ok   bool
			what string
		}{
			{s.Timeout.Duration > 0, "spec.timeout defaulted"},
			{s.Cleanup != "", "spec.cleanup defaulted"},
			{s.MQTT.Version != "" && s.MQTT.Inflight > 0, "spec.mqtt defaulted"},
			{s.MQTTSN.TopicIDType != "" && s.MQTTSN.RetryInterval.Duration > 0, "spec.mqttsn defaulted"},
			{s.HTTP.Version != "", "spec.http.version defaulted"},
			{s.Kafka.Partitions >= 1 && s.Kafka.BatchBytes > 0 && s.Kafka.Compression != "", "spec.kafka defaulted"},
			{s.Broker.Type != "", "spec.broker.type defaulted"},
			{s.Gateway.Replicas >= 1, "spec.gateway.replicas defaulted"},
			{s.Workers.Replicas >= 1, "spec.workers.replicas defaulted"},
			{s.Network.Profile != "" && s.Network.Direction != "", "spec.network defaulted"},
			{s.Workload.Topics >= 1 && s.Workload.TimelineInterval.Duration >= 100*time.Millisecond, "spec.workload defaulted"},
			{s.Workload.Messages > 0 || s.Workload.Duration.Duration > 0, "spec.workload has messages or duration"},
			{s.TLS == nil || s.TLS.Version != "", "spec.tls.version defaulted"},
		}
		for _, c := range checks {
			if !c.ok {
				t.Errorf("%s: %s failed; spec read back: %+v", rel, c.what, s)
			}
		}
	}
}

// TestDefaultsOfAMinimalManifest pins the default values users rely on.
func TestDefaultsOfAMinimalManifest(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	obj := newManifest(t, ns, "minimal", "protocol: mqtt")
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	var mb v1.MessagingBenchmark
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), &mb); err != nil {
		t.Fatal(err)
	}
	s := mb.Spec
	got := fmt.Sprintf("qos=%d mqtt=%s/%t/%d/%d broker=%s workers=%d profile=%s/%s workload=%d/%d/%d/%q/%d/%d/%d/%s/%s/%s timeout=%s cleanup=%s",
		s.QoS, s.MQTT.Version, *s.MQTT.CleanSession, *s.MQTT.KeepAliveSeconds, s.MQTT.Inflight, s.Broker.Type, s.Workers.Replicas,
		s.Network.Profile, s.Network.Direction, s.Workload.Publishers, s.Workload.Subscribers, s.Workload.Topics, s.Workload.TopicPrefix,
		s.Workload.PayloadBytes, s.Workload.Rate, s.Workload.Messages, s.Workload.Duration.Duration, s.Workload.Warmup.Duration,
		s.Workload.TimelineInterval.Duration, s.Timeout.Duration, s.Cleanup)
	want := `qos=1 mqtt=3.1.1/true/60/20 broker=mosquitto workers=1 profile=none/both workload=1/1/1/"msgbench-"/256/0/0/1m0s/5s/1s timeout=15m0s cleanup=OnCompletion`
	if got != want {
		t.Errorf("defaults:\n got  %s\n want %s", got, want)
	}
}

// newManifest builds a MessagingBenchmark from a YAML spec body.
func newManifest(t *testing.T, ns, name, spec string) *unstructured.Unstructured {
	t.Helper()
	doc := "apiVersion: msgbench.io/v1alpha1\nkind: MessagingBenchmark\nmetadata:\n  name: " + name + "\n  namespace: " + ns + "\nspec:\n  " +
		strings.ReplaceAll(strings.TrimSpace(spec), "\n", "\n  ") + "\n"
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
		t.Fatalf("bad test manifest %s: %v\n%s", name, err, doc)
	}
	return obj
}

// TestInvalidManifestsAreRejectedNamingTheField sends manifests that break one rule each and
// checks the API server refuses them with a message that names the offending field.
func TestInvalidManifestsAreRejectedNamingTheField(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	cases, err := testenv.InvalidCases()
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 25 {
		t.Fatalf("only %d invalid cases", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			obj := newManifest(t, ns, tc.Name, tc.Spec)
			err := env.Client.Create(ctx, obj)
			if err == nil {
				t.Fatalf("accepted; want rejection naming %s", tc.Field)
			}
			if !apierrors.IsInvalid(err) {
				t.Fatalf("want an Invalid error, got %v", err)
			}
			if strings.Contains(err.Error(), "metadata.") {
				t.Fatalf("test manifest itself is broken: %v", err)
			}
			if !strings.Contains(itemsByName(err.Error(), obj), tc.Field) {
				t.Errorf("error does not name %s:\n%v", tc.Field, err)
			}
			if tc.KubernetesOnly && !strings.Contains(err.Error(), manifest.KubernetesOnlyPrefix) {
				t.Errorf("kubernetesOnly, but the refusal is not a Kubernetes-only rule's:\n%v", err)
			}
			if testing.Verbose() {
				t.Log(err)
			}
		})
	}
}

// itemsByName names the device groups and topic groups in the API server's msg by their names,
// as msgbench does (spec.groups[0].qos is spec.groups[sensors].qos): a case names the field so.
func itemsByName(msg string, obj *unstructured.Unstructured) string {
	for _, list := range []string{"groups", "topics"} {
		items, _, _ := unstructured.NestedSlice(obj.Object, "spec", list)
		for i, item := range items {
			if name, _, _ := unstructured.NestedString(item.(map[string]any), "name"); name != "" {
				msg = strings.ReplaceAll(msg, fmt.Sprintf("spec.%s[%d]", list, i), fmt.Sprintf("spec.%s[%s]", list, name))
			}
		}
	}
	return msg
}

// TestSpecIsImmutableOnceStarted checks the spec can change while Pending and not after.
func TestSpecIsImmutableOnceStarted(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	obj := newManifest(t, ns, "immutable", "protocol: mqtt\nqos: 1")
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	var mb v1.MessagingBenchmark
	key := client.ObjectKeyFromObject(obj)
	if err := env.Client.Get(ctx, key, &mb); err != nil {
		t.Fatal(err)
	}
	mb.Spec.QoS = 2
	if err := env.Client.Update(ctx, &mb); err != nil {
		t.Fatalf("spec change before the run started was refused: %v", err)
	}
	mb.Status.Phase = v1.PhasePending
	if err := env.Client.Status().Update(ctx, &mb); err != nil {
		t.Fatal(err)
	}
	mb.Spec.Workload.PayloadBytes = 512
	if err := env.Client.Update(ctx, &mb); err != nil {
		t.Fatalf("spec change while Pending was refused: %v", err)
	}
	mb.Status.Phase = v1.PhaseRunning
	if err := env.Client.Status().Update(ctx, &mb); err != nil {
		t.Fatal(err)
	}
	mb.Spec.QoS = 0
	err := env.Client.Update(ctx, &mb)
	if err == nil || !strings.Contains(err.Error(), "spec: a MessagingBenchmark is one run") {
		t.Fatalf("spec change after start: want rejection naming spec, got %v", err)
	}
	if err := env.Client.Get(ctx, key, &mb); err != nil {
		t.Fatal(err)
	}
	mb.Labels = map[string]string{"team": "iot"}
	if err := env.Client.Update(ctx, &mb); err != nil {
		t.Fatalf("label change after start was refused: %v", err)
	}
	if mb.Spec.QoS != 2 || mb.Spec.Workload.PayloadBytes != 512 {
		t.Errorf("stored spec changed: qos %d payload %d", mb.Spec.QoS, mb.Spec.Workload.PayloadBytes)
	}
}

// TestKubectlExplainAndPrinterColumns checks what kubectl users see.
func TestKubectlExplainAndPrinterColumns(t *testing.T) {
	kubectl, kubeconfig, err := env.Kubectl(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	explain := run("explain", "messagingbenchmark.spec.workload")
	for _, want := range []string{"publishers", "publishing clients in total", "payloadBytes", "intended send time", "timelineInterval"} {
		if !strings.Contains(explain, want) {
			t.Errorf("kubectl explain messagingbenchmark.spec.workload lacks %q:\n%s", want, explain)
		}
	}
	ns := namespace(t)
	obj := newManifest(t, ns, "columns", "protocol: mqtt-sn\nqos: -1\nmqttsn: {topicIdType: predefined}\nworkload: {payloadBytes: 64}")
	if err := env.Client.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
	var mb v1.MessagingBenchmark
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), &mb); err != nil {
		t.Fatal(err)
	}
	p99, rate := int64(1234), int64(5678)
	mb.Status.Phase = v1.PhaseSucceeded
	mb.Status.Summary = &v1.ResultSummary{ReceivedPerSecond: rate, LatencyP99Micros: &p99}
	if err := env.Client.Status().Update(context.Background(), &mb); err != nil {
		t.Fatal(err)
	}
	table := run("get", "mb", "-n", ns)
	header := strings.Fields(strings.SplitN(table, "\n", 2)[0])
	wantHeader := []string{"NAME", "PHASE", "PROTOCOL", "QOS", "PAYLOAD", "RECEIVED/S", "P99-MICROS", "AGE"}
	if strings.Join(header, " ") != strings.Join(wantHeader, " ") {
		t.Errorf("kubectl get mb header %v, want %v", header, wantHeader)
	}
	for _, want := range []string{"columns", "Succeeded", "mqtt-sn", "-1", "64", "5678", "1234"} {
		if !strings.Contains(table, want) {
			t.Errorf("kubectl get mb lacks %q:\n%s", want, table)
		}
	}
	if out := run("get", "msgbench", "-n", ns, "-o", "name"); !strings.Contains(out, "columns") {
		t.Errorf("short name msgbench: %s", out)
	}
}

var _ runtime.Object = &v1.MessagingBenchmark{}

// TestTypedClientGetsTheDefaults creates benchmarks from Go structs, as an operator or a GitOps
// tool built on this package does. Fields left unset must get the CRD's defaults, and fields set
// to their zero value must keep it. (As plain bool/int32 fields, unset cleanSession and
// http.keepAlive reached the API server as false and keepAliveSeconds as 0: the e2e's HTTP/3
// sample then opened a QUIC connection per message.)
func TestTypedClientGetsTheDefaults(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	create := func(name string, spec v1.MessagingBenchmarkSpec) v1.MessagingBenchmarkSpec {
		t.Helper()
		mb := &v1.MessagingBenchmark{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: spec}
		if err := env.Client.Create(ctx, mb); err != nil {
			t.Fatal(err)
		}
		var back v1.MessagingBenchmark
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(mb), &back); err != nil {
			t.Fatal(err)
		}
		return back.Spec
	}
	got := create("typed-unset", v1.MessagingBenchmarkSpec{Protocol: v1.ProtocolHTTP, QoS: 1})
	if got.MQTT.CleanSession == nil || !*got.MQTT.CleanSession || got.MQTT.KeepAliveSeconds == nil || *got.MQTT.KeepAliveSeconds != 60 ||
		got.MQTTSN.MaxRetries == nil || *got.MQTTSN.MaxRetries != 5 || got.HTTP.KeepAlive == nil || !*got.HTTP.KeepAlive {
		t.Errorf("unset fields read back %+v %+v %+v; want cleanSession true, keepAliveSeconds 60, maxRetries 5, keepAlive true",
			got.MQTT, got.MQTTSN, got.HTTP)
	}
	off, zero := false, int32(0)
	got = create("typed-zero", v1.MessagingBenchmarkSpec{Protocol: v1.ProtocolHTTP, QoS: 1,
		MQTT:   v1.MQTTSpec{CleanSession: &off, KeepAliveSeconds: &zero},
		MQTTSN: v1.MQTTSNSpec{MaxRetries: &zero},
		HTTP:   v1.HTTPSpec{KeepAlive: &off}})
	if got.MQTT.CleanSessionOrDefault() || got.MQTT.KeepAliveSecondsOrDefault() != 0 || got.MQTTSN.MaxRetriesOrDefault() != 0 || got.HTTP.KeepAliveOrDefault() {
		t.Errorf("zero values read back %+v %+v %+v; want them kept", got.MQTT, got.MQTTSN, got.HTTP)
	}
	// Unset in Go means the default in Go too: the accessors agree with the API server.
	var unset v1.MessagingBenchmarkSpec
	if !unset.MQTT.CleanSessionOrDefault() || unset.MQTT.KeepAliveSecondsOrDefault() != *create("typed-unset-2", v1.MessagingBenchmarkSpec{Protocol: v1.ProtocolMQTT}).MQTT.KeepAliveSeconds ||
		unset.MQTTSN.MaxRetriesOrDefault() != v1.DefaultMQTTSNMaxRetries || !unset.HTTP.KeepAliveOrDefault() {
		t.Errorf("accessors of an unset spec disagree with the CRD defaults")
	}
}
