package v1alpha1_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/msgbench/msgbench/api/v1alpha1"
)

// TestStatusSummaryPerGroup: the API server stores the status summary's groups (a list keyed by
// name), refuses one group twice and more groups than spec.groups may have.
func TestStatusSummaryPerGroup(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	obj := newManifest(t, ns, "fleet", "protocol: mqtt\nqos: 1")
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(obj)
	get := func() *v1.MessagingBenchmark {
		t.Helper()
		var mb v1.MessagingBenchmark
		if err := env.Client.Get(ctx, key, &mb); err != nil {
			t.Fatal(err)
		}
		return &mb
	}
	lost, p99 := int64(3), int64(850)
	groups := []v1.GroupSummary{
		{Name: "sensors", Sent: 1000},
		{Name: "edge-backend", Received: 997, Lost: &lost, EndToEndP99Micros: &p99},
	}
	mb := get()
	mb.Status.Phase = v1.PhaseSucceeded
	mb.Status.Summary = &v1.ResultSummary{Sent: 1000, Received: 997, Lost: 3, Groups: groups}
	if err := env.Client.Status().Update(ctx, mb); err != nil {
		t.Fatal(err)
	}
	if got := get().Status.Summary.Groups; !reflect.DeepEqual(got, groups) {
		t.Errorf("stored groups %+v, want %+v", got, groups)
	}
	for _, c := range []struct {
		groups []v1.GroupSummary
		want   string
	}{
		{[]v1.GroupSummary{{Name: "sensors"}, {Name: "sensors", Sent: 1}}, "Duplicate value"},
		{make([]v1.GroupSummary, 33), "must have at most 32 items"},
	} {
		for i := range c.groups {
			if c.groups[i].Name == "" {
				c.groups[i].Name = fmt.Sprintf("g%d", i)
			}
		}
		mb := get()
		mb.Status.Summary.Groups = c.groups
		if err := env.Client.Status().Update(ctx, mb); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "status.summary.groups") {
			t.Errorf("%d groups: %v, want it to say %q", len(c.groups), err, c.want)
		}
	}
}
