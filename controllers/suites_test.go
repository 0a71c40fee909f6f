package controllers_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// suiteSpec is a 2×2 matrix (QoS × publishers) of short runs, each point twice, without a
// warm-up: the children must keep warmup: 0s (TestSuiteRunsOneAtATime checks they do).
const suiteSpec = `
template:
  protocol: mqtt
  workers: {replicas: 1}
  workload: {subscribers: 1, topics: 1, payloadBytes: 32, rate: 50, duration: 1s, warmup: 0s}
matrix:
  axes:
  - field: qos
    values: [0, 1]
  - field: workload.publishers
    values: [1, 2]
repetitions: 2
objectives: ["lost == 0", "throughput.receivedPerSecond >= 1"]
`

func createSuite(t *testing.T, ns, name, spec string) {
	t.Helper()
	create(t, "MessagingBenchmarkSuite", ns, name, spec)
}

func getSuite(t *testing.T, ns, name string) *v1alpha1.MessagingBenchmarkSuite {
	t.Helper()
	var s v1alpha1.MessagingBenchmarkSuite
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// watchMeasuring polls the suite's runs and records the most that were past Pending and not
// finished at once, and the order in which runs started.
func watchMeasuring(ns, suite string) (stop func() (most int, started []string)) {
	var mu sync.Mutex
	most, seen := 0, map[string]bool{}
	var order []string
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
			var l v1alpha1.MessagingBenchmarkList
			if env.Client.List(context.Background(), &l, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelSuite: suite}) != nil {
				continue
			}
			n := 0
			mu.Lock()
			for _, mb := range l.Items {
				if !seen[mb.Name] {
					seen[mb.Name] = true
					order = append(order, mb.Name)
				}
				switch mb.Status.Phase {
				case v1alpha1.PhaseSucceeded, v1alpha1.PhaseFailed:
				default:
					n++
				}
			}
			most = max(most, n)
			mu.Unlock()
		}
	}()
	return func() (int, []string) {
		close(done)
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return most, order
	}
}

func waitSuite(t *testing.T, ns, name string, timeout time.Duration) *v1alpha1.MessagingBenchmarkSuite {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s := getSuite(t, ns, name)
		if s.Status.Phase == v1alpha1.SuiteSucceeded || s.Status.Phase == v1alpha1.SuiteFailed {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("suite %s still %s (%s) after %s: %s", name, s.Status.Phase, s.Status.Progress, timeout, s.Status.Message)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSuiteRunsOneAtATime: a 2-point matrix (QoS 0 and 1) × 2 repetitions with concurrency 1
// runs 4 children in order, never two at once, and ends with statistics and the verdict in its
// status. One publishers value: the order of a matrix of several axes is suite.Expand's
// (TestExpand); here each run costs seconds of operator and worker time, and a second axis
// doubled them (8 runs) to show the same one-at-a-time schedule.
func TestSuiteRunsOneAtATime(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	startOperator(t, ns)
	startKubelet(t, ns, nil)
	watch := watchMeasuring(ns, "grid")
	createSuite(t, ns, "grid", strings.Replace(suiteSpec, "values: [1, 2]", "values: [1]", 1))
	s := waitSuite(t, ns, "grid", 3*time.Minute)
	most, order := watch()
	if s.Status.Phase != v1alpha1.SuiteSucceeded || s.Status.Runs.Total != 4 || s.Status.Runs.Succeeded != 4 || s.Status.Progress != "4/4" {
		t.Fatalf("suite %s %s runs %+v: %s", s.Status.Phase, s.Status.Progress, s.Status.Runs, s.Status.Message)
	}
	if most != 1 {
		t.Errorf("%d runs were unfinished at once; concurrency 1 allows one", most)
	}
	// The template's warmup: 0s reaches the children as written, not as the API server's 5 s
	// default (children created from typed objects left the zero out).
	var child unstructured.Unstructured
	child.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("MessagingBenchmark"))
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "grid-qos0-publishers1-r1"}, &child); err != nil {
		t.Fatal(err)
	}
	if w, _, _ := unstructured.NestedString(child.Object, "spec", "workload", "warmup"); w != "0s" {
		t.Errorf("a child's warmup is %q, the template's 0s", w)
	}
	want := []string{"grid-qos0-publishers1-r1", "grid-qos0-publishers1-r2", "grid-qos1-publishers1-r1", "grid-qos1-publishers1-r2"}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Errorf("runs started in order %v, want %v", order, want)
	}
	if len(s.Status.Points) != 2 {
		t.Fatalf("points %+v", s.Status.Points)
	}
	for _, p := range s.Status.Points {
		if p.Succeeded != 2 || p.ReceivedPerSecond == nil || p.ReceivedPerSecond.CI95 == "" || p.LatencyP99Micros == nil ||
			p.ObjectivesMet == nil || !*p.ObjectivesMet {
			t.Errorf("point %+v", p)
		}
	}
	if c := meta.FindStatusCondition(s.Status.Conditions, v1alpha1.ConditionObjectivesMet); s.Status.Verdict != "Passed" || c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("verdict %s, ObjectivesMet %+v", s.Status.Verdict, c)
	}
	if c := meta.FindStatusCondition(s.Status.Conditions, v1alpha1.ConditionResultsStored); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("ResultsStored %+v", c)
	}
}

