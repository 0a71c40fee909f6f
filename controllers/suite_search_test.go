package controllers_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/suite"
)

// searchSpec is a capacity search over workload.rate from 400 (probe ×2) between 100 and
// 20,000, judged on the end-to-end p99. The runs themselves are tested elsewhere: here the
// children are finished by fakeSystem, a synthetic system of known capacity.
const searchSpec = `
template:
  protocol: mqtt
  workers: {replicas: 1}
  workload: {publishers: 1, subscribers: 1, topics: 1, payloadBytes: 32, rate: 100, duration: 1s, warmup: 0s}
search:
  field: workload.rate
  min: 100
  max: 20000
  start: 400
objectives: ["latency.endToEnd.p99 <= 50ms"]
`

// fakeSystem finishes the search children of a namespace as a system of known capacity would:
// a run at a rate up to the capacity of its suite succeeds with a p99 of 8 ms; above it up to
// 5/4 of it the run succeeds but misses the p99 objective (200 ms) or, every other 50 msg/s,
// meets it with a growing backlog (a NotSteadyState caveat); further above, it fails (the
// offered load not sustained). A child is finished as the operator finishes one: its result
// ConfigMap first, then its status.
type fakeSystem struct {
	t        *testing.T
	ns       string
	capacity map[string]int64 // by suite
	paused   bool

	mu      sync.Mutex
	order   []string             // children in the order they appeared
	uids    map[string]types.UID // each child's first UID
	recycle []string             // a child seen again with another UID: created twice
	values  map[string]int64     // each child's rate
	stop    chan struct{}
	done    chan struct{}
}

