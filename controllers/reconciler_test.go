package controllers_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/controllers"
	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/internal/testenv"
	"github.com/msgbench/msgbench/loadgen/control"
	"github.com/msgbench/msgbench/results"
)

const quickWorkload = `
protocol: mqtt
qos: 1
workers: {replicas: 2}
workload: {publishers: 2, subscribers: 2, topics: 2, payloadBytes: 64, rate: 200, duration: 2s, warmup: 500ms}
`

func createBenchmark(t *testing.T, ns, name, spec string) {
	t.Helper()
	create(t, "MessagingBenchmark", ns, name, spec)
}

// create creates a msgbench object of kind from its spec's YAML. A workload (a suite's
// template's too) that names no topicPrefix gets one of its own, namespace and name: the tests
// run in parallel against the suite's one Mosquitto, and a subscriber of one test's run would
// count another's messages on the default topics as its own or as foreign.
func create(t *testing.T, kind, ns, name, spec string) {
	t.Helper()
	if !strings.Contains(spec, "topicPrefix") {
		spec = strings.Replace(spec, "workload: {", "workload: {topicPrefix: "+ns+"-"+name+"-, ", 1)
	}
	doc := "apiVersion: msgbench.io/v1alpha1\nkind: " + kind + "\nmetadata:\n  name: " + name + "\n  namespace: " + ns + "\nspec:\n  " +
		strings.ReplaceAll(strings.TrimSpace(spec), "\n", "\n  ") + "\n"
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, ns, name string) *v1alpha1.MessagingBenchmark {
	t.Helper()
	var mb v1alpha1.MessagingBenchmark
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &mb); err != nil {
		t.Fatal(err)
	}
	return &mb
}

