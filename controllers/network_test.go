package controllers_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/internal/testenv"
	"github.com/msgbench/msgbench/loadgen/control"
	"github.com/msgbench/msgbench/netem"
)

// fakeChaosMesh plays Chaos Mesh's controller: it writes the status of a realistic document from
// netem/testdata/status on every NetworkChaos of the namespace, and records what state the
// workers were in when each object appeared.
type fakeChaosMesh struct {
	mu           sync.Mutex
	workerStates []string
	objectsSeen  int
}

func startFakeChaosMesh(t *testing.T, ns, statusDoc string) *fakeChaosMesh {
	t.Helper()
	f := &fakeChaosMesh{}
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "netem", "testdata", "status", statusDoc))
	if err != nil {
		t.Fatal(err)
	}
	js, _ := yaml.YAMLToJSON(data)
	template := &unstructured.Unstructured{}
	if err := template.UnmarshalJSON(js); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		handled := map[string]bool{}
		for ctx.Err() == nil {
			var list unstructured.UnstructuredList
			list.SetGroupVersionKind(netem.NetworkChaosGVK)
			if env.Client.List(ctx, &list, client.InNamespace(ns)) == nil {
				for i := range list.Items {
					o := &list.Items[i]
					if handled[o.GetName()] {
						continue
					}
					f.recordWorkers(ctx, ns, o)
					o.Object["status"] = template.Object["status"]
					if env.Client.Update(ctx, o) == nil {
						handled[o.GetName()] = true
					}
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return f
}

// recordWorkers asks every worker of the benchmark for its state when its NetworkChaos appears.
func (f *fakeChaosMesh) recordWorkers(ctx context.Context, ns string, o *unstructured.Unstructured) {
	name := o.GetLabels()[v1alpha1.LabelBenchmark]
	var mb v1alpha1.MessagingBenchmark
	if env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &mb) != nil {
		return
	}
	var secret corev1.Secret
	_ = env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: resources.NamesOf(&mb).Control}, &secret)
	var pods corev1.PodList
	_ = env.Client.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels(resources.Selector(&mb, v1alpha1.ComponentWorker)))
	c := &control.Client{Token: string(secret.Data["token"])}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.objectsSeen++
	for _, p := range pods.Items {
		st, _, err := c.Status(ctx, net.JoinHostPort(p.Status.PodIP, strconv.Itoa(int(controlPort))))
		if err != nil {
			f.workerStates = append(f.workerStates, "unreachable: "+err.Error())
			continue
		}
		f.workerStates = append(f.workerStates, st.State)
	}
}

func TestNetworkImpairedBeforeWorkersConnect(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns)
	startKubelet(t, ns, nil)
	chaos := startFakeChaosMesh(t, ns, "injected.yaml")
	createBenchmark(t, ns, "lte", quickWorkload+"network: {profile: lte}")
	mb := waitFinished(t, ns, "lte", 60*time.Second)
	if mb.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("phase %s: %s", mb.Status.Phase, mb.Status.Message)
	}
	if c := condition(mb, v1alpha1.ConditionNetworkImpaired); c.Status != "True" || c.Reason != "Injected" {
		t.Errorf("NetworkImpaired %+v", c)
	}
	// The result records the link's numbers as Chaos Mesh was given them, as a local run does.
	if n, _ := resultConfigMap(t, ns, mb).Network.(map[string]any); n == nil || n["profile"] != "lte" || n["rttMillis"] == nil || n["emulator"] != "Chaos Mesh NetworkChaos" {
		t.Errorf("result network %v", n)
	}
	chaos.mu.Lock()
	defer chaos.mu.Unlock()
	if chaos.objectsSeen != 2 {
		t.Errorf("%d NetworkChaos objects, want up and down", chaos.objectsSeen)
	}
	for _, s := range chaos.workerStates {
		if s != control.StateWaiting {
			t.Errorf("a worker was %q when its NetworkChaos appeared; workers must wait to connect until the link is impaired", s)
		}
	}
	if len(chaos.workerStates) == 0 {
		t.Error("no worker state recorded")
	}
	// Cleanup removed the NetworkChaos objects.
	var list unstructured.UnstructuredList
	list.SetGroupVersionKind(netem.NetworkChaosGVK)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := env.Client.List(context.Background(), &list, client.InNamespace(ns)); err == nil && len(list.Items) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d NetworkChaos objects left after cleanup", len(list.Items))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestNetworkInjectionFailureFailsTheRun(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns)
	startKubelet(t, ns, nil)
	startFakeChaosMesh(t, ns, "failed-no-sch-netem.yaml")
	createBenchmark(t, ns, "nonetem", quickWorkload+"network: {profile: 5g-sa}")
	mb := waitFinished(t, ns, "nonetem", 60*time.Second)
	if mb.Status.Phase != v1alpha1.PhaseFailed || !strings.Contains(mb.Status.Message, "Specified qdisc kind is unknown") {
		t.Errorf("phase %s message %q", mb.Status.Phase, mb.Status.Message)
	}
	if c := condition(mb, v1alpha1.ConditionNetworkImpaired); c.Reason != "InjectionFailed" {
		t.Errorf("NetworkImpaired %+v", c)
	}
}

func TestNetworkInjectionNotConfirmedInTime(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns) // InjectionTimeout is 3 s in the suite's operator
	startKubelet(t, ns, nil)
	createBenchmark(t, ns, "nochaos", quickWorkload+"network: {profile: nb-iot}")
	mb := waitFinished(t, ns, "nochaos", 60*time.Second)
	if mb.Status.Phase != v1alpha1.PhaseFailed || !strings.Contains(mb.Status.Message, "Chaos Mesh did not confirm the network impairment within 3s") ||
		!strings.Contains(mb.Status.Message, "is Chaos Mesh installed") {
		t.Errorf("phase %s message %q", mb.Status.Phase, mb.Status.Message)
	}
}

// TestWithoutChaosMeshOrStrimzi runs on a second API server that has neither Chaos Mesh's nor
// Strimzi's CRDs: benchmarks that need them fail at once, saying what is missing.
func TestWithoutChaosMeshOrStrimzi(t *testing.T) {
	bare, err := testenv.StartWithoutThirdParty()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = bare.Stop() }()
	saved := env
	env = bare
	defer func() { env = saved }()
	ns := newNamespace(t)
	startOperator(t, ns)
	startKubelet(t, ns, nil)
	createBenchmark(t, ns, "impaired", quickWorkload+"network: {profile: lte}")
	createBenchmark(t, ns, "kafka", "protocol: kafka\nbroker: {type: kafka}\nworkload: {duration: 1s}")
	mb := waitFinished(t, ns, "impaired", 30*time.Second)
	if mb.Status.Phase != v1alpha1.PhaseFailed || !strings.Contains(mb.Status.Message, "Chaos Mesh is not installed") {
		t.Errorf("impaired: phase %s message %q", mb.Status.Phase, mb.Status.Message)
	}
	mb = waitFinished(t, ns, "kafka", 30*time.Second)
	if mb.Status.Phase != v1alpha1.PhaseFailed || !strings.Contains(mb.Status.Message, "Strimzi is not installed") {
		t.Errorf("kafka: phase %s message %q", mb.Status.Phase, mb.Status.Message)
	}
}
