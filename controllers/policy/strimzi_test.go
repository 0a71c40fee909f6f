package policy

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestStrimziReady(t *testing.T) {
	obj := func(gen, observed int64, conds ...map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"observedGeneration": observed}}}
		u.SetName("k")
		u.SetGeneration(gen)
		var cs []any
		for _, c := range conds {
			cs = append(cs, c)
		}
		if cs != nil {
			_ = unstructured.SetNestedSlice(u.Object, cs, "status", "conditions")
		}
		return u
	}
	ready := map[string]any{"type": "Ready", "status": "True"}
	for _, c := range []struct {
		name  string
		u     *unstructured.Unstructured
		ready bool
		why   string
	}{
		{"not created", &unstructured.Unstructured{Object: map[string]any{}}, false, "not created yet"},
		{"ready for this generation", obj(2, 2, ready), true, ""},
		{"ready for an older generation", obj(3, 2, ready), false, "Strimzi has not yet observed generation 3 (status is for 2)"},
		{"Strimzi's own words", obj(1, 1, map[string]any{"type": "NotReady", "status": "True", "reason": "Creating", "message": "Kafka cluster is being deployed"}),
			false, "Creating Kafka cluster is being deployed"},
		{"an error", obj(1, 1, map[string]any{"type": "Ready", "status": "False", "reason": "InvalidConfigurationException", "message": "bad replicas"}),
			false, "InvalidConfigurationException bad replicas"},
		{"no conditions yet", obj(1, 0), false, "Strimzi has not reported it ready yet"},
	} {
		if ok, why := StrimziReady(c.u); ok != c.ready || why != c.why {
			t.Errorf("%s: StrimziReady = %v %q, want %v %q", c.name, ok, why, c.ready, c.why)
		}
	}
}

func TestSameBootstrap(t *testing.T) {
	for _, c := range []struct {
		reported, want string
		same           bool
	}{
		{"b-kafka-bootstrap.ns.svc:9092", "b-kafka-bootstrap.ns.svc:9092", true},
		{"b-kafka-bootstrap.ns.svc.cluster.local:9092", "b-kafka-bootstrap.ns.svc:9092", true},
		{"other:9092, b-kafka-bootstrap.ns.svc:9092", "b-kafka-bootstrap.ns.svc:9092", true},
		{"b-kafka-bootstrap.ns.svc:9093", "b-kafka-bootstrap.ns.svc:9092", false},
		{"", "b-kafka-bootstrap.ns.svc:9092", false},
	} {
		if got := SameBootstrap(c.reported, c.want); got != c.same {
			t.Errorf("SameBootstrap(%q, %q) = %v", c.reported, c.want, got)
		}
	}
}
