// Package chart tests the Helm chart charts/msgbench and the kustomize tree config/default: both
// stay in sync with the generated CRD and RBAC, helm lint passes, the values schema refuses bad
// values, the rendered objects are accepted by a real API server (server-side apply, dry run),
// the operator's pod passes the restricted Pod Security Standard, and helm and kustomize produce
// the same operator.
//
// helm is built from the Go module proxy by hack/helm.sh (cached in bin/tools); the API server
// is envtest's (KUBEBUILDER_ASSETS, as `make test` sets it).
package chart

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/internal/testenv"
)

var root = testenv.RepoRoot()

const chartDir = "charts/msgbench"

func helm(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(root, "hack", "helm.sh")).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("hack/helm.sh: %v: %s", err, ee.Stderr)
		}
		t.Fatalf("hack/helm.sh: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func run(t *testing.T, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", filepath.Base(name), strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// template renders the chart as release msgbench in namespace msgbench-system.
func template(t *testing.T, args ...string) string {
	t.Helper()
	out, err := run(t, helm(t), append([]string{"template", "msgbench", chartDir, "--namespace", "msgbench-system"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// decode splits a multi-document YAML stream into objects.
func decode(t *testing.T, stream string) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(stream), 4096)
	for {
		var u unstructured.Unstructured
		if err := d.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatal(err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, &u)
		}
	}
	return objs
}

func find[T any](t *testing.T, objs []*unstructured.Unstructured, kind string) *T {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind {
			var v T
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &v); err != nil {
				t.Fatal(err)
			}
			return &v
		}
	}
	t.Fatalf("no %s among the objects", kind)
	return nil
}

func kinds(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	sort.Strings(out)
	return out
}

// TestGeneratedCopiesInSync fails when the chart's copies of the generated CRD and ClusterRole
// differ from config/ (fix: make helm-sync).
func TestGeneratedCopiesInSync(t *testing.T) {
	pairs := map[string]string{filepath.Join(chartDir, "files", "role.yaml"): "config/rbac/role.yaml"}
	bases, err := filepath.Glob(filepath.Join(root, "config", "crd", "bases", "*.yaml"))
	if err != nil || len(bases) == 0 {
		t.Fatalf("no CRDs in config/crd/bases: %v", err)
	}
	for _, b := range bases {
		pairs[filepath.Join(chartDir, "crds", filepath.Base(b))] = filepath.Join("config", "crd", "bases", filepath.Base(b))
	}
	copies, _ := filepath.Glob(filepath.Join(root, chartDir, "crds", "*"))
	if len(copies) != len(bases) {
		t.Errorf("%s holds %d files, config/crd/bases %d: run make helm-sync", filepath.Join(chartDir, "crds"), len(copies), len(bases))
	}
	for cp, src := range pairs {
		a, err := os.ReadFile(filepath.Join(root, src))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(root, cp))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs from %s: run make helm-sync", cp, src)
		}
	}
}

func TestHelmLint(t *testing.T) {
	h := helm(t)
	for _, set := range [][]string{
		nil,
		{"--set", "metrics.serviceMonitor.enabled=true", "--set", "operator.watchNamespace=bench", "--set", "image.digest=sha256:" + strings.Repeat("a", 64)},
		{"--set", "metrics.enabled=false", "--set", "operator.leaderElect=false", "--set", "serviceAccount.create=false", "--set", "rbac.create=false"},
	} {
		if out, err := run(t, h, append([]string{"lint", "--strict", chartDir}, set...)...); err != nil {
			t.Errorf("helm lint %v: %v\n%s", set, err, out)
		}
	}
}

// TestValuesSchemaRefuses: values.schema.json catches typos and bad values before anything is
// applied.
func TestValuesSchemaRefuses(t *testing.T) {
	h := helm(t)
	for _, set := range []string{
		"image.pullPolicy=Sometimes",
		"workloadImagePullPolicy=always",
		"operator.replicas=-1",
		"operator.workerControlPort=70000",
		"operator.leaderelect=true", // typo: unknown key
		"mosquitto.image=Not An Image",
		"image.digest=sha256:abc",
		"metrics.serviceMonitor.interval=soon",
	} {
		if out, err := run(t, h, "template", "msgbench", chartDir, "--set", set); err == nil {
			t.Errorf("--set %s was accepted:\n%.300s", set, out)
		}
	}
}