// watchPhases records every phase a benchmark passes through until it finishes. The returned
// function stops the watcher, waits for it to end and returns what it saw: a watcher still
// appending to the slice the caller appends to was a data race (CI, TestRunSucceedsEndToEnd).
func watchPhases(ns, name string) func() []v1alpha1.Phase {
	var seen []v1alpha1.Phase // the watcher's alone until done is closed
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			var mb v1alpha1.MessagingBenchmark
			if env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &mb) == nil {
				if p := mb.Status.Phase; p != "" && (len(seen) == 0 || seen[len(seen)-1] != p) {
					seen = append(seen, p)
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return func() []v1alpha1.Phase {
		close(stop)
		<-done
		return slices.Clone(seen)
	}
}

func waitFinished(t *testing.T, ns, name string, timeout time.Duration) *v1alpha1.MessagingBenchmark {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		mb := get(t, ns, name)
		if mb.Status.Phase == v1alpha1.PhaseSucceeded || mb.Status.Phase == v1alpha1.PhaseFailed {
			return mb
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still %s after %s: %s", name, mb.Status.Phase, timeout, mb.Status.Message)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func condition(mb *v1alpha1.MessagingBenchmark, typ string) metav1.Condition {
	if c := meta.FindStatusCondition(mb.Status.Conditions, typ); c != nil {
		return *c
	}
	return metav1.Condition{Type: typ, Status: "Missing"}
}

func resultConfigMap(t *testing.T, ns string, mb *v1alpha1.MessagingBenchmark) *results.Result {
	t.Helper()
	var r results.Result
	gzippedJSON(t, ns, resources.NamesOf(mb).Result, "result.json.gz", &r)
	return &r
}

// gzippedJSON decodes the gzipped JSON document key of ConfigMap ns/name into v.
func gzippedJSON(t *testing.T, ns, name, key string, v any) {
	t.Helper()
	var cm corev1.ConfigMap
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &cm); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(cm.BinaryData[key]))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(zr)
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

// TestRunSucceedsEndToEnd drives one benchmark through every phase with two real workers.
func TestRunSucceedsEndToEnd(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns)
	startKubelet(t, ns, nil)
	phases := watchPhases(ns, "ok")
	createBenchmark(t, ns, "ok", quickWorkload)
	mb := waitFinished(t, ns, "ok", 60*time.Second)
	seen := phases()
	if len(seen) == 0 || seen[len(seen)-1] != mb.Status.Phase {
		seen = append(seen, mb.Status.Phase) // the watcher may stop before its last poll
	}
	if mb.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("phase %s: %s", mb.Status.Phase, mb.Status.Message)
	}
	want := []v1alpha1.Phase{v1alpha1.PhaseProvisioning, v1alpha1.PhaseStarting, v1alpha1.PhaseRunning, v1alpha1.PhaseCollecting, v1alpha1.PhaseSucceeded}
	if !inOrder(seen, want) {
		t.Errorf("phases seen %v, want %v in order", seen, want)
	}
	for typ, status := range map[string]metav1.ConditionStatus{
		v1alpha1.ConditionBrokerReady: "True", v1alpha1.ConditionGatewayReady: "True", v1alpha1.ConditionNetworkImpaired: "False",
		v1alpha1.ConditionWorkersReady: "True", v1alpha1.ConditionCompleted: "True", v1alpha1.ConditionResultsStored: "True",
	} {
		if c := condition(mb, typ); c.Status != status || c.ObservedGeneration != mb.Generation {
			t.Errorf("condition %s = %s (gen %d), want %s", typ, c.Status, c.ObservedGeneration, status)
		}
	}
	if mb.Status.ObservedGeneration != mb.Generation || mb.Status.StartTime == nil || mb.Status.CompletionTime == nil {
		t.Errorf("status bookkeeping: %+v", mb.Status)
	}
	s := mb.Status.Summary
	if s == nil || s.Sent < 390 || s.Sent > 410 || s.Received != s.Sent || s.Lost != 0 || s.LatencyP99Micros == nil || s.ReceivedPerSecond < 190 {
		t.Fatalf("summary %+v", s)
	}
	if mb.Status.Workers.Desired != 2 || mb.Status.Workers.Succeeded != 2 {
		t.Errorf("workers %+v", mb.Status.Workers)
	}
	r := resultConfigMap(t, ns, mb)
	if r.Sent != s.Sent || len(r.Workers) != 2 || r.Environment.Mode != "kubernetes" || r.Latency.EndToEnd.Count != r.Received {
		t.Errorf("result ConfigMap: sent %d workers %d env %+v", r.Sent, len(r.Workers), r.Environment)
	}
	// What the worker pods ran on and spoke, and the broker's version from its image's tag.
	if e := r.Environment; e.CPUModel == "" || e.Kernel == "" || e.CPUs == 0 || e.GoVersion == "" || e.MsgbenchCommit == "" ||
		e.Protocol != "MQTT 3.1.1" || e.Host != "" || !strings.HasPrefix(e.Broker, "mosquitto 2.") {
		t.Errorf("result environment %+v: want the workers' machine and build, MQTT 3.1.1, the broker's version, no host", e)
	}
	var minSkew, maxSkew int64 = 1 << 62, -1 << 62
	for _, w := range r.Workers {
		minSkew, maxSkew = min(minSkew, w.StartSkewMicros), max(maxSkew, w.StartSkewMicros)
	}
	if maxSkew-minSkew > 100_000 || maxSkew > 100_000 {
		t.Errorf("workers started %d µs apart (skews %+v), want within 100 ms", maxSkew-minSkew, r.Workers)
	}
	// Events at each transition. The recorder writes them asynchronously, so the last one may
	// reach the API server after the status that announced Succeeded (seen once in CI).
	reasons := map[string]bool{}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var events eventsv1.EventList
		if err := env.Client.List(context.Background(), &events, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, e := range events.Items {
			reasons[e.Reason] = true
		}
		if (reasons["Provisioning"] && reasons["Running"] && reasons["Succeeded"]) || time.Now().After(deadline) {
			break
		}
	}
	for _, p := range []string{"Provisioning", "Running", "Succeeded"} {
		if !reasons[p] {
			t.Errorf("no %s event within 10 s (events: %v)", p, reasons)
		}
	}
	// Cleanup OnCompletion: the run's objects go, the result ConfigMap stays.
	waitGone(t, &appsv1.Deployment{}, ns, resources.NamesOf(mb).Broker)
	waitGone(t, &batchv1.Job{}, ns, resources.NamesOf(mb).Workers)
	waitGone(t, &corev1.Secret{}, ns, resources.NamesOf(mb).Control)
}

