package resources_test

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/internal/testenv"
)

// renderMixed renders the mixed fleet sample with the --set overrides given.
func renderMixed(t *testing.T, set ...string) (jobs []*batchv1.Job, gateways []*appsv1.Deployment, services map[string]*corev1.Service, chaos []*unstructured.Unstructured) {
	t.Helper()
	mb, err := manifest.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "samples", "fleets", "mixed-fleet.yaml"), set...)
	if err != nil {
		t.Fatal(err)
	}
	mb.Namespace = "bench"
	objs, err := resources.Render(mb, resources.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	services = map[string]*corev1.Service{}
	for _, o := range objs {
		switch o := o.(type) {
		case *batchv1.Job:
			jobs = append(jobs, o)
		case *appsv1.Deployment:
			if o.Labels[v1alpha1.LabelComponent] == v1alpha1.ComponentGateway {
				gateways = append(gateways, o)
			}
		case *corev1.Service:
			services[o.Name] = o
		case *unstructured.Unstructured:
			chaos = append(chaos, o)
		}
	}
	return jobs, gateways, services, chaos
}

// argsOf is a Job's loadgen flags: each flag's values in order.
func argsOf(j *batchv1.Job) map[string][]string {
	args := j.Spec.Template.Spec.Containers[0].Args
	out := map[string][]string{}
	for i := 1; i+1 < len(args); i += 2 {
		out[args[i]] = append(out[args[i]], args[i+1])
	}
	return out
}

// The mixed fleet on Kubernetes: a gateway per protocol, each selecting its own pods; a Job per
// group behind its own link, its pods labelled with the group, running that group alone against
// its own gateway or the broker; the dashboards (no link of their own) in the shared Job on the
// broker's WebSocket listener; and each link's NetworkChaos between its group's pods and what
// they reach.
func TestMixedFleetObjects(t *testing.T) {
	jobs, gateways, services, chaos := renderMixed(t)
	if len(gateways) != 2 || gateways[0].Name != "mixed-fleet-gateway-mqtt-sn" || gateways[1].Name != "mixed-fleet-gateway-http" {
		t.Fatalf("gateways %v", gateways)
	}
	for _, g := range gateways {
		mode := g.Spec.Template.Labels[v1alpha1.LabelGateway]
		args := strings.Join(g.Spec.Template.Spec.Containers[0].Args, " ")
		if !strings.Contains(args, "--mode "+mode+" ") || !strings.Contains(args, "--broker mixed-fleet-broker.bench.svc:1883") {
			t.Errorf("gateway %s (mode label %q): %s", g.Name, mode, args)
		}
		svc := services[g.Name]
		if svc == nil || !reflect.DeepEqual(svc.Spec.Selector, g.Spec.Selector.MatchLabels) || svc.Spec.Selector[v1alpha1.LabelGateway] != mode {
			t.Errorf("gateway %s: Service %v", g.Name, svc)
		}
	}
	want := map[string]struct{ group, groups, broker string }{
		"mixed-fleet-workers":               {"", "dashboards", "mixed-fleet-broker.bench.svc:8080"},
		"mixed-fleet-workers-sensors":       {"sensors", "sensors", "mixed-fleet-gateway-mqtt-sn.bench.svc:1884"},
		"mixed-fleet-workers-site-gateways": {"site-gateways", "site-gateways", "mixed-fleet-broker.bench.svc:1883"},
		"mixed-fleet-workers-meters":        {"meters", "meters", "mixed-fleet-gateway-http.bench.svc:8080"},
	}
	if len(jobs) != len(want) {
		t.Fatalf("%d Jobs, want %d", len(jobs), len(want))
	}
	for _, j := range jobs {
		w, ok := want[j.Name]
		a := argsOf(j)
		if !ok || j.Spec.Template.Labels[v1alpha1.LabelGroup] != w.group || strings.Join(a["--groups"], ",") != w.groups ||
			strings.Join(a["--broker"], ",") != w.broker || a["--endpoint"] != nil || *j.Spec.Completions != 1 {
			t.Errorf("Job %s: labels %v, args %v", j.Name, j.Spec.Template.Labels, a)
		}
	}
	if len(chaos) != 6 {
		t.Fatalf("%d NetworkChaos, want up and down for each of 3 groups", len(chaos))
	}
	server := map[string]string{"sensors": "mqtt-sn", "meters": "http", "site-gateways": ""}
	for _, c := range chaos {
		g := c.GetLabels()[v1alpha1.LabelGroup]
		dir := c.GetName()[strings.LastIndex(c.GetName(), "-")+1:]
		workers, target := "spec.selector", "spec.target.selector"
		if dir == "down" {
			workers, target = target, workers
		}
		wl, _, _ := unstructured.NestedStringMap(c.Object, append(strings.Split(workers, "."), "labelSelectors")...)
		tl, _, _ := unstructured.NestedStringMap(c.Object, append(strings.Split(target, "."), "labelSelectors")...)
		mode, ok := server[g]
		wantServer := v1alpha1.ComponentGateway
		if mode == "" {
			wantServer = v1alpha1.ComponentBroker
		}
		if !ok || wl[v1alpha1.LabelGroup] != g || wl[v1alpha1.LabelComponent] != v1alpha1.ComponentWorker ||
			tl[v1alpha1.LabelComponent] != wantServer || tl[v1alpha1.LabelGateway] != mode || c.GetName() != "mixed-fleet-net-g-"+g+"-"+dir {
			t.Errorf("%s: group %q, workers %v, server %v", c.GetName(), g, wl, tl)
		}
	}
}

