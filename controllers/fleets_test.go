package controllers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/netem"
)

// A fleet on three protocols where the MQTT-SN sensors sit behind a link of their own: the
// operator runs a gateway per protocol (each Deployment and Service its own), the sensors in a
// worker Job of their own and the meters and backend in the shared one, each worker running
// only its groups (--groups) against its groups' gateways (--endpoint); the sensors' link is a
// NetworkChaos per direction that selects the sensors' pod alone and their gateway's pods; the
// run starts the two workers together and merges what each counted.
func TestFleetGroupOnItsOwnLink(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	startOperatorWith(t, ns, env.Config, confirmWithin30s)
	startKubelet(t, ns, nil)
	chaos := startFakeChaosMesh(t, ns, "injected.yaml")
	createBenchmark(t, ns, "fleet-links", `
protocol: mqtt
qos: 1
topics:
- {name: readings, pattern: "site/sensors/{index}", count: 4}
- {name: meters, pattern: "site/meters/{index}", count: 3}
groups:
- name: sensors
  count: 4
  protocol: mqtt-sn
  network: {profile: lte}
  publish: {topics: readings, payloadBytes: 32, interval: 250ms}
- name: meters
  count: 3
  protocol: http
  publish: {topics: meters, payloadBytes: 64, interval: 300ms}
- name: backend
  count: 1
  subscribe: {filter: "site/#"}
workload: {warmup: 1s, duration: 3s}`)
	// The run's Jobs, gateway Deployments and Services, read while it runs: the cleanup deletes
	// them once it finished (reading them afterwards raced it: under load one Job was gone).
	ctx := context.Background()
	gatewayNames := []string{"fleet-links-gateway-mqtt-sn", "fleet-links-gateway-http"}
	var jobs batchv1.JobList
	var deps appsv1.DeploymentList
	svcs := map[string]corev1.Service{}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_ = env.Client.List(ctx, &jobs, client.InNamespace(ns))
		_ = env.Client.List(ctx, &deps, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelComponent: v1alpha1.ComponentGateway})
		for _, name := range gatewayNames {
			var svc corev1.Service
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &svc); err == nil {
				svcs[name] = svc
			}
		}
		if len(jobs.Items) == 2 && len(deps.Items) == 2 && len(svcs) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s: %d Jobs, %d gateway Deployments, Services %v", len(jobs.Items), len(deps.Items), svcs)
		}
	}
	mb := waitFinished(t, ns, "fleet-links", 90*time.Second)
	if mb.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("phase %s: %s", mb.Status.Phase, mb.Status.Message)
	}
	if mb.Status.Workers.Desired != 2 || mb.Status.Workers.Succeeded != 2 {
		t.Errorf("workers %+v, want 2 desired and succeeded", mb.Status.Workers)
	}

	// Two worker Jobs, each running its groups; the sensors' pods labelled with their group.
	want := map[string]string{"fleet-links-workers": "meters,backend", "fleet-links-workers-sensors": "sensors"}
	for _, j := range jobs.Items {
		args := strings.Join(j.Spec.Template.Spec.Containers[0].Args, " ") + " "
		g, ok := want[j.Name]
		if !ok || !strings.Contains(args, "--groups "+g+" ") {
			t.Errorf("Job %s: %s", j.Name, args)
		}
		if own := j.Spec.Template.Labels[v1alpha1.LabelGroup]; (j.Name == "fleet-links-workers-sensors") != (own == "sensors") {
			t.Errorf("Job %s: pods labelled group %q", j.Name, own)
		}
		delete(want, j.Name)
	}
	if len(want) > 0 {
		t.Errorf("no Job %v", want)
	}

	// A gateway per protocol, each Service selecting its own Deployment's pods only.
	templates := map[string]labels.Set{}
	for _, d := range deps.Items {
		templates[d.Name] = d.Spec.Template.Labels
	}
	for _, name := range gatewayNames {
		svc := svcs[name]
		for d, l := range templates {
			if labels.SelectorFromSet(svc.Spec.Selector).Matches(l) != (d == name) {
				t.Errorf("Service %s selects the pods of %s: %v", name, d, svc.Spec.Selector)
			}
		}
	}
	if len(templates) != 2 {
		t.Errorf("gateway Deployments %v, want mqtt-sn and http", templates)
	}

	// The sensors' link: up and down, between the sensors' pod alone and their gateway's pods.
	chaos.mu.Lock()
	seen := chaos.objectsSeen
	chaos.mu.Unlock()
	if seen != 2 {
		t.Errorf("%d NetworkChaos objects, want the sensors' up and down", seen)
	}
	var pods corev1.PodList
	if err := env.Client.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelComponent: v1alpha1.ComponentWorker}); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 2 {
		t.Fatalf("%d worker pods", len(pods.Items))
	}
	// Cleanup deletes them, found by their labels.
	for _, dir := range []string{"up", "down"} {
		name := "fleet-links-net-g-sensors-" + dir
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			o := &unstructured.Unstructured{}
			o.SetGroupVersionKind(netem.NetworkChaosGVK)
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, o); apierrors.IsNotFound(err) {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("NetworkChaos %s still exists after the run", name)
				break
			}
		}
	}
	for _, c := range chaos.objects() {
		workers, server := "selector", "target"
		if strings.HasSuffix(c.GetName(), "-down") {
			workers, server = server, workers
		}
		w := selectorOf(t, c, workers)
		for _, p := range pods.Items {
			if w.Matches(labels.Set(p.Labels)) != (p.Labels[v1alpha1.LabelGroup] == "sensors") {
				t.Errorf("%s: its worker side selects pod %s (labels %v)", c.GetName(), p.Name, p.Labels)
			}
		}
		s := selectorOf(t, c, server)
		for d, l := range templates {
			if s.Matches(l) != (d == "fleet-links-gateway-mqtt-sn") {
				t.Errorf("%s: its server side selects the pods of %s", c.GetName(), d)
			}
		}
	}

	// Each worker counted what it saw; merged, every pair received what it expected.
	res := resultConfigMap(t, ns, mb)
	if len(res.Workers) != 2 {
		t.Errorf("%d worker results, want 2", len(res.Workers))
	}
	pairs := map[string]bool{}
	for _, p := range res.Pairs {
		pairs[p.From+">"+p.To] = true
		if p.Expected == 0 || p.Received != p.Expected {
			t.Errorf("pair %s → %s: received %d of %d expected", p.From, p.To, p.Received, p.Expected)
		}
		if p.From == "sensors" && p.Clock == nil {
			t.Errorf("pair %s → %s ran in two workers but states no clock correction", p.From, p.To)
		}
	}
	if !pairs["sensors>backend"] || !pairs["meters>backend"] {
		t.Errorf("pairs %v, want sensors and meters to backend", pairs)
	}
}

// selectorOf is the label selector of a NetworkChaos's side ("selector": the pods whose egress
// it shapes, "target": the pods toward which), within the namespace.
func selectorOf(t *testing.T, c *unstructured.Unstructured, side string) labels.Selector {
	t.Helper()
	path := []string{"spec", "selector", "labelSelectors"}
	if side == "target" {
		path = []string{"spec", "target", "selector", "labelSelectors"}
	}
	m, ok, err := unstructured.NestedStringMap(c.Object, path...)
	if !ok || err != nil || len(m) == 0 {
		t.Fatalf("%s: no %s label selector (%v)", c.GetName(), side, err)
	}
	return labels.SelectorFromSet(m)
}