func inOrder(seen, want []v1alpha1.Phase) bool {
	i := 0
	for _, p := range seen {
		if i < len(want) && p == want[i] {
			i++
		}
	}
	return i == len(want)
}

func waitGone(t *testing.T, obj client.Object, ns, name string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj)
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%T %s not cleaned up", obj, name)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestObjectivesApartFromThePhase: a run that measured correctly but missed an objective is
// Succeeded with ObjectivesMet False naming the objective and the value measured.
func TestObjectivesApartFromThePhase(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	startOperator(t, ns)
	startKubelet(t, ns, nil)
	createBenchmark(t, ns, "objectives", quickWorkload+"objectives: [\"lost == 0\", \"latency.endToEnd.p99 <= 1us\"]")
	mb := waitFinished(t, ns, "objectives", 60*time.Second)
	c := condition(mb, v1alpha1.ConditionObjectivesMet)
	if mb.Status.Phase != v1alpha1.PhaseSucceeded || c.Status != metav1.ConditionFalse || c.Reason != "ObjectivesMissed" ||
		!strings.Contains(c.Message, "latency.endToEnd.p99 <= 1us: measured") || strings.Contains(c.Message, "lost == 0") {
		t.Errorf("phase %s, ObjectivesMet %+v", mb.Status.Phase, c)
	}
	if r := resultConfigMap(t, ns, mb); r.ObjectivesMet == nil || *r.ObjectivesMet || len(r.Objectives) != 2 {
		t.Errorf("result objectives %+v met %v", r.Objectives, r.ObjectivesMet)
	}
}

func TestObjectStoreUpload(t *testing.T) {
	t.Parallel()
	s3, err := testenv.StartS3("msgbench-results")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s3.Stop() }()
	ns := newNamespace(t)
	startOperator(t, ns)
	startKubelet(t, ns, nil)
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s3", Namespace: ns},
		StringData: map[string]string{"accessKeyID": s3.AccessKeyID, "secretAccessKey": s3.SecretAccessKey}}
	if err := env.Client.Create(context.Background(), creds); err != nil {
		t.Fatal(err)
	}
	createBenchmark(t, ns, "stored", quickWorkload+fmt.Sprintf("results: {objectStore: {url: 's3://msgbench-results/runs', endpoint: '%s', secretRef: {name: s3}}}\ncleanup: Never", s3.Endpoint))
	mb := waitFinished(t, ns, "stored", 60*time.Second)
	if mb.Status.Phase != v1alpha1.PhaseSucceeded || condition(mb, v1alpha1.ConditionResultsStored).Status != "True" {
		t.Fatalf("phase %s, ResultsStored %+v", mb.Status.Phase, condition(mb, v1alpha1.ConditionResultsStored))
	}
	key := fmt.Sprintf("runs/%s/stored/%s", ns, mb.UID)
	if mb.Status.ResultsURL != "s3://msgbench-results/"+key+"/result.json" {
		t.Errorf("resultsURL %s", mb.Status.ResultsURL)
	}
	data, err := s3.Object(context.Background(), "msgbench-results", key+"/result.json")
	if err != nil {
		t.Fatal(err)
	}
	var r results.Result
	if err := json.Unmarshal(data, &r); err != nil || r.Sent != mb.Status.Summary.Sent {
		t.Errorf("uploaded result: %v, sent %d vs %d", err, r.Sent, mb.Status.Summary.Sent)
	}
	for i := 0; i < 2; i++ {
		if _, err := s3.Object(context.Background(), "msgbench-results", fmt.Sprintf("%s/workers/%d.json", key, i)); err != nil {
			t.Errorf("worker %d result not uploaded: %v", i, err)
		}
	}
	// cleanup: Never keeps the broker.
	var d appsv1.Deployment
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: resources.NamesOf(mb).Broker}, &d); err != nil {
		t.Errorf("cleanup Never deleted the broker: %v", err)
	}
}