func TestTemplateDefaults(t *testing.T) {
	objs := decode(t, template(t))
	want := []string{
		"ClusterRole/msgbench-operator", "ClusterRole/msgbench-operator-metrics-reader", "ClusterRoleBinding/msgbench-operator", "Deployment/msgbench-operator",
		"Role/msgbench-operator-leader-election", "RoleBinding/msgbench-operator-leader-election",
		"Service/msgbench-operator-metrics", "ServiceAccount/msgbench-operator",
	}
	if got := kinds(objs); !slices.Equal(got, want) {
		t.Errorf("objects %v, want %v", got, want)
	}
	chartYAML, err := os.ReadFile(filepath.Join(root, chartDir, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var chart struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(chartYAML, &chart); err != nil {
		t.Fatal(err)
	}
	d := find[appsv1.Deployment](t, objs, "Deployment")
	c := d.Spec.Template.Spec.Containers[0]
	image := "ghcr.io/msgbench/msgbench:" + chart.AppVersion
	if c.Image != image {
		t.Errorf("image %s, want %s", c.Image, image)
	}
	for _, a := range []string{"operator", "--leader-elect", "--health-probe-bind-address=:8081", "--metrics-bind-address=:8443", "--metrics-secure=true",
		"--msgbench-image=" + image, "--mosquitto-image=ghcr.io/msgbench/mosquitto:2.0.11", "--image-pull-policy=IfNotPresent"} {
		if !slices.Contains(c.Args, a) {
			t.Errorf("args %v lack %s", c.Args, a)
		}
	}
	if c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.Ports[0].ContainerPort != 8081 {
		t.Errorf("probes: %+v %+v %+v", c.LivenessProbe, c.ReadinessProbe, c.Ports)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources: %+v", c.Resources)
	}

	// The ClusterRole is config/rbac/role.yaml's, rule for rule.
	var generated rbacv1.ClusterRole
	data, err := os.ReadFile(filepath.Join(root, "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &generated); err != nil {
		t.Fatal(err)
	}
	if cr := findNamed[rbacv1.ClusterRole](t, objs, "ClusterRole", "msgbench-operator"); !reflect.DeepEqual(cr.Rules, generated.Rules) {
		t.Errorf("ClusterRole rules differ from config/rbac/role.yaml:\n%+v\n%+v", cr.Rules, generated.Rules)
	}
	// Metrics are served to callers the API server authenticates and authorizes: the operator
	// may ask it (TokenReview, SubjectAccessReview), and a reader role grants get on /metrics.
	if !hasRule(generated.Rules, "authentication.k8s.io", "tokenreviews", "create") || !hasRule(generated.Rules, "authorization.k8s.io", "subjectaccessreviews", "create") {
		t.Errorf("the operator's ClusterRole cannot create tokenreviews and subjectaccessreviews: %+v", generated.Rules)
	}
	if mr := findNamed[rbacv1.ClusterRole](t, objs, "ClusterRole", "msgbench-operator-metrics-reader"); len(mr.Rules) != 1 ||
		!slices.Equal(mr.Rules[0].NonResourceURLs, []string{"/metrics"}) || !slices.Equal(mr.Rules[0].Verbs, []string{"get"}) {
		t.Errorf("metrics-reader ClusterRole: %+v", mr.Rules)
	}
	if svc := find[corev1.Service](t, objs, "Service"); svc.Spec.Ports[0].Port != 8443 || svc.Spec.Ports[0].TargetPort.StrVal != "metrics" {
		t.Errorf("metrics Service ports %+v", svc.Spec.Ports)
	}
	// Leader election needs leases in the release namespace only.
	role := find[rbacv1.Role](t, objs, "Role")
	if role.Namespace != "msgbench-system" || role.Rules[0].Resources[0] != "leases" {
		t.Errorf("leader-election Role: %+v", role)
	}

	// Overrides reach the flags.
	objs = decode(t, template(t, "--set", "image.tag=e2e", "--set", "workerImage=localhost/w:1", "--set", "mosquitto.image=localhost/m:2",
		"--set", "workloadImagePullPolicy=Never", "--set", "operator.watchNamespace=bench", "--set", "metrics.serviceMonitor.enabled=true"))
	c = find[appsv1.Deployment](t, objs, "Deployment").Spec.Template.Spec.Containers[0]
	for _, a := range []string{"--msgbench-image=localhost/w:1", "--mosquitto-image=localhost/m:2", "--image-pull-policy=Never", "--namespace=bench"} {
		if !slices.Contains(c.Args, a) {
			t.Errorf("args %v lack %s", c.Args, a)
		}
	}
	if c.Image != "ghcr.io/msgbench/msgbench:e2e" {
		t.Errorf("image %s", c.Image)
	}
	if sm := find[unstructured.Unstructured](t, objs, "ServiceMonitor"); sm.GetAPIVersion() != "monitoring.coreos.com/v1" {
		t.Errorf("ServiceMonitor %v", sm)
	} else if ep, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints"); len(ep) != 1 || ep[0].(map[string]any)["scheme"] != "https" ||
		ep[0].(map[string]any)["bearerTokenFile"] == nil {
		t.Errorf("ServiceMonitor endpoints %v: want https with the scraper's token", ep)
	}

	// The benchmarks' PodMonitor selects the pods the operator creates (their labels, their
	// "metrics" port), and the dashboard ConfigMap carries the JSON the Prometheus test ran.
	objs = decode(t, template(t, "--set", "metrics.podMonitor.enabled=true", "--set", "metrics.grafanaDashboard.enabled=true"))
	pm := find[unstructured.Unstructured](t, objs, "PodMonitor")
	sel, _, _ := unstructured.NestedStringMap(pm.Object, "spec", "selector", "matchLabels")
	mb := &v1alpha1.MessagingBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "n"}}
	for _, comp := range []string{v1alpha1.ComponentWorker, v1alpha1.ComponentBroker, v1alpha1.ComponentGateway} {
		podLabels := resources.Labels(mb, comp)
		for k, v := range sel {
			if podLabels[k] != v {
				t.Errorf("PodMonitor selects %s=%s; the %s pods have %q", k, v, comp, podLabels[k])
			}
		}
	}
	if ep, _, _ := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints"); len(ep) != 1 || ep[0].(map[string]any)["port"] != "metrics" {
		t.Errorf("PodMonitor endpoints %v", ep)
	}
	dash := findNamed[corev1.ConfigMap](t, objs, "ConfigMap", "msgbench-operator-dashboard")
	dashJSON, err := os.ReadFile(filepath.Join(root, "charts", "msgbench", "files", "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	if dash.Labels["grafana_dashboard"] != "1" || strings.TrimSpace(dash.Data["msgbench-live.json"]) != strings.TrimSpace(string(dashJSON)) {
		t.Errorf("dashboard ConfigMap: labels %v, %d bytes of JSON (want %d)", dash.Labels, len(dash.Data["msgbench-live.json"]), len(dashJSON))
	}

	// metrics.secure=false: plain HTTP, no reader role.
	objs = decode(t, template(t, "--set", "metrics.secure=false"))
	if c := find[appsv1.Deployment](t, objs, "Deployment").Spec.Template.Spec.Containers[0]; !slices.Contains(c.Args, "--metrics-secure=false") {
		t.Errorf("args %v lack --metrics-secure=false", c.Args)
	}
	for _, k := range kinds(objs) {
		if k == "ClusterRole/msgbench-operator-metrics-reader" {
			t.Error("metrics.secure=false still makes a metrics-reader ClusterRole")
		}
	}
}

// findNamed is find for the object of that kind and name.
func findNamed[T any](t *testing.T, objs []*unstructured.Unstructured, kind, name string) *T {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			var v T
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &v); err != nil {
				t.Fatal(err)
			}
			return &v
		}
	}
	t.Fatalf("no %s %s among the objects", kind, name)
	return nil
}

