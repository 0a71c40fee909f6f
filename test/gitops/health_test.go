// Package gitops tests the GitOps health checks of docs/gitops.md: the Argo CD Lua scripts, run
// the way Argo CD runs them (gopher-lua, the object as the global obj, no standard library
// beyond base, table and package), and the Flux healthCheckExprs, evaluated with cel-go in the
// environment Flux's kustomize-controller gives them; and that the page shows the files as they
// are.
package gitops

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/testenv"
)

const (
	benchmarkScript = "messagingbenchmark-health.lua"
	suiteScript     = "messagingbenchmarksuite-health.lua"
	fluxFile        = "flux-kustomization.yaml"
)

func read(t *testing.T, parts ...string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(append([]string{testenv.RepoRoot(), "docs"}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// ---------------------------------------------------------------- Argo CD

// argoHealth runs a health script as Argo CD's util/lua does for a custom check from argocd-cm:
// a state without the standard libraries but base, table and package (Argo CD adds a reduced os,
// which these scripts do not use), a one-second deadline, the object converted to Lua tables as
// the global obj, and the table the script returns read as {status, message}. A status Argo CD
// does not know fails the test (Argo CD would show it as Unknown, "invalid health status").
func argoHealth(t *testing.T, script string, obj map[string]any) (status, message string) {
	t.Helper()
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", toLua(l, obj))
	if err := l.DoString(script); err != nil {
		t.Fatalf("script error: %v", err)
	}
	ret, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("the script returned %s, want a table", l.Get(-1).Type())
	}
	ret.ForEach(func(k, v lua.LValue) {
		key := k.String()
		if key != "status" && key != "message" {
			t.Errorf("returned table has %s = %s: Argo CD reads status and message only", key, v)
		}
		if _, ok := v.(lua.LString); !ok {
			t.Errorf("returned %s is a %s, want a string", key, v.Type())
		}
	})
	status, message = lua.LVAsString(ret.RawGetString("status")), lua.LVAsString(ret.RawGetString("message"))
	switch status {
	case "Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown":
	default:
		t.Errorf("status %q is not an Argo CD health status", status)
	}
	return status, message
}

// toLua converts an unstructured object to Lua values as Argo CD's decodeValue does.
func toLua(l *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case bool:
		return lua.LBool(x)
	case float64:
		return lua.LNumber(x)
	case int64:
		return lua.LNumber(x)
	case int32:
		return lua.LNumber(x)
	case int:
		return lua.LNumber(x)
	case string:
		return lua.LString(x)
	case json.Number:
		return lua.LString(x)
	case []any:
		t := l.CreateTable(len(x), 0)
		for _, e := range x {
			t.Append(toLua(l, e))
		}
		return t
	case map[string]any:
		t := l.CreateTable(0, len(x))
		for k, e := range x {
			t.RawSetH(lua.LString(k), toLua(l, e))
		}
		return t
	}
	return lua.LNil
}

// ---------------------------------------------------------------- Flux

// healthCheck is one entry of a Flux Kustomization's spec.healthCheckExprs.
type healthCheck struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	InProgress string `json:"inProgress"`
	Failed     string `json:"failed"`
	Current    string `json:"current"`
}