func TestObjectStoreDownKeepsResultsInStatus(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	startOperator(t, ns)
	startKubelet(t, ns, nil)
	createBenchmark(t, ns, "nostore", quickWorkload+"results: {objectStore: {url: 's3://msgbench-results/runs', endpoint: 'http://127.0.0.1:1'}}")
	mb := waitFinished(t, ns, "nostore", 60*time.Second)
	c := condition(mb, v1alpha1.ConditionResultsStored)
	if mb.Status.Phase != v1alpha1.PhaseSucceeded || c.Status != "False" || c.Reason != "UploadFailed" || !strings.Contains(c.Message, "127.0.0.1:1") {
		t.Fatalf("phase %s, ResultsStored %+v", mb.Status.Phase, c)
	}
	if mb.Status.Summary == nil || mb.Status.Summary.Received == 0 || mb.Status.ResultsURL != "" {
		t.Errorf("summary %+v, resultsURL %q", mb.Status.Summary, mb.Status.ResultsURL)
	}
	if r := resultConfigMap(t, ns, mb); r.Received != mb.Status.Summary.Received {
		t.Errorf("result ConfigMap received %d", r.Received)
	}
}

func TestWorkerPodFailureFailsTheRun(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	startOperator(t, ns)
	startKubelet(t, ns, func(k *kubelet) { k.failWorker = 1 })
	createBenchmark(t, ns, "crash", strings.Replace(quickWorkload, "duration: 2s", "duration: 10s", 1))
	mb := waitFinished(t, ns, "crash", 60*time.Second)
	if mb.Status.Phase != v1alpha1.PhaseFailed || !strings.Contains(mb.Status.Message, "worker 1") || !strings.Contains(mb.Status.Message, "worker ran out of memory") {
		t.Errorf("phase %s message %q", mb.Status.Phase, mb.Status.Message)
	}
	if c := condition(mb, v1alpha1.ConditionCompleted); c.Status != "False" || c.Reason != "Failed" {
		t.Errorf("Completed %+v", c)
	}
}

// TestWorkerDeletedMidRun: a worker pod deleted while the load runs (and still terminating)
// fails the run at once, naming the worker and saying its share is gone.
func TestWorkerDeletedMidRun(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	startOperator(t, ns)
	startKubelet(t, ns, func(k *kubelet) { k.deleteWorker = 1 })
	createBenchmark(t, ns, "deleted", strings.Replace(quickWorkload, "duration: 2s", "duration: 20s", 1))
	mb := waitFinished(t, ns, "deleted", 30*time.Second)
	if msg := mb.Status.Message; mb.Status.Phase != v1alpha1.PhaseFailed || !strings.Contains(msg, "worker 1") ||
		!strings.Contains(msg, "share of the measurement is gone") {
		t.Errorf("phase %s message %q", mb.Status.Phase, msg)
	}
}

// TestWorkerWaitsForAnUnreachableBroker: a worker whose clients cannot reach the broker yet (its
// Service not routed, DNS lagging on a busy node) keeps trying as long as the run allows, and the
// status says which worker waits for what; spec.timeout ends the wait.
//
// Not parallel: the status must say so within the 8 s spec.timeout, which a loaded machine
// running the parallel tests did not always leave.
func TestWorkerWaitsForAnUnreachableBroker(t *testing.T) {
	ns := newNamespace(t)
	startOperator(t, ns)
	startKubelet(t, ns, func(k *kubelet) { k.workerBroker = "127.0.0.1:1" })
	createBenchmark(t, ns, "unreachable", quickWorkload+"timeout: 8s")
	var seen string
	deadline := time.Now().Add(8 * time.Second)
	for time.Now().Before(deadline) && seen == "" {
		var mb v1alpha1.MessagingBenchmark
		if env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "unreachable"}, &mb) == nil &&
			strings.Contains(mb.Status.Message, "cannot reach 127.0.0.1:1 yet") {
			seen = mb.Status.Message
		}
		time.Sleep(50 * time.Millisecond)
	}
	if seen == "" {
		t.Error("the status never said that the worker waits for its broker")
	}
	mb := waitFinished(t, ns, "unreachable", 30*time.Second)
	if msg := mb.Status.Message; mb.Status.Phase != v1alpha1.PhaseFailed || !strings.Contains(msg, "timed out after 8s") {
		t.Errorf("phase %s message %q; want Failed by spec.timeout", mb.Status.Phase, msg)
	}
}

