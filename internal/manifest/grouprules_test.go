package manifest

import (
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/testenv"
	"github.com/msgbench/msgbench/plan"
)

// TestGroupRulesAgreeWithCompile holds the device-group rules of the CRD (CEL in
// api/v1alpha1/groups_types.go and on the spec) and of plan.Compile (plan/groups.go) equal, case
// by case: every spec of api/v1alpha1/testdata/invalid-groups.yaml breaks one rule, and both
// admission (the CRD's own schema and CEL rules, as `msgbench run` and the API server apply them;
// the API server itself: api/v1alpha1's TestInvalidManifestsAreRejectedNamingTheField) and the
// compile of the same spec, defaulted but not validated (a spec built in Go, or one the CRD let
// through), refuse it naming the same field. A rule only Go states would let the API server accept
// a spec that then fails at run time; a rule only CEL states would run a Go-built spec that
// `kubectl apply` refuses. Each case's fix, the fleet it breaks, is accepted by both.
func TestGroupRulesAgreeWithCompile(t *testing.T) {
	t.Parallel()
	cases, err := testenv.InvalidGroupCases()
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 20 {
		t.Fatalf("only %d cases", len(cases))
	}
	s, err := crdSchema()
	if err != nil {
		t.Fatal(err)
	}
	compile := func(t *testing.T, spec string) error {
		t.Helper()
		obj, err := read(docOf("groups", spec), "MessagingBenchmark")
		if err != nil {
			t.Fatal(err)
		}
		pruning.Prune(obj, s.structural, true)
		defaulting.Default(obj, s.structural)
		var mb v1alpha1.MessagingBenchmark
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &mb); err != nil {
			t.Fatal(err)
		}
		_, err = plan.Compile(&mb.Spec, plan.Local)
		return err
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			if tc.KubernetesOnly {
				t.Fatal("a device-group rule that only the API server applies belongs in invalid.yaml")
			}
			_, admitErr := Parse(docOf(tc.Name, tc.Spec))
			compileErr := compile(t, tc.Spec)
			for _, side := range []struct {
				name string
				err  error
			}{{"admission (CEL)", admitErr}, {"plan.Compile", compileErr}} {
				switch {
				case side.err == nil:
					t.Errorf("%s accepts it; want a refusal naming %s", side.name, tc.Field)
				case !strings.Contains(side.err.Error(), tc.Field):
					t.Errorf("%s refuses it without naming %s: %v", side.name, tc.Field, side.err)
				}
			}
			if testing.Verbose() {
				t.Logf("admission: %v\ncompile:   %v", admitErr, compileErr)
			}
		})
	}
	// The fleet the cases break, as it is: both accept it.
	const fleet = `protocol: mqtt
topics: [{name: t, pattern: "d/{index}", count: 2}]
groups:
- {name: sensors, count: 2, publish: {topics: t, interval: 1s, messages: 20}}
- {name: backend, count: 2, start: 12s, subscribe: {filter: d/+, share: s}}
- {name: meters, count: 2, protocol: mqtt-sn, publish: {topics: t, rate: 100, messages: 600, payloadBytes: 65498}}
- {name: dashboards, count: 2, subscribe: {topics: t}}
workload: {warmup: 5s, duration: 10s}`
	// A run that ends on message counts (every publishing group has messages) waits for its late
	// groups: a start after warmup + duration is no error there.
	const broadcast = `protocol: mqtt
topics: [{name: t, pattern: "d/{index}", count: 2}]
groups:
- {name: sensors, count: 2, publish: {topics: t, interval: 1s, messages: 20}}
- {name: late, count: 1, start: 8s, subscribe: {filter: d/+}}
workload: {warmup: 0s, duration: 3s}`
	for _, f := range []string{fleet, broadcast} {
		if _, err := Parse(docOf("fleet", f)); err != nil {
			t.Errorf("admission refuses a valid fleet: %v\n%s", err, f)
		}
		if err := compile(t, f); err != nil {
			t.Errorf("plan.Compile refuses a valid fleet: %v\n%s", err, f)
		}
	}
}

// docOf is a MessagingBenchmark manifest named name with spec.
func docOf(name, spec string) []byte {
	return []byte("apiVersion: msgbench.io/v1alpha1\nkind: MessagingBenchmark\nmetadata:\n  name: " + name + "\nspec:\n  " +
		strings.ReplaceAll(strings.TrimSpace(spec), "\n", "\n  ") + "\n")
}