func startFakeSystem(t *testing.T, ns string, capacity map[string]int64) *fakeSystem {
	f := &fakeSystem{t: t, ns: ns, capacity: capacity, uids: map[string]types.UID{}, values: map[string]int64{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go f.loop()
	t.Cleanup(f.close)
	return f
}

func (f *fakeSystem) close() {
	select {
	case <-f.stop:
	default:
		close(f.stop)
	}
	<-f.done
}

// pause stops or resumes finishing children (they are still recorded).
func (f *fakeSystem) pause(p bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.paused = p
}

// children are the children seen so far, in the order they appeared, with their rates.
func (f *fakeSystem) children() (names []string, values []int64, recreated []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.order {
		values = append(values, f.values[n])
	}
	return slices.Clone(f.order), values, slices.Clone(f.recycle)
}

func (f *fakeSystem) loop() {
	defer close(f.done)
	ctx := context.Background()
	for {
		select {
		case <-f.stop:
			return
		case <-time.After(20 * time.Millisecond):
		}
		var l v1alpha1.MessagingBenchmarkList
		if env.Client.List(ctx, &l, client.InNamespace(f.ns)) != nil {
			continue
		}
		slices.SortFunc(l.Items, func(a, b v1alpha1.MessagingBenchmark) int {
			return a.CreationTimestamp.Compare(b.CreationTimestamp.Time)
		})
		f.mu.Lock()
		for _, mb := range l.Items {
			if uid, ok := f.uids[mb.Name]; !ok {
				f.uids[mb.Name], f.values[mb.Name] = mb.UID, int64(mb.Spec.Workload.Rate)
				f.order = append(f.order, mb.Name)
			} else if uid != mb.UID {
				f.uids[mb.Name] = mb.UID
				f.recycle = append(f.recycle, mb.Name)
			}
		}
		paused := f.paused
		f.mu.Unlock()
		if paused {
			continue
		}
		for i := range l.Items {
			mb := &l.Items[i]
			if mb.Status.Phase == v1alpha1.PhaseSucceeded || mb.Status.Phase == v1alpha1.PhaseFailed {
				continue
			}
			if err := f.finish(ctx, mb); err != nil && !apierrors.IsConflict(err) {
				f.t.Logf("finishing %s: %v", mb.Name, err)
			}
		}
	}
}

// outcome is what the system does at rate under capacity c.
func outcome(name string, rate, c int64) (v1alpha1.Phase, string, *results.Result) {
	lost := int64(0)
	sent := rate // a 1 s window
	r := &results.Result{APIVersion: "msgbench.io/v1alpha1", Kind: "Result", Name: name, Phase: string(v1alpha1.PhaseSucceeded),
		MeasuredSeconds: 1, Sent: sent, Received: sent, Expected: sent, ReceivedInWindow: sent, Lost: &lost,
		Throughput: results.Throughput{OfferedPerSecond: float64(rate), SentPerSecond: float64(rate), ReceivedPerSecond: float64(rate)},
		Latency:    results.Latencies{EndToEnd: &results.LatencySummary{Count: sent, MinMicros: 500, MeanMicros: 3000, P50Micros: 2000, P90Micros: 5000, P95Micros: 6000, P99Micros: 8000, P999Micros: 9000, MaxMicros: 10000}},
	}
	switch {
	case rate <= c:
	case rate <= c*5/4 && (rate/50)%2 == 1:
		r.Caveats = append(r.Caveats, results.Caveat{Type: results.CaveatNotSteadyState, Message: "the end-to-end latency grew 40 ms over the window"})
	case rate <= c*5/4:
		r.Latency.EndToEnd.P99Micros, r.Latency.EndToEnd.P999Micros, r.Latency.EndToEnd.MaxMicros = 200000, 250000, 300000
	default:
		msg := fmt.Sprintf("the offered load was not sustained: %d %% of the messages unsent", 100*(rate-c)/rate)
		r.Phase, r.Message = string(v1alpha1.PhaseFailed), msg
		r.Sent = c
		return v1alpha1.PhaseFailed, "the run failed: " + msg, r
	}
	return v1alpha1.PhaseSucceeded, "", r
}

func (f *fakeSystem) finish(ctx context.Context, mb *v1alpha1.MessagingBenchmark) error {
	c, ok := f.capacity[mb.Labels[v1alpha1.LabelSuite]]
	if !ok {
		return nil
	}
	phase, msg, res := outcome(mb.Name, int64(mb.Spec.Workload.Rate), c)
	data, err := json.Marshal(res)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(data)
	_ = zw.Close()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: resources.NamesOf(mb).Result, Namespace: mb.Namespace},
		BinaryData: map[string][]byte{"result.json.gz": buf.Bytes()}}
	if err := env.Client.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	mb.Status.Phase, mb.Status.Message = phase, msg
	mb.Status.CompletionTime = &metav1.Time{Time: time.Now()}
	return env.Client.Status().Update(ctx, mb)
}

// suiteDocument is the suite.json the suite stored in its ConfigMap.
func suiteDocument(t *testing.T, ns, name string) *suite.Document {
	t.Helper()
	var d suite.Document
	gzippedJSON(t, ns, v1alpha1.ShortName(name, "-suite"), "suite.json.gz", &d)
	return &d
}

func int64s(p *int64) string {
	if p == nil {
		return "nil"
	}
	return strconv.FormatInt(*p, 10)
}

