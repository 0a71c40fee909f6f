package controllers_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/internal/testenv"
	"github.com/msgbench/msgbench/plan"
	"github.com/msgbench/msgbench/plan/plantest"
)

// fiftyWorkers: 50 worker pods, 2 publishers and 1 subscriber each (topic t belongs to worker
// t mod 50), an exact message count, so every worker's share is known.
const fiftyWorkers = `
protocol: mqtt
qos: 1
workers: {replicas: 50}
workload: {publishers: 100, subscribers: 50, topics: 50, payloadBytes: 64, rate: 5000, messages: 5000, warmup: 0s}
`

// TestFiftyWorkersControlPath drives 50 real in-process workers (the load generator behind the
// real control protocol, each on its own loopback address) through create → ready → start →
// collect → merge, and checks that every worker's result was merged exactly, that they started
// together, and how long the control path took.
func TestFiftyWorkersControlPath(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns)
	startKubelet(t, ns, nil)
	seen := phaseTimes(ns, "fifty")
	created := time.Now()
	createBenchmark(t, ns, "fifty", fiftyWorkers)
	mb := waitFinished(t, ns, "fifty", 60*time.Second)
	at := seen()
	if mb.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("phase %s: %s", mb.Status.Phase, mb.Status.Message)
	}
	done := time.Now()
	if mb.Status.Workers.Desired != 50 || mb.Status.Workers.Succeeded != 50 || mb.Status.Workers.Failed != 0 {
		t.Errorf("status workers %+v, want 50 desired and succeeded", mb.Status.Workers)
	}
	if s := mb.Status.Summary; s == nil || s.Sent != 5000 || s.Received != 5000 || s.Lost != 0 || s.Duplicates != 0 {
		t.Errorf("status summary %+v, want 5000 sent and received, none lost", s)
	}

	r := resultConfigMap(t, ns, mb)
	if r.Sent != 5000 || r.Received != 5000 || r.Expected != 5000 || r.Lost == nil || *r.Lost != 0 {
		t.Errorf("merged result: sent %d received %d expected %d lost %v, want 5000 each and none lost", r.Sent, r.Received, r.Expected, r.Lost)
	}
	if len(r.Workers) != 50 {
		t.Fatalf("merged result has %d workers, want 50", len(r.Workers))
	}
	var sent, received int64
	for i, w := range r.Workers {
		// Each worker's 2 publishers send 50 each to its one topic, which its subscriber receives.
		if w.Index != i || w.Sent != 100 || w.Received != 100 || w.ControlRTTMicros <= 0 {
			t.Errorf("worker %d: %+v, want index %d, 100 sent and received, a control round trip", i, w, i)
		}
		sent, received = sent+w.Sent, received+w.Received
	}
	if sent != r.Sent || received != r.Received {
		t.Errorf("the workers' counts sum to %d sent, %d received; the merge says %d, %d", sent, received, r.Sent, r.Received)
	}
	// In-process workers share the operator's clock: the spread is the start's own jitter
	// (goroutine wake-ups on a busy 2-core machine under -race), well under 100 ms; and the
	// last worker is not late, which says the start was set far enough ahead for 50.
	s := r.WorkersStart
	if s == nil || s.Workers != 50 || s.SpreadMicros > 100_000 || s.LatestMicros > 100_000 || s.MaxControlRTTMicros <= 0 {
		t.Errorf("workersStart %+v, want 50 workers started within 100 ms of each other, none 100 ms late", s)
	}
	if c := condition(mb, v1alpha1.ConditionCompleted); !strings.Contains(c.Message, "50 workers finished") || !strings.Contains(c.Message, "started within") {
		t.Errorf("Completed condition %q, want the workers and their start spread", c.Message)
	}
	if s != nil {
		t.Logf("50 workers: create → Running %s (pods, connect, start lead), Running → Collecting %s, Collecting → Succeeded %s, total %s; start spread %d µs, latest %d µs, control round trips ≤ %d µs",
			at[v1alpha1.PhaseRunning].Sub(created).Round(time.Millisecond), at[v1alpha1.PhaseCollecting].Sub(at[v1alpha1.PhaseRunning]).Round(time.Millisecond),
			done.Sub(at[v1alpha1.PhaseCollecting]).Round(time.Millisecond), done.Sub(created).Round(time.Millisecond), s.SpreadMicros, s.LatestMicros, s.MaxControlRTTMicros)
	}
}