func hasRule(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	for _, r := range rules {
		if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
			return true
		}
	}
	return false
}

// TestKustomizeMatchesChart: config/default and the chart's defaults install the same operator.
func TestKustomizeMatchesChart(t *testing.T) {
	kubectl := kubectlBinary(t)
	out, err := run(t, kubectl, "kustomize", "config/default")
	if err != nil {
		t.Fatal(err)
	}
	kust := decode(t, out)
	helmObjs := decode(t, template(t, "--include-crds"))
	want := append(kinds(helmObjs), "Namespace/msgbench-system") // helm install --create-namespace makes it
	sort.Strings(want)
	if got := kinds(kust); !slices.Equal(got, want) {
		t.Errorf("kustomize objects %v, chart %v", got, want)
	}
	kd := find[appsv1.Deployment](t, kust, "Deployment")
	hd := find[appsv1.Deployment](t, helmObjs, "Deployment")
	kc, hc := kd.Spec.Template.Spec.Containers[0], hd.Spec.Template.Spec.Containers[0]
	if !reflect.DeepEqual(kd.Spec.Template.Spec.SecurityContext, hd.Spec.Template.Spec.SecurityContext) ||
		!reflect.DeepEqual(kc.SecurityContext, hc.SecurityContext) || !reflect.DeepEqual(kc.Ports, hc.Ports) ||
		!reflect.DeepEqual(kc.LivenessProbe, hc.LivenessProbe) || !reflect.DeepEqual(kc.ReadinessProbe, hc.ReadinessProbe) ||
		!reflect.DeepEqual(kc.Resources, hc.Resources) || kc.Image != hc.Image {
		t.Errorf("Deployments differ:\nkustomize %+v\nchart     %+v", kc, hc)
	}
	// The chart names the workers' image explicitly; kustomize leaves it to the operator's
	// default (its own image's version). Every other flag is the same.
	noImage := func(args []string) []string {
		return slices.DeleteFunc(slices.Clone(args), func(a string) bool { return strings.HasPrefix(a, "--msgbench-image=") })
	}
	if !slices.Equal(noImage(kc.Args), noImage(hc.Args)) {
		t.Errorf("args differ:\nkustomize %v\nchart     %v", kc.Args, hc.Args)
	}
	for _, name := range []string{"msgbench-operator", "msgbench-operator-metrics-reader"} {
		kr := findNamed[rbacv1.ClusterRole](t, kust, "ClusterRole", name)
		hr := findNamed[rbacv1.ClusterRole](t, helmObjs, "ClusterRole", name)
		if !reflect.DeepEqual(kr.Rules, hr.Rules) {
			t.Errorf("ClusterRole %s rules differ between kustomize and the chart", name)
		}
	}
	if !reflect.DeepEqual(find[rbacv1.Role](t, kust, "Role").Rules, find[rbacv1.Role](t, helmObjs, "Role").Rules) {
		t.Error("leader-election Role rules differ between kustomize and the chart")
	}
}