// TestWorkersStartOnceTheBrokerAnswers: a broker whose pods are available before its Service
// routes (kube-proxy and DNS lag on a busy node) gets no workers until it answers through the
// Service; one the operator never reaches (a NetworkPolicy) gets them after ServiceGrace.
// envtest routes no Service, so the probe stands in for the operator pod's dial: it fails like an
// unrouted ClusterIP until the test routes it.
func TestWorkersStartOnceTheBrokerAnswers(t *testing.T) {
	t.Parallel()
	unrouted := &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}
	t.Run("waits for the Service", func(t *testing.T) {
		t.Parallel()
		ns := newNamespace(t)
		var routed atomic.Bool
		var dialled sync.Map
		startOperatorWith(t, ns, env.Config, func(o *controllers.Options) {
			o.ProbeService = func(_ context.Context, addr string) error {
				dialled.Store(addr, true)
				if !routed.Load() {
					return unrouted
				}
				return nil
			}
		})
		startKubelet(t, ns, nil)
		createBenchmark(t, ns, "svc", quickWorkload)
		deadline := time.Now().Add(10 * time.Second)
		for condition(get(t, ns, "svc"), v1alpha1.ConditionBrokerReady).Reason != "NotAnswering" {
			if time.Now().After(deadline) {
				t.Fatalf("BrokerReady never NotAnswering: %+v", get(t, ns, "svc").Status)
			}
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(2 * time.Second) // ten polls: still no workers
		mb := get(t, ns, "svc")
		addr := "svc-broker." + ns + ".svc:1883"
		if _, ok := dialled.Load(addr); !ok || mb.Status.Phase != v1alpha1.PhaseProvisioning ||
			!strings.Contains(mb.Status.Message, "does not answer through its Service "+addr) {
			t.Errorf("phase %s message %q; want Provisioning, waiting for %s", mb.Status.Phase, mb.Status.Message, addr)
		}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: resources.NamesOf(mb).Workers}, &batchv1.Job{}); !apierrors.IsNotFound(err) {
			t.Errorf("the workers' Job exists before the broker answered (get: %v)", err)
		}
		routed.Store(true)
		mb = waitFinished(t, ns, "svc", 60*time.Second)
		if c := condition(mb, v1alpha1.ConditionBrokerReady); mb.Status.Phase != v1alpha1.PhaseSucceeded || c.Reason != "Answering" {
			t.Errorf("phase %s (%s), BrokerReady %+v", mb.Status.Phase, mb.Status.Message, c)
		}
	})
	t.Run("goes on after the grace", func(t *testing.T) {
		t.Parallel()
		ns := newNamespace(t)
		startOperatorWith(t, ns, env.Config, func(o *controllers.Options) {
			o.ProbeService = func(context.Context, string) error { return unrouted }
			o.ServiceGrace = time.Second
		})
		startKubelet(t, ns, nil)
		createBenchmark(t, ns, "blocked", quickWorkload)
		mb := waitFinished(t, ns, "blocked", 60*time.Second)
		if c := condition(mb, v1alpha1.ConditionBrokerReady); mb.Status.Phase != v1alpha1.PhaseSucceeded || c.Reason != "AvailableNotAnswering" ||
			!strings.Contains(c.Message, "the workers start all the same") {
			t.Errorf("phase %s (%s), BrokerReady %+v", mb.Status.Phase, mb.Status.Message, c)
		}
	})
}

// TestWorkerThatCannotConnectFailsAtOnce: a broker that answers but refuses the clients (here it
// closes every connection at once) will not change its mind: the worker stays up, not ready, to
// tell why, and the run fails with that reason instead of waiting for spec.timeout.
func TestWorkerThatCannotConnectFailsAtOnce(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	ns := newNamespace(t)
	startOperator(t, ns)
	startKubelet(t, ns, func(k *kubelet) { k.workerBroker = ln.Addr().String() })
	createBenchmark(t, ns, "refused", quickWorkload)
	mb := waitFinished(t, ns, "refused", 30*time.Second)
	if msg := mb.Status.Message; mb.Status.Phase != v1alpha1.PhaseFailed || !strings.Contains(msg, "failed before the start") ||
		!strings.Contains(msg, "broker connection lost") {
		t.Errorf("phase %s message %q", mb.Status.Phase, msg)
	}
}

