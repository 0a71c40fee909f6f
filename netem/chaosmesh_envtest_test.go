package netem

import (
	"context"
	"fmt"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbench/msgbench/internal/testenv"
)

// TestNetworkChaosOnAPIServer creates every generated NetworkChaos on a real kube-apiserver with
// the NetworkChaos CRD installed: the project's minimal one, or Chaos Mesh's own when
// MSGBENCH_THIRD_PARTY_CRDS names a folder holding it. The server must accept each object and
// keep every field: a structural schema prunes unknown fields, so a misspelled one shows up as a
// difference. The status documents of TestChaosInjection go through the same server, so they
// follow the real schema too.
func TestNetworkChaosOnAPIServer(t *testing.T) {
	env, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	t.Logf("NetworkChaos CRD from %s", env.ThirdPartyCRDs)
	ctx := context.Background()
	if !env.HasCRD(ctx, NetworkChaosGVK) {
		t.Fatalf("the API server does not serve %v; CRDs came from %s", NetworkChaosGVK, env.ThirdPartyCRDs)
	}
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}); err != nil {
		t.Fatal(err)
	}

	t.Run("generated objects", func(t *testing.T) {
		benchmarks := allBenchmarks(t)
		names := make([]string, 0, len(benchmarks))
		for name := range benchmarks {
			names = append(names, name)
		}
		sort.Strings(names)
		created := 0
		for _, name := range names {
			objs, err := chaosOf(benchmarks[name])
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, obj := range objs {
				sent := obj.DeepCopy()
				if err := env.Client.Create(ctx, obj); err != nil {
					t.Errorf("%s: create %s: %v", name, sent.GetName(), err)
					continue
				}
				created++
				got := &unstructured.Unstructured{}
				got.SetGroupVersionKind(NetworkChaosGVK)
				if err := env.Client.Get(ctx, client.ObjectKeyFromObject(sent), got); err != nil {
					t.Fatal(err)
				}
				if !equality.Semantic.DeepEqual(got.Object["spec"], sent.Object["spec"]) {
					t.Errorf("%s: the API server changed the spec of %s (pruned or defaulted a field):\nsent %v\ngot  %v", name, sent.GetName(), sent.Object["spec"], got.Object["spec"])
				}
				if !equality.Semantic.DeepEqual(got.GetLabels(), sent.GetLabels()) {
					t.Errorf("%s: labels %v, sent %v", name, got.GetLabels(), sent.GetLabels())
				}
			}
		}
		// 11 samples and 6 synthetic benchmarks with impairment (one with every correlation);
		// the uplink-only and external-broker ones have one object, every other two.
		if created != 32 {
			t.Errorf("created %d NetworkChaos objects, want 32", created)
		}
	})

	t.Run("status documents", func(t *testing.T) {
		for i, tc := range statusCases {
			obj := readStatusDoc(t, tc.file)
			obj.SetName(fmt.Sprintf("status-%d", i))
			if err := env.Client.Create(ctx, obj.DeepCopy()); err != nil {
				t.Fatalf("%s: %v", tc.file, err)
			}
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(NetworkChaosGVK)
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(got.Object["status"], obj.Object["status"]) {
				t.Errorf("%s: the API server changed the status:\nsent %v\ngot  %v", tc.file, obj.Object["status"], got.Object["status"])
			}
			state, msg := ChaosInjection(got)
			checkInjection(t, state, msg, tc.state, tc.msg)
		}
	})
}
