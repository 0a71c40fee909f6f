package policy

import (
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/results"
)

func TestMeasurementConditions(t *testing.T) {
	spec := func(rate int32) *v1alpha1.MessagingBenchmarkSpec {
		return &v1alpha1.MessagingBenchmarkSpec{Workload: v1alpha1.WorkloadSpec{Rate: rate}}
	}
	find := func(cs []metav1.Condition, typ string) *metav1.Condition {
		for i := range cs {
			if cs[i].Type == typ {
				return &cs[i]
			}
		}
		return nil
	}
	// Closed loop, nothing seen: no load condition, Caveats False.
	cs := MeasurementConditions(&results.Result{Spec: spec(0), Sent: 10})
	if find(cs, v1alpha1.ConditionOfferedLoadSustained) != nil || find(cs, v1alpha1.ConditionCaveats).Status != metav1.ConditionFalse {
		t.Errorf("closed loop: %+v", cs)
	}
	// Open loop with unsent messages and two caveats.
	r := &results.Result{Spec: spec(400), Sent: 97, Unsent: 695, Caveats: []results.Caveat{
		{Type: results.CaveatOfferedLoadNotSustained, Message: "695 unsent"}, {Type: results.CaveatCPUSteal, Message: "5 % stolen"}}}
	cs = MeasurementConditions(r)
	load := find(cs, v1alpha1.ConditionOfferedLoadSustained)
	if load == nil || load.Status != metav1.ConditionFalse || load.Reason != results.CaveatOfferedLoadNotSustained || !strings.Contains(load.Message, "695 of the 792") {
		t.Errorf("offered load condition %+v", load)
	}
	cv := find(cs, v1alpha1.ConditionCaveats)
	if cv.Status != metav1.ConditionTrue || cv.Reason != "OfferedLoadNotSustained,CPUSteal" || !strings.Contains(cv.Message, "CPUSteal: 5 % stolen") {
		t.Errorf("caveats condition %+v", cv)
	}
	// Every reason is one the API server accepts (metav1.Condition's reason pattern).
	reason := regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)
	for _, c := range cs {
		if !reason.MatchString(c.Reason) {
			t.Errorf("reason %q does not match the Condition schema", c.Reason)
		}
	}
}

// TestSummaryCPUNeverRoundsToZero: the status counts CPU in whole milliseconds; a broker that used
// 0.3 ms (counted in ns) used something, and a status of 0 ms read as a failed measurement (#31).
func TestSummaryCPUNeverRoundsToZero(t *testing.T) {
	for _, c := range []struct {
		sec  float64
		want int64
	}{{0, 0}, {0.0003, 1}, {0.0006, 1}, {0.0024, 2}, {1.5, 1500}} {
		r := &results.Result{}
		r.Resources.BrokerCPUSeconds, r.Resources.GatewayCPUSeconds = &c.sec, &c.sec
		s := Summarize(r)
		if *s.BrokerCPUMillis != c.want || *s.GatewayCPUMillis != c.want {
			t.Errorf("%v s: broker %d ms, gateway %d ms, want %d", c.sec, *s.BrokerCPUMillis, *s.GatewayCPUMillis, c.want)
		}
	}
}
