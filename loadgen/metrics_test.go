package loadgen

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/plan"
	"github.com/msgbench/msgbench/suite"
)

// A suite's run labels its series with the suite, point and repetition; a component's series
// drop the worker and name the component.
func TestLabelsOfASuitesRun(t *testing.T) {
	mb := &v1alpha1.MessagingBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "study-p1-r2", Namespace: "lab"},
		Spec: v1alpha1.MessagingBenchmarkSpec{Protocol: v1alpha1.ProtocolMQTT, QoS: 2}}
	suite.Label(mb, "study", "qos2-64B", 2)
	p := &plan.Plan{Benchmark: plan.NameOf(mb), Groups: []plan.Group{{Protocol: mb.Spec.Protocol, QoS: mb.Spec.QoS}}}
	l := LabelsOf(p, 3).prometheus()
	want := map[string]string{"benchmark": "study-p1-r2", "namespace": "lab", "worker": "3", "protocol": "mqtt", "qos": "2",
		"suite": "study", "point": "qos2-64B", "repetition": "2"}
	for k, v := range want {
		if l[k] != v {
			t.Errorf("label %s = %q, want %q", k, l[k], v)
		}
	}
	c := LabelsOf(p, 3).Component("broker")
	if _, ok := c["worker"]; ok || c["component"] != "broker" || c["point"] != "qos2-64B" {
		t.Errorf("component labels %v", c)
	}
}