// phaseTimes records when each phase of a benchmark was first seen; the returned function
// stops the watcher and returns them.
func phaseTimes(ns, name string) func() map[v1alpha1.Phase]time.Time {
	seen := map[v1alpha1.Phase]time.Time{} // the watcher's alone until done is closed
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			var mb v1alpha1.MessagingBenchmark
			if env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &mb) == nil {
				if _, ok := seen[mb.Status.Phase]; !ok && mb.Status.Phase != "" {
					seen[mb.Status.Phase] = time.Now()
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return func() map[v1alpha1.Phase]time.Time {
		close(stop)
		<-done
		return seen
	}
}

// TestFleetMillionManifest holds docs/scale.md to its arithmetic: its manifest parses, deals
// 50,000 clients to each of 20 workers, warms up for as long as the publishers' ramp takes, and
// its worker pods — with the wide ephemeral port range 50,000 connections to one address need —
// are admitted in a namespace enforcing the restricted Pod Security Standard.
func TestFleetMillionManifest(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "scale.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, _ := strings.Cut(string(doc), "## The manifest")
	_, block, _ := strings.Cut(after, "```yaml\n")
	block, _, found := strings.Cut(block, "```")
	if !found {
		t.Fatal("docs/scale.md: no yaml block under ## The manifest")
	}
	mb, err := manifest.Parse([]byte(block))
	if err != nil {
		t.Fatalf("docs/scale.md's manifest: %v", err)
	}
	w := &mb.Spec.Workload
	n := int(mb.Spec.Workers.Replicas)
	if n != 20 || w.Publishers+w.Subscribers != 1_000_000 {
		t.Fatalf("docs/scale.md's manifest: %d workers, %d clients; the page is about 20 × 50,000", n, w.Publishers+w.Subscribers)
	}
	for i := range n {
		g := plan.Group{Publishers: w.Publishers, Subscribers: w.Subscribers, Topics: w.Topics}
		p := g.Share(i, n)
		if got := len(p.Publishers) + len(p.Subscribers); got != 50_000 || len(p.Publishers) != 25_000 {
			t.Errorf("worker %d gets %d clients (%d publishers), want 50,000 (25,000)", i, got, len(p.Publishers))
		}
	}
	if ramp := time.Duration(25_000/w.ConnectRate) * time.Second; w.Warmup.Duration < ramp {
		t.Errorf("warm-up %s is shorter than the publishers' ramp (%s at connectRate %d)", w.Warmup.Duration, ramp, w.ConnectRate)
	}

	mb.Namespace = newNamespace(t)
	job := resources.WorkersJob(mb, plantest.Kubernetes(t, mb), resources.DefaultConfig())
	spec := job.Spec.Template.Spec
	if sc := spec.SecurityContext; sc == nil || len(sc.Sysctls) != 1 || sc.Sysctls[0].Value != resources.WidePortRange {
		t.Fatalf("worker pod security context %+v: want the wide port range for 50,000 clients", sc)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "worker-", Namespace: mb.Namespace, Labels: job.Spec.Template.Labels}, Spec: spec}
	if err := env.Client.Create(context.Background(), pod, client.DryRunAll); err != nil {
		t.Errorf("a worker pod of docs/scale.md's manifest is refused in a restricted namespace: %v", err)
	}
	// The namespace does refuse a sysctl outside the safe set: the admission above means something.
	bad := pod.DeepCopy()
	bad.Spec.SecurityContext.Sysctls = []corev1.Sysctl{{Name: "net.core.somaxconn", Value: "4096"}}
	if err := env.Client.Create(context.Background(), bad, client.DryRunAll); err == nil || !strings.Contains(err.Error(), "sysctl") {
		t.Errorf("an unsafe sysctl was not refused by PodSecurity: %v", err)
	}
}
