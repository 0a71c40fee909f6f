//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// checkCost: a broker msgbench runs, and a single gateway, report their CPU and memory over the
// window in the status (the usage sidecar and the gateway's /usage, read by the workers). Their
// CPU is counted in ns (each process's CPU clock) or µs (a visible cgroup's usage_usec), and the
// status rounds it to whole ms: any run that serves a connection shows at least 1 ms. Before
// #31 it was counted in 10 ms clock ticks, and a light TLS run (mqtts-device-tls) read 0 ms.
func checkCost(t *testing.T, mb *v1alpha1.MessagingBenchmark) {
	t.Helper()
	const resolution = "counted at 1 ns (process CPU clock) or 1 µs (cgroup usage_usec), rounded to ms in the status"
	s := mb.Status.Summary
	if mb.Spec.Broker.Type.MQTTBroker() &&
		(ptr.Deref(s.BrokerCPUMillis, 0) <= 0 || ptr.Deref(s.BrokerMaxRSSBytes, 0) < 1<<20) {
		t.Errorf("broker cost not in the status: cpu %v ms (%s), rss %v B", ptr.Deref(s.BrokerCPUMillis, -1), resolution, ptr.Deref(s.BrokerMaxRSSBytes, -1))
	}
	if mb.Spec.GatewayMode() != "" && mb.Spec.Gateway.Replicas == 1 &&
		(ptr.Deref(s.GatewayCPUMillis, 0) <= 0 || ptr.Deref(s.GatewayMaxRSSBytes, 0) < 1<<20) {
		t.Errorf("gateway cost not in the status: cpu %v ms (%s), rss %v B", ptr.Deref(s.GatewayCPUMillis, -1), resolution, ptr.Deref(s.GatewayMaxRSSBytes, -1))
	}
}

// TestMetricsOnTheNode scrapes, while a benchmark runs on the real node, a worker's live
// metrics, the broker's usage sidecar and the operator's authenticated /metrics (with a
// ServiceAccount token bound to the chart's metrics-reader role).
func TestMetricsOnTheNode(t *testing.T) {
	alongside(t)
	ctx := context.Background()
	mb := load(t, sample{file: "mqtt-qos1.yaml", name: "e2e-metrics", edit: func(spec map[string]any) {
		w := spec["workload"].(map[string]any)
		w["duration"], w["rate"] = "20s", 200
	}})

	got := map[string]bool{}
	scrape := func(what, url string, want ...string) {
		t.Helper()
		body, err := get(ctx, url, "")
		if err != nil {
			t.Logf("%s: %v", what, err)
			return
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Logf("%s: no %s in\n%.2000s", what, w, body)
				return
			}
		}
		got[what] = true
	}
	final, _ := runToEnd(t, mb, 5*time.Minute, func(p v1alpha1.Phase) {
		if p != v1alpha1.PhaseRunning {
			return
		}
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline) && (!got["worker"] || !got["broker"]); time.Sleep(time.Second) {
			var pods corev1.PodList
			_ = c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelBenchmark: mb.Name})
			for _, pod := range pods.Items {
				if pod.Status.PodIP == "" {
					continue
				}
				url := fmt.Sprintf("http://%s:9464/metrics", pod.Status.PodIP)
				switch pod.Labels[v1alpha1.LabelComponent] {
				case v1alpha1.ComponentWorker:
					scrape("worker", url, `msgbench_messages_sent_total{benchmark="e2e-metrics"`, "msgbench_end_to_end_latency_seconds_bucket")
				case v1alpha1.ComponentBroker:
					scrape("broker", url, `msgbench_component_cpu_seconds_total{benchmark="e2e-metrics",component="broker"`)
				}
			}
		}
	})
	defer deleteBenchmark(t, final)
	if final.Status.Phase != v1alpha1.PhaseSucceeded {
		dump(t, final)
		t.Fatalf("ended %s: %s", final.Status.Phase, final.Status.Message)
	}
	checkCost(t, final)
	for _, what := range []string{"worker", "broker"} {
		if !got[what] {
			t.Errorf("the %s's metrics were not scraped while the benchmark ran", what)
		}
	}

	// The operator's metrics need a token the API server authenticates and authorizes.
	rel := cfg["E2E_RELEASE_NAMESPACE"]
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "e2e-scraper", Namespace: ns}}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "e2e-scraper"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "msgbench-operator-metrics-reader"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa.Name, Namespace: ns}}}
	for _, o := range []client.Object{sa, crb} {
		if err := c.Create(ctx, o); err != nil && !strings.Contains(err.Error(), "already exists") {
			t.Fatal(err)
		}
		defer func() { _ = c.Delete(ctx, o) }()
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}
	if err := c.SubResource("token").Create(ctx, sa, tr); err != nil {
		t.Fatal(err)
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(rel), client.MatchingLabels{"app.kubernetes.io/name": "msgbench-operator"}); err != nil {
		t.Fatal(err)
	}
	ip := ""
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			ip = p.Status.PodIP
		}
	}
	if ip == "" {
		t.Fatalf("no running operator pod among %d", len(pods.Items))
	}
	url := fmt.Sprintf("https://%s:8443/metrics", ip)
	var body string
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) { // RBAC takes a moment
		if body, err = get(ctx, url, tr.Status.Token); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || !strings.Contains(body, "msgbench_") || !strings.Contains(body, "controller_runtime_reconcile_total") {
		t.Errorf("operator metrics at %s: %v\n%.1000s", url, err, body)
	}
	if _, err := get(ctx, url, ""); err == nil {
		t.Errorf("operator metrics at %s answered without a token", url)
	}
}

func get(ctx context.Context, url, token string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // the operator's self-signed certificate
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("%s: %s", url, resp.Status)
	}
	return string(b), err
}