func TestBrokerNeverReadyTimesOut(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	startOperator(t, ns)
	startKubelet(t, ns, func(k *kubelet) { k.brokerNeverReady = "ImagePullBackOff" })
	createBenchmark(t, ns, "stuck", quickWorkload+"timeout: 4s")
	mb := waitFinished(t, ns, "stuck", 30*time.Second)
	msg := mb.Status.Message
	if mb.Status.Phase != v1alpha1.PhaseFailed || !strings.Contains(msg, "timed out after 4s in phase Provisioning") ||
		!strings.Contains(msg, "ImagePullBackOff") || !strings.Contains(msg, "0/1 replicas available") {
		t.Errorf("phase %s message %q", mb.Status.Phase, msg)
	}
	if c := condition(mb, v1alpha1.ConditionBrokerReady); c.Status != "False" {
		t.Errorf("BrokerReady %+v", c)
	}
}

func TestExternalBroker(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	startOperator(t, ns)
	startKubelet(t, ns, nil)
	createBenchmark(t, ns, "unreachable", quickWorkload+"broker: {type: external, external: {address: '127.0.0.1:1'}}")
	createBenchmark(t, ns, "reachable", quickWorkload+"broker: {type: external, external: {address: '"+broker.Addr+"'}}")
	mb := waitFinished(t, ns, "unreachable", 30*time.Second)
	if mb.Status.Phase != v1alpha1.PhaseFailed || !strings.Contains(mb.Status.Message, "external broker 127.0.0.1:1 is not reachable") {
		t.Errorf("unreachable: phase %s message %q", mb.Status.Phase, mb.Status.Message)
	}
	mb = waitFinished(t, ns, "reachable", 60*time.Second)
	if mb.Status.Phase != v1alpha1.PhaseSucceeded || mb.Status.Summary.Lost != 0 || condition(mb, v1alpha1.ConditionBrokerReady).Reason != "Reachable" {
		t.Errorf("reachable: phase %s message %q summary %+v", mb.Status.Phase, mb.Status.Message, mb.Status.Summary)
	}
	var d appsv1.DeploymentList
	if err := env.Client.List(context.Background(), &d, client.InNamespace(ns)); err != nil || len(d.Items) != 0 {
		t.Errorf("an external broker needs no Deployment, found %d", len(d.Items))
	}
}

// TestOperatorRestartMidRun stops the operator while the workers run and starts a new one: it
// must collect the complete results from the workers, which kept them.
func TestOperatorRestartMidRun(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	stop := startOperator(t, ns)
	startKubelet(t, ns, nil)
	createBenchmark(t, ns, "restart", strings.Replace(quickWorkload, "duration: 2s", "duration: 4s", 1))
	deadline := time.Now().Add(30 * time.Second)
	for get(t, ns, "restart").Status.Phase != v1alpha1.PhaseRunning {
		if time.Now().After(deadline) {
			t.Fatal("never reached Running")
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	// The run ends while no operator watches: every worker holds its result, uncollected.
	waitWorkersDone(t, ns, "restart", 2, 30*time.Second)
	startOperator(t, ns)
	mb := waitFinished(t, ns, "restart", 60*time.Second)
	if mb.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("phase %s: %s", mb.Status.Phase, mb.Status.Message)
	}
	if s := mb.Status.Summary; s.Sent < 790 || s.Received != s.Sent || s.Lost != 0 {
		t.Errorf("after the restart: summary %+v, want 800 sent and received", s)
	}
}

// waitWorkersDone waits until n workers of benchmark name say, through their control endpoint,
// that their run is done.
func waitWorkersDone(t *testing.T, ns, name string, n int, timeout time.Duration) {
	t.Helper()
	mb := get(t, ns, name)
	var secret corev1.Secret
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: resources.NamesOf(mb).Control}, &secret); err != nil {
		t.Fatal(err)
	}
	c := &control.Client{Token: string(secret.Data["token"])}
	states := map[string]string{}
	for deadline := time.Now().Add(timeout); ; time.Sleep(50 * time.Millisecond) {
		var pods corev1.PodList
		if err := env.Client.List(context.Background(), &pods, client.InNamespace(ns), client.MatchingLabels(resources.Selector(mb, v1alpha1.ComponentWorker))); err != nil {
			t.Fatal(err)
		}
		done := 0
		for _, p := range pods.Items {
			st, _, err := c.Status(context.Background(), net.JoinHostPort(p.Status.PodIP, strconv.Itoa(int(controlPort))))
			if err != nil {
				states[p.Name] = err.Error()
				continue
			}
			states[p.Name] = st.State
			if st.State == control.StateDone {
				done++
			}
		}
		if done == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d workers done after %s: %v", done, n, timeout, states)
		}
	}
}