func fluxChecks(t *testing.T) map[string]healthCheck {
	t.Helper()
	var k struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Spec       struct {
			Wait             bool          `json:"wait"`
			HealthCheckExprs []healthCheck `json:"healthCheckExprs"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(read(t, "gitops", fluxFile)), &k); err != nil {
		t.Fatal(err)
	}
	if k.APIVersion != "kustomize.toolkit.fluxcd.io/v1" || k.Kind != "Kustomization" || !k.Spec.Wait {
		t.Errorf("%s: %s %s wait %v: want a kustomize.toolkit.fluxcd.io/v1 Kustomization that waits", fluxFile, k.APIVersion, k.Kind, k.Spec.Wait)
	}
	checks := map[string]healthCheck{}
	for _, c := range k.Spec.HealthCheckExprs {
		if c.APIVersion != v1alpha1.GroupVersion.String() {
			t.Errorf("%s: apiVersion %s, want %s", c.Kind, c.APIVersion, v1alpha1.GroupVersion)
		}
		if c.Current == "" {
			t.Errorf("%s: current is required", c.Kind)
		}
		checks[c.Kind] = c
	}
	return checks
}

// fluxExpr parses an expression as Flux's runtime/cel NewExpression does for health checks: the
// same environment, parsed but not type-checked (a custom resource's fields are not declared),
// evaluated against the object's top-level fields.
func fluxExpr(t *testing.T, expr string) cel.Program {
	t.Helper()
	env, err := cel.NewEnv(cel.HomogeneousAggregateLiterals(), cel.EagerlyValidateDeclarations(true), cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true), cel.OptionalTypes(), ext.Strings(), ext.Sets(), ext.Encoders())
	if err != nil {
		t.Fatal(err)
	}
	ast, iss := env.Parse(expr)
	if iss != nil && iss.Err() != nil {
		t.Fatalf("%s: %v", expr, iss.Err())
	}
	prg, err := env.Program(ast, cel.EvalOptions(cel.OptOptimize), cel.InterruptCheckFrequency(100))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return prg
}

// fluxStatus is what Flux's StatusEvaluator makes of obj: InProgress when status.observedGeneration
// differs from metadata.generation, else the first of inProgress, failed and current that is
// true (InProgress, Failed, Current), InProgress when none is.
func fluxStatus(t *testing.T, c healthCheck, obj map[string]any) (string, error) {
	t.Helper()
	if og, ok, _ := unstructured.NestedInt64(obj, "status", "observedGeneration"); ok {
		if g, ok, _ := unstructured.NestedInt64(obj, "metadata", "generation"); ok && g != og {
			return "InProgress", nil
		}
	}
	for _, e := range []struct{ expr, status string }{{c.InProgress, "InProgress"}, {c.Failed, "Failed"}, {c.Current, "Current"}} {
		if e.expr == "" {
			continue
		}
		v, _, err := fluxExpr(t, e.expr).ContextEval(context.Background(), obj)
		if err != nil {
			return "", err
		}
		b, ok := v.(types.Bool)
		if !ok {
			t.Fatalf("%s evaluates to %v, not a boolean", e.expr, v)
		}
		if b {
			return e.status, nil
		}
	}
	return "InProgress", nil
}

// ---------------------------------------------------------------- objects

func objectives(s metav1.ConditionStatus, msg string) metav1.Condition {
	return metav1.Condition{Type: v1alpha1.ConditionObjectivesMet, Status: s, Reason: "R", Message: msg,
		LastTransitionTime: metav1.NewTime(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)), ObservedGeneration: 1}
}

var completed = metav1.Condition{Type: v1alpha1.ConditionCompleted, Status: metav1.ConditionTrue, Reason: "Succeeded",
	LastTransitionTime: metav1.NewTime(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)), ObservedGeneration: 1}

// unstructuredOf is obj as the API server serves it (integers as int64, as Argo CD and Flux get
// them); noStatus drops the status, as for an object the operator has not seen yet.
func unstructuredOf(t *testing.T, obj runtime.Object, noStatus bool) map[string]any {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	if noStatus {
		delete(m, "status")
	}
	return m
}

type want struct {
	argo, message string // Argo CD status and message (a message ending in "*" is a prefix)
	flux          string // Flux status; "error" when the expressions cannot be evaluated yet
}

func check(t *testing.T, script string, flux healthCheck, obj map[string]any, w want) {
	t.Helper()
	status, msg := argoHealth(t, script, obj)
	if status != w.argo {
		t.Errorf("Argo CD: status %s (%q), want %s", status, msg, w.argo)
	}
	if p, ok := strings.CutSuffix(w.message, "*"); ok && !strings.HasPrefix(msg, p) || !ok && msg != w.message {
		t.Errorf("Argo CD: message %q, want %q", msg, w.message)
	}
	got, err := fluxStatus(t, flux, obj)
	switch {
	case w.flux == "error" && err == nil:
		t.Errorf("Flux: %s, want an evaluation error (no status yet)", got)
	case w.flux != "error" && err != nil:
		t.Errorf("Flux: %v, want %s", err, w.flux)
	case w.flux != "error" && got != w.flux:
		t.Errorf("Flux: %s, want %s", got, w.flux)
	}
}

func TestMessagingBenchmarkHealth(t *testing.T) {
	script := read(t, "gitops", benchmarkScript)
	flux, ok := fluxChecks(t)["MessagingBenchmark"]
	if !ok {
		t.Fatalf("%s has no health check for MessagingBenchmark", fluxFile)
	}
	type tc struct {
		name     string
		status   v1alpha1.MessagingBenchmarkStatus
		gen      int64
		noStatus bool
		want     want
	}
	cases := []tc{
		{name: "just created", noStatus: true, want: want{"Progressing", "waiting for the msgbench operator", "error"}},
		{name: "status without phase", status: v1alpha1.MessagingBenchmarkStatus{ObservedGeneration: 1}, want: want{"Progressing", "waiting for the msgbench operator", "InProgress"}},
		{name: "generation not observed", gen: 2, status: v1alpha1.MessagingBenchmarkStatus{Phase: v1alpha1.PhaseSucceeded, ObservedGeneration: 1},
			want: want{"Progressing", "waiting for the msgbench operator to observe generation 2", "InProgress"}},
		{name: "Succeeded without objectives", status: v1alpha1.MessagingBenchmarkStatus{Phase: v1alpha1.PhaseSucceeded, ObservedGeneration: 1,
			Conditions: []metav1.Condition{completed}}, want: want{"Healthy", "Succeeded", "Current"}},
		{name: "Succeeded, objectives met", status: v1alpha1.MessagingBenchmarkStatus{Phase: v1alpha1.PhaseSucceeded, ObservedGeneration: 1,
			Conditions: []metav1.Condition{completed, objectives(metav1.ConditionTrue, "lost == 0: measured 0")}},
			want: want{"Healthy", "Succeeded, objectives met: lost == 0: measured 0", "Current"}},
		{name: "Succeeded, objectives unknown", status: v1alpha1.MessagingBenchmarkStatus{Phase: v1alpha1.PhaseSucceeded, ObservedGeneration: 1,
			Conditions: []metav1.Condition{objectives(metav1.ConditionUnknown, "nothing to judge yet")}}, want: want{"Healthy", "Succeeded", "Current"}},
		{name: "Succeeded, objectives missed", status: v1alpha1.MessagingBenchmarkStatus{Phase: v1alpha1.PhaseSucceeded, ObservedGeneration: 1,
			Conditions: []metav1.Condition{completed, objectives(metav1.ConditionFalse, "latency.endToEnd.p99 <= 50ms: measured 72ms")}},
			want: want{"Degraded", "objectives missed: latency.endToEnd.p99 <= 50ms: measured 72ms", "Failed"}},
		{name: "Failed", status: v1alpha1.MessagingBenchmarkStatus{Phase: v1alpha1.PhaseFailed, ObservedGeneration: 1, Message: "the broker did not start within 5m"},
			want: want{"Degraded", "the broker did not start within 5m", "Failed"}},
		{name: "Failed without a message", status: v1alpha1.MessagingBenchmarkStatus{Phase: v1alpha1.PhaseFailed, ObservedGeneration: 1},
			want: want{"Degraded", "Failed", "Failed"}},
		{name: "Failed, objectives missed too", status: v1alpha1.MessagingBenchmarkStatus{Phase: v1alpha1.PhaseFailed, ObservedGeneration: 1, Message: "worker lost",
			Conditions: []metav1.Condition{objectives(metav1.ConditionFalse, "lost == 0: measured 12")}}, want: want{"Degraded", "worker lost", "Failed"}},
	}
	for _, p := range []v1alpha1.Phase{v1alpha1.PhasePending, v1alpha1.PhaseProvisioning, v1alpha1.PhaseStarting, v1alpha1.PhaseRunning, v1alpha1.PhaseCollecting} {
		cases = append(cases,
			tc{name: string(p), status: v1alpha1.MessagingBenchmarkStatus{Phase: p, ObservedGeneration: 1}, want: want{"Progressing", string(p), "InProgress"}},
			tc{name: string(p) + " with a message", status: v1alpha1.MessagingBenchmarkStatus{Phase: p, ObservedGeneration: 1, Message: "waiting for the broker"},
				want: want{"Progressing", string(p) + ": waiting for the broker", "InProgress"}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mb := &v1alpha1.MessagingBenchmark{
				TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "MessagingBenchmark"},
				ObjectMeta: metav1.ObjectMeta{Name: "mqtt-qos1", Namespace: "bench", Generation: max(c.gen, 1)},
				Status:     c.status,
			}
			check(t, script, flux, unstructuredOf(t, mb, c.noStatus), c.want)
		})
	}
	// A phase the script does not know (a newer operator's) is Unknown, not guessed.
	obj := unstructuredOf(t, &v1alpha1.MessagingBenchmark{ObjectMeta: metav1.ObjectMeta{Generation: 1},
		Status: v1alpha1.MessagingBenchmarkStatus{Phase: "Paused", ObservedGeneration: 1}}, false)
	if s, m := argoHealth(t, script, obj); s != "Unknown" || m != "unknown phase Paused" {
		t.Errorf("unknown phase: %s %q", s, m)
	}
}

func TestMessagingBenchmarkSuiteHealth(t *testing.T) {
	script := read(t, "gitops", suiteScript)
	flux, ok := fluxChecks(t)["MessagingBenchmarkSuite"]
	if !ok {
		t.Fatalf("%s has no health check for MessagingBenchmarkSuite", fluxFile)
	}
	type tc struct {
		name     string
		status   v1alpha1.MessagingBenchmarkSuiteStatus
		gen      int64
		noStatus bool
		want     want
	}
	s := func(phase v1alpha1.SuitePhase, progress, verdict, msg string, conds ...metav1.Condition) v1alpha1.MessagingBenchmarkSuiteStatus {
		return v1alpha1.MessagingBenchmarkSuiteStatus{Phase: phase, ObservedGeneration: 1, Progress: progress, Verdict: verdict, Message: msg, Conditions: conds}
	}
	cases := []tc{
		{name: "just created", noStatus: true, want: want{"Progressing", "waiting for the msgbench operator", "error"}},
		{name: "status without phase", status: v1alpha1.MessagingBenchmarkSuiteStatus{ObservedGeneration: 1}, want: want{"Progressing", "waiting for the msgbench operator", "InProgress"}},
		{name: "Pending", status: s(v1alpha1.SuitePending, "", "", ""), want: want{"Progressing", "Pending", "InProgress"}},
		{name: "Pending with progress", status: s(v1alpha1.SuitePending, "0/120", "", "checking every point"),
			want: want{"Progressing", "Pending (0/120 runs): checking every point", "InProgress"}},
		{name: "Running", status: s(v1alpha1.SuiteRunning, "7/120", "Incomplete", ""), want: want{"Progressing", "Running (7/120 runs)", "InProgress"}},
		{name: "Suspended", status: s(v1alpha1.SuiteSuspended, "7/120", "Incomplete", "spec.suspend is true"),
			want: want{"Suspended", "Suspended (7/120 runs): spec.suspend is true", "InProgress"}},
		{name: "suspend just set", gen: 2, status: s(v1alpha1.SuiteRunning, "7/120", "", ""),
			want: want{"Progressing", "waiting for the msgbench operator to observe generation 2", "InProgress"}},
		{name: "Succeeded without objectives", status: s(v1alpha1.SuiteSucceeded, "120/120", "None", "120/120 runs finished"),
			want: want{"Healthy", "Succeeded (120/120 runs), verdict None", "Current"}},
		{name: "Succeeded, objectives met", status: s(v1alpha1.SuiteSucceeded, "24/24", "Passed", "", objectives(metav1.ConditionTrue, "every point met every objective (lost == 0)")),
			want: want{"Healthy", "Succeeded (24/24 runs), verdict Passed", "Current"}},
		{name: "Succeeded, a point without a successful run", status: s(v1alpha1.SuiteSucceeded, "24/24", "Incomplete", "", objectives(metav1.ConditionUnknown, "not every point has finished or succeeded yet")),
			want: want{"Healthy", "Succeeded (24/24 runs), verdict Incomplete", "Current"}},
		{name: "Succeeded, objectives missed", status: s(v1alpha1.SuiteSucceeded, "24/24", "Missed", "",
			objectives(metav1.ConditionFalse, "mqtt-delay5ms-losspercent10: lost == 0: measured 31")),
			want: want{"Degraded", "objectives missed: mqtt-delay5ms-losspercent10: lost == 0: measured 31", "Failed"}},
		{name: "Failed", status: s(v1alpha1.SuiteFailed, "3/24", "Incomplete", "run ipsj-tlstrue-r1 failed (failurePolicy Stop): the broker did not start"),
			want: want{"Degraded", "run ipsj-tlstrue-r1 failed (failurePolicy Stop): the broker did not start", "Failed"}},
		{name: "Failed without a message", status: s(v1alpha1.SuiteFailed, "3/24", "", ""), want: want{"Degraded", "Failed (3/24 runs)", "Failed"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			su := &v1alpha1.MessagingBenchmarkSuite{
				TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "MessagingBenchmarkSuite"},
				ObjectMeta: metav1.ObjectMeta{Name: "ipsj2022-mqtt-vs-mqtts", Namespace: "bench", Generation: max(c.gen, 1)},
				Status:     c.status,
			}
			check(t, script, flux, unstructuredOf(t, su, c.noStatus), c.want)
		})
	}
}

// TestDocsShowTheFiles keeps docs/gitops.md from drifting: it must contain each file of
// docs/gitops/ verbatim, and its argocd-cm the same scripts under the keys Argo CD looks up.
func TestDocsShowTheFiles(t *testing.T) {
	doc := read(t, "gitops.md")
	for _, f := range []struct{ file, lang string }{{benchmarkScript, "lua"}, {suiteScript, "lua"}, {fluxFile, "yaml"}} {
		content := read(t, "gitops", f.file)
		if !strings.Contains(doc, "```"+f.lang+"\n"+content+"```\n") {
			t.Errorf("docs/gitops.md does not show docs/gitops/%s verbatim in a %s block", f.file, f.lang)
		}
	}
	var cm *corev1.ConfigMap
	for _, block := range strings.Split(doc, "```yaml\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		if !strings.Contains(block, "kind: ConfigMap") {
			continue
		}
		cm = &corev1.ConfigMap{}
		if err := yaml.UnmarshalStrict([]byte(block), cm); err != nil {
			t.Fatalf("the argocd-cm of docs/gitops.md: %v", err)
		}
	}
	if cm == nil || cm.Name != "argocd-cm" {
		t.Fatalf("docs/gitops.md shows no argocd-cm ConfigMap")
	}
	for kind, file := range map[string]string{"MessagingBenchmark": benchmarkScript, "MessagingBenchmarkSuite": suiteScript} {
		key := "resource.customizations.health." + v1alpha1.GroupVersion.Group + "_" + kind
		if got, want := cm.Data[key], read(t, "gitops", file); got != want {
			t.Errorf("argocd-cm %s differs from docs/gitops/%s", key, file)
		}
	}
	if len(cm.Data) != 2 {
		t.Errorf("argocd-cm has %d keys, want the two health checks", len(cm.Data))
	}
}