func kubectlBinary(t *testing.T) string {
	t.Helper()
	if a := os.Getenv("KUBEBUILDER_ASSETS"); a != "" {
		return filepath.Join(a, "kubectl")
	}
	k, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("no kubectl: set KUBEBUILDER_ASSETS (make test does)")
	}
	return k
}

// TestServerSideDryRun applies the rendered chart and the kustomize tree to a real API server
// with server-side apply in dry-run mode, and creates the operator's pod (dry run) in a namespace
// that enforces the restricted Pod Security Standard.
func TestServerSideDryRun(t *testing.T) {
	env, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "msgbench-system", Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest"}}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	kubectl, kubeconfig, err := env.Kubectl(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	apply := func(what, manifest string) {
		t.Helper()
		cmd := exec.Command(kubectl, "--kubeconfig", kubeconfig, "apply", "--server-side", "--dry-run=server",
			"--field-manager=msgbench-chart-test", "-f", "-")
		cmd.Stdin = strings.NewReader(manifest)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s: server-side dry run: %v\n%s", what, err, out)
			return
		}
		t.Logf("%s:\n%s", what, out)
	}
	rendered := template(t, "--include-crds")
	apply("helm template --include-crds", rendered)
	apply("helm template (non-default values)", template(t, "--set", "operator.watchNamespace=bench", "--set", "operator.leaderElect=false",
		"--set", "workerImage=localhost/w:1", "--set", "podLabels.team=iot", "--set", "tolerations[0].operator=Exists"))
	kust, err := run(t, kubectlBinary(t), "kustomize", "config/default")
	if err != nil {
		t.Fatal(err)
	}
	apply("kubectl kustomize config/default", kust)

	// The operator's pod, as the Deployment controller would create it, passes the restricted
	// level (Deployments themselves are only warned about).
	for _, stream := range []string{rendered, kust} {
		d := find[appsv1.Deployment](t, decode(t, stream), "Deployment")
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "operator-", Namespace: "msgbench-system", Labels: d.Spec.Template.Labels},
			Spec:       d.Spec.Template.Spec,
		}
		pod.Spec.ServiceAccountName = "" // the dry run does not create the ServiceAccount
		if err := env.Client.Create(ctx, pod, client.DryRunAll); err != nil {
			t.Errorf("operator pod refused in a restricted namespace: %v", err)
		}
	}
	// And a pod that is not restricted is refused there: the check above means something.
	bad := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "bad-", Namespace: "msgbench-system"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
	if err := env.Client.Create(ctx, bad, client.DryRunAll); err == nil || !strings.Contains(err.Error(), "PodSecurity") {
		t.Errorf("an unrestricted pod was not refused by PodSecurity: %v", err)
	}
}
