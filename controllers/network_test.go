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
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/controllers"
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
	seen         []*unstructured.Unstructured // each object as it appeared
}

// objects are the NetworkChaos objects it saw, as they were created.
func (f *fakeChaosMesh) objects() []*unstructured.Unstructured {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*unstructured.Unstructured(nil), f.seen...)
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
	f.seen = append(f.seen, o.DeepCopy())
	for _, p := range pods.Items {
		st, _, err := c.Status(ctx, net.JoinHostPort(p.Status.PodIP, strconv.Itoa(int(controlPort))))
		if err != nil {
			f.workerStates = append(f.workerStates, "unreachable: "+err.Error())
			continue
		}
		f.workerStates = append(f.workerStates, st.State)
	}
}

// confirmWithin30s gives Chaos Mesh 30 s, not the suite's 3 s, to confirm an impairment: the
// fake one polls, and on a busy machine running the tests in parallel 3 s was not always enough
// for what these tests are not about.
func confirmWithin30s(o *controllers.Options) { o.InjectionTimeout = 30 * time.Second }

func TestNetworkImpairedBeforeWorkersConnect(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	startOperatorWith(t, ns, env.Config, confirmWithin30s)
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
	t.Parallel()
	ns := newNamespace(t)
	startOperatorWith(t, ns, env.Config, confirmWithin30s)
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
	t.Parallel()
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
	saved := env
	env = bare
	// Stopped after the operator and the kubelet (cleanups run last-in first-out): with their
	// watches still open, the API server took its whole 20 s stop timeout to go.
	t.Cleanup(func() {
		env = saved
		_ = bare.Stop()
	})
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

// TestNetworkTimelineSteps: a benchmark on LTE with a 1 s outage 500 ms into its measured window
// gets the outage's NetworkChaos objects (100 % loss each way, accepted unchanged by the
// NetworkChaos CRD of the suite's API server, Chaos Mesh's own with MSGBENCH_THIRD_PARTY_CRDS)
// at the outage's time, after which LTE's objects go; at its end they give way to LTE's link
// again. The status and the result record each step at or after its planned time, and cleanup
// removes every object.
func TestNetworkTimelineSteps(t *testing.T) {
	ns := newNamespace(t)
	startOperatorWith(t, ns, env.Config, confirmWithin30s)
	startKubelet(t, ns, nil)
	startFakeChaosMesh(t, ns, "injected.yaml")
	type seen struct {
		first, gone time.Time
		spec        map[string]any
	}
	objs := map[string]*seen{}
	var mu sync.Mutex
	ctx, cancel := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for ctx.Err() == nil {
			var list unstructured.UnstructuredList
			list.SetGroupVersionKind(netem.NetworkChaosGVK)
			if env.Client.List(ctx, &list, client.InNamespace(ns)) == nil {
				now := time.Now()
				present := map[string]bool{}
				mu.Lock()
				for _, o := range list.Items {
					present[o.GetName()] = true
					if objs[o.GetName()] == nil {
						spec, _ := o.Object["spec"].(map[string]any)
						objs[o.GetName()] = &seen{first: now, spec: spec}
					}
				}
				for name, s := range objs {
					if !present[name] && s.gone.IsZero() {
						s.gone = now
					}
				}
				mu.Unlock()
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	createBenchmark(t, ns, "handover", `
protocol: mqtt
qos: 1
workload: {publishers: 1, subscribers: 1, topics: 1, payloadBytes: 64, rate: 20, duration: 3s, warmup: 500ms}
network:
  profile: lte
  timeline:
  - {at: 500ms, for: 1s, outage: true}`)
	mb := waitFinished(t, ns, "handover", 60*time.Second)
	// Cleanup follows the phase: wait until the watcher has seen every object go.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		left := len(objs) == 0
		for _, s := range objs {
			left = left || s.gone.IsZero()
		}
		mu.Unlock()
		if !left {
			break
		}
	}
	cancel()
	<-watched
	if mb.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("phase %s: %s", mb.Status.Phase, mb.Status.Message)
	}
	window := mb.Status.StartTime.Add(500 * time.Millisecond)
	steps, err := netem.ResolveTimeline(mb.Spec.Network)
	if err != nil {
		t.Fatal(err)
	}

	// What the API server holds is what the builder made (nothing pruned), and an outage loses
	// everything both ways.
	mu.Lock()
	defer mu.Unlock()
	for k := range steps {
		want, err := netem.TimelineNetworkChaos(mb, steps, k, mb.Spec.GatewayMode() == "")
		if err != nil {
			t.Fatal(err)
		}
		if len(want) != 2 {
			t.Fatalf("step %d: %d objects, want up and down", k, len(want))
		}
		for _, w := range want {
			s := objs[w.GetName()]
			if s == nil {
				t.Fatalf("%s never appeared; seen %v", w.GetName(), keys(objs))
			}
			if !equality.Semantic.DeepEqual(s.spec, w.Object["spec"]) {
				t.Errorf("%s: the API server holds\n%v\nthe builder made\n%v", w.GetName(), s.spec, w.Object["spec"])
			}
			if at := window.Add(steps[k].At); s.first.Before(at) || s.first.After(at.Add(2*time.Second)) {
				t.Errorf("%s appeared %v after the window began, step planned at %v", w.GetName(), s.first.Sub(window), steps[k].At)
			}
			if s.gone.IsZero() {
				t.Errorf("%s was not removed", w.GetName())
			}
		}
	}
	if l := objs["handover-net-s0-up"].spec["loss"]; !equality.Semantic.DeepEqual(l, map[string]any{"loss": "100", "correlation": "0"}) {
		t.Errorf("outage up loss %v", l)
	}
	// LTE's link went once the outage was in place, and the outage once LTE was back.
	for _, pair := range [][2]string{{"handover-net-up", "handover-net-s0-up"}, {"handover-net-down", "handover-net-s0-down"},
		{"handover-net-s0-up", "handover-net-s1-up"}, {"handover-net-s0-down", "handover-net-s1-down"}} {
		old, nu := objs[pair[0]], objs[pair[1]]
		if old == nil || nu == nil || old.gone.Before(nu.first) {
			t.Errorf("%s was removed before %s appeared", pair[0], pair[1])
		}
	}

	// status.networkTimeline and the result's network.timeline mark each step.
	if len(mb.Status.NetworkTimeline) != 2 {
		t.Fatalf("status.networkTimeline %+v", mb.Status.NetworkTimeline)
	}
	marks := resultConfigMap(t, ns, mb).NetworkTimeline()
	if len(marks) != 2 {
		t.Fatalf("result network.timeline %+v", marks)
	}
	for i, want := range []struct {
		planned float64
		step    *int32
		desc    string
	}{{0.5, ptrTo(int32(0)), "outage"}, {1.5, nil, "end of timeline[0]: back to spec.network"}} {
		s := mb.Status.NetworkTimeline[i]
		if s.At.Seconds() != want.planned || s.Description != want.desc || (s.Step == nil) != (want.step == nil) {
			t.Errorf("status step %d = %+v", i, s)
		}
		if late := s.AppliedTime.Sub(window.Add(s.At.Duration)); late < 0 || late > 2*time.Second {
			t.Errorf("status step %d applied %v after its time", i, late)
		}
		m := marks[i]
		t.Logf("step %d (%s): planned %.3fs, applied %.3fs into the measured window", i, m.Description, m.Planned, m.At)
		if m.Planned != want.planned || m.Description != want.desc || m.At < m.Planned || m.At > m.Planned+2 {
			t.Errorf("result mark %d = %+v", i, m)
		}
	}
	if c := condition(mb, v1alpha1.ConditionNetworkImpaired); c.Status != "True" {
		t.Errorf("NetworkImpaired %+v", c)
	}
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// TestNetworkTimelineRefusedBeforeTheRun: a step the API server lets through but the link cannot
// take — reordering without a delay, which tc refuses too — fails the run before the workers
// connect, naming the step's field, and no NetworkChaos is created. (A step at or after
// workload.duration is the API server's to refuse: api/v1alpha1/testdata/invalid.yaml.)
func TestNetworkTimelineRefusedBeforeTheRun(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	startOperator(t, ns)
	startKubelet(t, ns, nil)
	startFakeChaosMesh(t, ns, "injected.yaml")
	createBenchmark(t, ns, "noreorder", quickWorkload+`network: {profile: lte, timeline: [{at: 1s, profile: custom, reorderPercent: "5"}]}`)
	mb := waitFinished(t, ns, "noreorder", 60*time.Second)
	if mb.Status.Phase != v1alpha1.PhaseFailed || mb.Status.StartTime != nil ||
		!strings.Contains(mb.Status.Message, "spec.network.timeline[0].up.reorderPercent: reordering needs a delay") {
		t.Errorf("phase %s, started %v, message %q", mb.Status.Phase, mb.Status.StartTime, mb.Status.Message)
	}
	var list unstructured.UnstructuredList
	list.SetGroupVersionKind(netem.NetworkChaosGVK)
	if err := env.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil || len(list.Items) != 0 {
		t.Errorf("%d NetworkChaos objects (%v)", len(list.Items), err)
	}
}