// Without the groups' own links, every group shares one Job: --broker is the first group's
// gateway, and each group that connects elsewhere has its --endpoint; no NetworkChaos.
func TestMixedFleetInOneJob(t *testing.T) {
	jobs, gateways, _, chaos := renderMixed(t, "groups[sensors].network.profile=none", "groups[site-gateways].network.profile=none",
		"groups[meters].network.profile=none")
	if len(jobs) != 1 || len(gateways) != 2 || len(chaos) != 0 {
		t.Fatalf("%d Jobs, %d gateways, %d NetworkChaos", len(jobs), len(gateways), len(chaos))
	}
	a := argsOf(jobs[0])
	if jobs[0].Name != "mixed-fleet-workers" || a["--groups"] != nil || jobs[0].Spec.Template.Labels[v1alpha1.LabelGroup] != "" {
		t.Errorf("Job %s: %v", jobs[0].Name, a)
	}
	if b := strings.Join(a["--broker"], ","); b != "mixed-fleet-gateway-mqtt-sn.bench.svc:1884" {
		t.Errorf("--broker %s", b)
	}
	want := []string{"site-gateways=mixed-fleet-broker.bench.svc:1883", "meters=mixed-fleet-gateway-http.bench.svc:8080",
		"dashboards=mixed-fleet-broker.bench.svc:8080"}
	if !reflect.DeepEqual(a["--endpoint"], want) {
		t.Errorf("--endpoint %q, want %q", a["--endpoint"], want)
	}
}

// A group with a placement of its own runs in a Job of its own, scheduled as it asks, field by
// field over spec.workers'; the shared Job keeps spec.workers' scheduling.
func TestGroupPlacementJob(t *testing.T) {
	jobs, _, _, chaos := renderMixed(t, "groups[sensors].network.profile=none", "groups[site-gateways].network.profile=none",
		"groups[meters].network.profile=none", "groups[dashboards].placement.nodeSelector.zone=lan", "workers.nodeSelector.pool=load")
	if len(jobs) != 2 || len(chaos) != 0 {
		t.Fatalf("%d Jobs, %d NetworkChaos; want the shared Job and the dashboards', no NetworkChaos", len(jobs), len(chaos))
	}
	shared, own := jobs[0], jobs[1]
	if own.Name != "mixed-fleet-workers-dashboards" || own.Spec.Template.Labels[v1alpha1.LabelGroup] != "dashboards" ||
		!reflect.DeepEqual(argsOf(own)["--groups"], []string{"dashboards"}) {
		t.Errorf("the dashboards' Job: %s %v %v", own.Name, own.Spec.Template.Labels, argsOf(own))
	}
	if ns := own.Spec.Template.Spec.NodeSelector; !reflect.DeepEqual(ns, map[string]string{"zone": "lan"}) {
		t.Errorf("the dashboards' pods select %v, want their placement's zone=lan", ns)
	}
	if ns := shared.Spec.Template.Spec.NodeSelector; !reflect.DeepEqual(ns, map[string]string{"pool": "load"}) {
		t.Errorf("the shared pods select %v, want spec.workers' pool=load", ns)
	}
	if g := strings.Join(argsOf(shared)["--groups"], ","); g != "sensors,site-gateways,meters" {
		t.Errorf("the shared Job runs --groups %s", g)
	}
}
