//go:build e2e

package e2e

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// TestSuiteOnTheNode runs one MessagingBenchmarkSuite on the real node: 2 points × 2
// repetitions, one run at a time (never two runs' pods measuring at once), statistics and the
// verdict in its status, suite.json in its ConfigMap and in the object store.
func TestSuiteOnTheNode(t *testing.T) {
	alongside(t)
	ctx := context.Background()
	doc := `apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmarkSuite
metadata:
  name: e2e-suite
  namespace: ` + ns + `
spec:
  template:
    protocol: mqtt
    workload: {publishers: 2, subscribers: 2, topics: 2, payloadBytes: 64, rate: 200, duration: 3s, warmup: 1s}
    results:
      objectStore: {url: "s3://` + cfg["E2E_S3_BUCKET"] + `/suites", endpoint: "` + cfg["E2E_S3_CLUSTER_ENDPOINT"] + `", secretRef: {name: s3-credentials}}
  matrix:
    axes:
    - field: qos
      values: [0, 1]
  repetitions: 2
  objectives: ["lost == 0", "latency.endToEnd.p99 <= 2s"]
`
	createYAML(t, doc)
	start := time.Now()
	s, _, most := waitSuite(t, "e2e-suite", 10*time.Minute)
	record("%-28s %s in %.0fs: runs %s, verdict %s", "suite e2e-suite", s.Status.Phase, time.Since(start).Seconds(), s.Status.Progress, s.Status.Verdict)
	defer func() { _ = c.Delete(ctx, &s) }()
	if s.Status.Phase != v1alpha1.SuiteSucceeded || s.Status.Runs.Succeeded != 4 || s.Status.Verdict != "Passed" {
		var runs v1alpha1.MessagingBenchmarkList
		_ = c.List(ctx, &runs, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelSuite: "e2e-suite"})
		for i := range runs.Items {
			dump(t, &runs.Items[i])
		}
		t.Fatalf("suite %s, runs %+v, verdict %s: %s", s.Status.Phase, s.Status.Runs, s.Status.Verdict, s.Status.Message)
	}
	if most > 1 {
		t.Errorf("%d runs were unfinished at once; concurrency 1 allows one", most)
	}
	for _, p := range s.Status.Points {
		if p.Succeeded != 2 || p.ReceivedPerSecond == nil || p.ReceivedPerSecond.CI95 == "" || p.ObjectivesMet == nil || !*p.ObjectivesMet {
			t.Errorf("point %+v", p)
		}
	}
	if c := meta.FindStatusCondition(s.Status.Conditions, v1alpha1.ConditionResultsStored); c == nil || c.Status != metav1.ConditionTrue || !strings.HasPrefix(s.Status.ResultsURL, "s3://") {
		t.Errorf("ResultsStored %+v, resultsURL %q", c, s.Status.ResultsURL)
	}
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "e2e-suite-suite"}, &cm); err != nil || len(cm.BinaryData["suite.json.gz"]) == 0 {
		t.Errorf("suite ConfigMap: %v", err)
	}
	// The report beside suite.json: the suite's figure (QoS as bars: no numeric axis) and its points.
	if u, err := url.Parse(s.Status.ResultsURL); err == nil {
		page := string(getObject(t, u.Host, strings.TrimPrefix(strings.TrimSuffix(u.Path, "suite.json"), "/")+"report.html"))
		for _, want := range []string{`id="receivedPerSecond-by-QoS"`, `class="study"`, "QoS 0", "QoS 1", "4 succeeded, 0 failed"} {
			if !strings.Contains(page, want) {
				t.Errorf("the suite's report.html lacks %s", want)
			}
		}
	}
}

// TestSearchOnTheNode runs a capacity search on the real node against a threshold known
// exactly: the objective `throughput.sentPerSecond <= 330` holds at workload.rate 300 and fails
// at 400, so from 200 (×2, 40 % precision) the search runs 200, 400, 300 and a confirmation of
// 300, one child at a time, and ends Found at 300 with the bracket 300–400 in its status and
// suite.json.
func TestSearchOnTheNode(t *testing.T) {
	ctx := context.Background()
	doc := `apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmarkSuite
metadata:
  name: e2e-search
  namespace: ` + ns + `
spec:
  template:
    protocol: mqtt
    workload: {payloadBytes: 64, rate: 100, duration: 3s, warmup: 1s}
  search:
    field: workload.rate
    min: 50
    max: 1000
    start: 200
    precisionPercent: 40
  objectives: ["throughput.sentPerSecond <= 330"]
`
	createYAML(t, doc)
	start := time.Now()
	s, runs, most := waitSuite(t, "e2e-search", 8*time.Minute)
	defer func() { _ = c.Delete(ctx, &s) }()
	sr := s.Status.Search
	if sr != nil && sr.Capacity != nil {
		record("%-28s %s in %.0fs: %s, capacity %d (%d runs)", "search e2e-search", s.Status.Phase, time.Since(start).Seconds(), sr.Outcome, *sr.Capacity, len(runs.Items))
	}
	if s.Status.Phase != v1alpha1.SuiteSucceeded || sr == nil || sr.Outcome != v1alpha1.SearchFound || sr.Capacity == nil || *sr.Capacity != 300 ||
		sr.FirstFail == nil || *sr.FirstFail != 400 || len(runs.Items) != 4 || s.Status.Verdict != "Passed" {
		for i := range runs.Items {
			dump(t, &runs.Items[i])
		}
		t.Fatalf("search %s, status.search %+v, %d runs, verdict %s: %s", s.Status.Phase, sr, len(runs.Items), s.Status.Verdict, s.Status.Message)
	}
	if most > 1 {
		t.Errorf("%d runs were unfinished at once; a search runs one at a time", most)
	}
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "e2e-search-suite"}, &cm); err != nil || len(cm.BinaryData["suite.json.gz"]) == 0 {
		t.Errorf("suite ConfigMap: %v", err)
	}
}

// waitSuite waits up to timeout for suite name to finish: the suite, its runs, and the most runs
// that were unfinished at once.
func waitSuite(t *testing.T, name string, timeout time.Duration) (v1alpha1.MessagingBenchmarkSuite, v1alpha1.MessagingBenchmarkList, int) {
	t.Helper()
	ctx := context.Background()
	most := 0
	var s v1alpha1.MessagingBenchmarkSuite
	var runs v1alpha1.MessagingBenchmarkList
	for deadline := time.Now().Add(timeout); ; time.Sleep(500 * time.Millisecond) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
			t.Fatal(err)
		}
		if err := c.List(ctx, &runs, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelSuite: name}); err == nil {
			n := 0
			for _, r := range runs.Items {
				if r.Status.Phase != v1alpha1.PhaseSucceeded && r.Status.Phase != v1alpha1.PhaseFailed {
					n++
				}
			}
			most = max(most, n)
		}
		if s.Status.Phase == v1alpha1.SuiteSucceeded || s.Status.Phase == v1alpha1.SuiteFailed {
			return s, runs, most
		}
		if time.Now().After(deadline) {
			t.Fatalf("suite %s still %s (%s) after %s: %s", name, s.Status.Phase, s.Status.Progress, timeout, s.Status.Message)
		}
	}
}

// createYAML creates the object doc describes.
func createYAML(t *testing.T, doc string) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
}