// TestSuiteGoesOnAfterAFailedRunAndResumes: a failed run is recorded and the suite goes on; the
// operator stopped mid-suite and started again repeats no finished run and loses none; an
// objective missed is the verdict, apart from the phase.
func TestSuiteGoesOnAfterAFailedRunAndResumes(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	stop := startOperator(t, ns)
	startKubelet(t, ns, func(k *kubelet) { k.failBenchmark = "-publishers2-" })
	watch := watchMeasuring(ns, "resume")
	createSuite(t, ns, "resume", strings.Replace(strings.Replace(suiteSpec, "repetitions: 2", "repetitions: 1", 1),
		`"throughput.receivedPerSecond >= 1"`, `"throughput.receivedPerSecond >= 1000000"`, 1))
	deadline := time.Now().Add(time.Minute)
	for getSuite(t, ns, "resume").Status.Runs.Succeeded+getSuite(t, ns, "resume").Status.Runs.Failed < 2 {
		if time.Now().After(deadline) {
			t.Fatal("two runs never finished")
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	time.Sleep(2 * time.Second) // a run may finish while no operator watches
	startOperator(t, ns)
	s := waitSuite(t, ns, "resume", 3*time.Minute)
	_, order := watch()
	if len(order) != 4 {
		t.Errorf("runs created: %v; want each of the 4 once", order)
	}
	if s.Status.Phase != v1alpha1.SuiteSucceeded || s.Status.Runs.Succeeded != 2 || s.Status.Runs.Failed != 2 {
		t.Fatalf("suite %s runs %+v: %s", s.Status.Phase, s.Status.Runs, s.Status.Message)
	}
	for _, p := range s.Status.Points {
		failing := strings.Contains(p.Name, "publishers2")
		if (failing && (p.Failed != 1 || p.ObjectivesMet != nil)) || (!failing && (p.Succeeded != 1 || p.ObjectivesMet == nil || *p.ObjectivesMet)) {
			t.Errorf("point %+v", p)
		}
	}
	c := meta.FindStatusCondition(s.Status.Conditions, v1alpha1.ConditionObjectivesMet)
	if s.Status.Verdict != "Missed" || c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "receivedPerSecond") {
		t.Errorf("verdict %s, ObjectivesMet %+v: the points that ran missed 1,000,000 msg/s", s.Status.Verdict, c)
	}
}

// TestSuiteConcurrency: with concurrency 2 at most two runs are unfinished at once, and each
// run's result carries the ConcurrentRuns caveat.
func TestSuiteConcurrency(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	startOperator(t, ns)
	startKubelet(t, ns, nil)
	watch := watchMeasuring(ns, "pair")
	spec := strings.Replace(suiteSpec, "values: [1, 2]", "values: [1, 2, 3]", 1)
	spec = strings.Replace(spec, "values: [0, 1]", "values: [1]", 1)
	spec = strings.Replace(spec, "repetitions: 2", "repetitions: 1\nconcurrency: 2", 1)
	createSuite(t, ns, "pair", spec)
	s := waitSuite(t, ns, "pair", 2*time.Minute)
	most, order := watch()
	if s.Status.Phase != v1alpha1.SuiteSucceeded || s.Status.Runs.Succeeded != 3 || most > 2 || len(order) != 3 {
		t.Fatalf("suite %s runs %+v, %d unfinished at once, started %v", s.Status.Phase, s.Status.Runs, most, order)
	}
	for _, name := range order {
		r := resultConfigMap(t, ns, get(t, ns, name))
		found := false
		for _, c := range r.Caveats {
			found = found || c.Type == "ConcurrentRuns"
		}
		if !found {
			t.Errorf("%s: caveats %+v, want ConcurrentRuns", name, r.Caveats)
		}
	}
}