// TestFiftyBenchmarksAtOnce creates 50 benchmarks together: all must run and succeed.
func TestFiftyBenchmarksAtOnce(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short")
	}
	ns := newNamespace(t)
	startOperator(t, ns)
	startKubelet(t, ns, nil)
	const n = 50
	for i := 0; i < n; i++ {
		// Each benchmark would have its own broker in a cluster; here they share the suite's
		// Mosquitto, so each gets its own topics.
		createBenchmark(t, ns, fmt.Sprintf("many-%d", i), fmt.Sprintf("protocol: mqtt\nqos: 0\nworkload: {publishers: 1, subscribers: 1, payloadBytes: 32, rate: 20, duration: 3s, warmup: 0s, topicPrefix: many-%d-}", i))
	}
	for i := 0; i < n; i++ {
		mb := waitFinished(t, ns, fmt.Sprintf("many-%d", i), 120*time.Second)
		if mb.Status.Phase != v1alpha1.PhaseSucceeded || mb.Status.StartTime == nil || mb.Status.Summary.Received == 0 {
			t.Errorf("many-%d: %s %q", i, mb.Status.Phase, mb.Status.Message)
		}
	}
}

var _ = controllers.FieldOwner

// TestRenderedObjectsApply applies what `msgbench render` prints for every sample to the real
// API server (server-side apply, dry run).
func TestRenderedObjectsApply(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	err := filepath.WalkDir(filepath.Join(testenv.RepoRoot(), "config", "samples"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		if data, err := os.ReadFile(path); err == nil && manifest.Kind(data) == "MessagingBenchmarkSuite" {
			return nil // the studies' suites are not MessagingBenchmarks
		}
		mb, err := manifest.ReadFile(path)
		if err != nil {
			return err
		}
		if mb.Spec.Broker.Type == v1alpha1.BrokerKafka {
			return nil // Strimzi objects are checked by the Kafka tests
		}
		mb.Namespace, mb.UID = ns, "7c6b3c1e-1111-4111-8111-000000000001"
		objs, err := resources.Render(mb, resources.DefaultConfig())
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return nil
		}
		for _, o := range objs {
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
			if err != nil {
				return err
			}
			u := &unstructured.Unstructured{Object: m}
			u.SetOwnerReferences(nil) // the owner does not exist in a dry run
			if err := env.Client.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("test"), client.DryRunAll); err != nil {
				t.Errorf("%s: %s %s refused: %v", filepath.Base(path), u.GetKind(), u.GetName(), err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestQUICWithoutTLSBlockGetsACertificate: HTTP/3 and MQTT over QUIC always encrypt, so the
// operator makes a certificate for their gateway even when the spec has no tls block, and goes on. On the
// real node such specs once panicked the reconciler (spec.tls dereferenced while nil).
func TestQUICWithoutTLSBlockGetsACertificate(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	startOperator(t, ns)
	for name, spec := range map[string]string{
		"h3":   "protocol: http\nhttp: {version: \"3\"}\nqos: 1\nworkload: {publishers: 1, subscribers: 1, topics: 1, duration: 2s}",
		"mqtq": "protocol: mqtt-quic\nqos: 1\nworkload: {publishers: 1, subscribers: 1, topics: 1, duration: 2s}",
	} {
		createBenchmark(t, ns, name, spec)
		names := resources.NamesOf(get(t, ns, name))
		deadline := time.Now().Add(20 * time.Second)
		for {
			// Without a kubelet the run then waits for its broker, past the certificate step.
			var secret corev1.Secret
			errS := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: names.TLS}, &secret)
			mb := get(t, ns, name)
			if errS == nil && len(secret.Data[corev1.TLSCertKey]) > 0 && strings.Contains(mb.Status.Message, "waiting for the broker") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: TLS Secret %v; after 20 s phase %q: %s", name, errS, mb.Status.Phase, mb.Status.Message)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