// TestSearchFindsTheCapacity: a search over workload.rate against a system whose capacity is
// 1,234 msg/s finds it within 5 % below, confirmed: probe 400, 800, 1,600 (a failed run), then
// bisection 1,200, 1,400, 1,300 (p99 missed) and 1,250 (backlog growing), 50 apart from 1,200
// (≤ 5 % of it), and a confirmation of 1,200. Created
// suspended, it starts nothing and says what it would run; resumed, it runs one child at a
// time, each once, and stores suite.json with the search.
func TestSearchFindsTheCapacity(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	startOperator(t, ns)
	sys := startFakeSystem(t, ns, map[string]int64{"cap": 1234})
	watch := watchMeasuring(ns, "cap")
	createSuite(t, ns, "cap", searchSpec+"suspend: true\n")
	deadline := time.Now().Add(30 * time.Second)
	for s := getSuite(t, ns, "cap"); s.Status.Phase != v1alpha1.SuiteSuspended; s = getSuite(t, ns, "cap") {
		if time.Now().After(deadline) {
			t.Fatalf("a suspended search is %q: %+v", s.Status.Phase, s.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if s := getSuite(t, ns, "cap"); s.Status.Search == nil || int64s(s.Status.Search.Next) != "400" || s.Status.Search.Outcome != v1alpha1.SearchSearching ||
		s.Status.Progress != "0 runs, step 1 (probe)" || s.Status.Message != "spec.suspend: no run starts; next: step 1 (probe), trial 1: workload.rate = 400" {
		t.Fatalf("suspended: progress %q, message %q, search %+v", s.Status.Progress, s.Status.Message, s.Status.Search)
	}
	if names, _, _ := sys.children(); len(names) != 0 {
		t.Fatalf("a suspended search started %v", names)
	}
	if err := env.Client.Patch(context.Background(), &v1alpha1.MessagingBenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cap"}},
		client.RawPatch(types.MergePatchType, []byte(`{"spec":{"suspend":false}}`))); err != nil {
		t.Fatal(err)
	}
	s := waitSuite(t, ns, "cap", 2*time.Minute)
	most, _ := watch()
	names, values, recreated := sys.children()

	sr := s.Status.Search
	if s.Status.Phase != v1alpha1.SuiteSucceeded || sr == nil || sr.Outcome != v1alpha1.SearchFound || sr.Capacity == nil {
		t.Fatalf("phase %s, search %+v: %s", s.Status.Phase, sr, s.Status.Message)
	}
	if c := *sr.Capacity; c > 1234 || float64(c) < 0.95*1234 {
		t.Errorf("capacity %d: not within 5 %% below 1234", c)
	}
	if sr.LastPass == nil || sr.FirstFail == nil || *sr.LastPass > 1234 || *sr.FirstFail <= 1234 || *sr.LastPass != *sr.Capacity {
		t.Errorf("bracket [%s, %s) does not hold 1234 (capacity %s)", int64s(sr.LastPass), int64s(sr.FirstFail), int64s(sr.Capacity))
	}
	wantValues := []int64{400, 800, 1600, 1200, 1400, 1300, 1250, 1200}
	if !slices.Equal(values, wantValues) {
		t.Errorf("runs at %v, want %v", values, wantValues)
	}
	var wantNames []string
	for i := range wantValues {
		wantNames = append(wantNames, fmt.Sprintf("cap-s%d-t1", i+1))
	}
	if !slices.Equal(names, wantNames) || len(recreated) > 0 || most != 1 {
		t.Errorf("children %v (recreated %v, %d unfinished at once), want %v one at a time", names, recreated, most, wantNames)
	}
	if int(s.Status.Runs.Total) != len(names) || len(names) > 30 || s.Status.Runs.Succeeded != 7 || s.Status.Runs.Failed != 1 || s.Status.Runs.Running != 0 {
		t.Errorf("runs %+v, %d children (maxRuns 30)", s.Status.Runs, len(names))
	}
	if sr.Steps != 8 || len(s.Status.Points) != 8 || s.Status.Points[0].Name != "s1" || s.Status.Progress != "8 runs, 8 steps: Found" {
		t.Errorf("steps %d, points %d, progress %q", sr.Steps, len(s.Status.Points), s.Status.Progress)
	}
	if s.Status.Verdict != "Passed" || !strings.Contains(s.Status.Message, "capacity workload.rate = 1200") {
		t.Errorf("verdict %s, message %q", s.Status.Verdict, s.Status.Message)
	}
	if c := meta.FindStatusCondition(s.Status.Conditions, v1alpha1.ConditionCompleted); c == nil || c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.SearchFound {
		t.Errorf("Completed %+v", c)
	}
	if c := meta.FindStatusCondition(s.Status.Conditions, v1alpha1.ConditionObjectivesMet); c == nil || c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.SearchFound {
		t.Errorf("ObjectivesMet %+v", c)
	}
	if s.Status.StartTime == nil || s.Status.CompletionTime == nil {
		t.Errorf("start %v, completion %v", s.Status.StartTime, s.Status.CompletionTime)
	}
	doc := suiteDocument(t, ns, "cap")
	if doc.Search == nil || doc.Search.Outcome != v1alpha1.SearchFound || int64s(doc.Search.Capacity) != int64s(sr.Capacity) ||
		len(doc.Search.Steps) != 8 || doc.Search.Runs != 8 || len(doc.Search.Curve) != 7 || doc.Verdict != "Passed" || len(doc.Points) != 8 {
		t.Fatalf("suite.json: verdict %s, %d points, search %+v", doc.Verdict, len(doc.Points), doc.Search)
	}
	for _, st := range doc.Search.Steps {
		pass := st.Value <= 1234
		if st.Passed == nil || *st.Passed != pass || len(st.Trials) != 1 {
			t.Errorf("step %d at %d: passed %v, trials %+v", st.Index, st.Value, st.Passed, st.Trials)
		}
	}
	if k := doc.Search.Steps[len(doc.Search.Steps)-1].Kind; k != suite.StepConfirm {
		t.Errorf("the last step is a %s, want a confirmation", k)
	}
}

// TestSearchResumesAfterARestart: the operator stopped mid-search, while its newest child
// finishes unwatched, and a new one started (empty caches) goes on from the children: every
// trial runs once, in the order an uninterrupted search runs them. Two trials a step (pass
// all): a passing step runs both, a failing one stops at its first; the operator is stopped
// between the two trials of a step.
func TestSearchResumesAfterARestart(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	stop := startOperator(t, ns)
	sys := startFakeSystem(t, ns, map[string]int64{"resume": 1234})
	createSuite(t, ns, "resume", strings.Replace(searchSpec, "start: 400", "start: 400\n  trials: 2", 1))
	deadline := time.Now().Add(time.Minute)
	for {
		// Six runs: the first trial of step 4 (1,200) started, so the restarted operator
		// goes on in the middle of a step.
		if names, _, _ := sys.children(); len(names) >= 6 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("six runs never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	sys.pause(true)
	stop()
	sys.pause(false)
	time.Sleep(time.Second) // the newest run finishes while no operator watches
	before, _, _ := sys.children()
	var mid v1alpha1.MessagingBenchmarkList
	if err := env.Client.List(context.Background(), &mid, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, mb := range mid.Items {
		if mb.Status.Phase != v1alpha1.PhaseSucceeded && mb.Status.Phase != v1alpha1.PhaseFailed {
			t.Fatalf("%s still %q with no operator", mb.Name, mb.Status.Phase)
		}
	}
	startOperator(t, ns)
	s := waitSuite(t, ns, "resume", 2*time.Minute)
	names, values, recreated := sys.children()
	t.Logf("stopped after %d runs (%v)", len(before), before)
	wantValues := []int64{400, 400, 800, 800, 1600, 1200, 1200, 1400, 1300, 1250, 1200, 1200}
	wantNames := []string{"s1-t1", "s1-t2", "s2-t1", "s2-t2", "s3-t1", "s4-t1", "s4-t2", "s5-t1", "s6-t1", "s7-t1", "s8-t1", "s8-t2"}
	for i := range wantNames {
		wantNames[i] = "resume-" + wantNames[i]
	}
	if !slices.Equal(values, wantValues) || !slices.Equal(names, wantNames) || len(recreated) > 0 {
		t.Errorf("runs %v at %v (recreated %v), want %v at %v", names, values, recreated, wantNames, wantValues)
	}
	sr := s.Status.Search
	if s.Status.Phase != v1alpha1.SuiteSucceeded || sr == nil || sr.Outcome != v1alpha1.SearchFound || int64s(sr.Capacity) != "1200" ||
		int(s.Status.Runs.Total) != len(names) || s.Status.Runs.Succeeded != 11 || s.Status.Runs.Failed != 1 {
		t.Fatalf("phase %s, runs %+v, search %+v: %s", s.Status.Phase, s.Status.Runs, sr, s.Status.Message)
	}
}

// TestSearchBelowRange: a system that fails at every value of the range ends the search at min
// with outcome BelowRange, no capacity, verdict Missed and ObjectivesMet false: 800, 400 and
// 200 fail outright, 100 (min) misses the p99 objective. The suite Succeeded (a run measured);
// a search whose every run failed ends Failed.
func TestSearchBelowRange(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	startOperator(t, ns)
	sys := startFakeSystem(t, ns, map[string]int64{"below": 90, "nothing": 10})
	createSuite(t, ns, "below", strings.Replace(searchSpec, "start: 400", "start: 800", 1))
	createSuite(t, ns, "nothing", strings.Replace(searchSpec, "start: 400", "start: 100", 1))
	s := waitSuite(t, ns, "below", 2*time.Minute)
	sr := s.Status.Search
	if s.Status.Phase != v1alpha1.SuiteSucceeded || sr == nil || sr.Outcome != v1alpha1.SearchBelowRange || sr.Capacity != nil || sr.LastPass != nil ||
		int64s(sr.FirstFail) != "100" || s.Status.Verdict != "Missed" {
		t.Fatalf("phase %s, verdict %s, search %+v: %s", s.Status.Phase, s.Status.Verdict, sr, s.Status.Message)
	}
	if s.Status.Runs.Total != 4 || s.Status.Runs.Succeeded != 1 || s.Status.Runs.Failed != 3 {
		t.Errorf("runs %+v", s.Status.Runs)
	}
	if c := meta.FindStatusCondition(s.Status.Conditions, v1alpha1.ConditionObjectivesMet); c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.SearchBelowRange {
		t.Errorf("ObjectivesMet %+v", c)
	}
	if doc := suiteDocument(t, ns, "below"); doc.Search == nil || doc.Search.Outcome != v1alpha1.SearchBelowRange || doc.Search.Capacity != nil || doc.Verdict != "Missed" {
		t.Errorf("suite.json: verdict %s, search %+v", doc.Verdict, doc.Search)
	}
	n := waitSuite(t, ns, "nothing", time.Minute)
	if n.Status.Phase != v1alpha1.SuiteFailed || n.Status.Search == nil || n.Status.Search.Outcome != v1alpha1.SearchBelowRange ||
		n.Status.Verdict != "Missed" || !strings.Contains(n.Status.Message, "every run failed") || n.Status.Runs.Total != 1 {
		t.Errorf("every run failed: phase %s, verdict %s, runs %+v, search %+v: %s", n.Status.Phase, n.Status.Verdict, n.Status.Runs, n.Status.Search, n.Status.Message)
	}
	names, values, _ := sys.children()
	slices.Sort(names)
	if want := []string{"below-s1-t1", "below-s2-t1", "below-s3-t1", "below-s4-t1", "nothing-s1-t1"}; !slices.Equal(names, want) {
		t.Errorf("children %v at %v, want %v", names, values, want)
	}
}

// TestSearchRefusedBeforeAnyRun: a search over a field that is not an integer fails the suite
// at once, saying why, and creates no run.
func TestSearchRefusedBeforeAnyRun(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	startOperator(t, ns)
	createSuite(t, ns, "refused", strings.Replace(searchSpec, "field: workload.rate", "field: workload.duration", 1))
	s := waitSuite(t, ns, "refused", time.Minute)
	if s.Status.Phase != v1alpha1.SuiteFailed || !strings.Contains(s.Status.Message, "spec.search.field workload.duration: a string field") {
		t.Fatalf("phase %s: %s", s.Status.Phase, s.Status.Message)
	}
	var runs v1alpha1.MessagingBenchmarkList
	if err := env.Client.List(context.Background(), &runs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(runs.Items) != 0 {
		t.Errorf("%d runs created", len(runs.Items))
	}
}
