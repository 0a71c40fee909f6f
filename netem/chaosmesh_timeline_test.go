package netem

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// TestTimelineNetworkChaos: each step's objects are named and labelled by the step, select the
// same pods as spec.network's, and carry the step's whole link; an outage is 100 % loss each
// way; an unimpaired step has none.
func TestTimelineNetworkChaos(t *testing.T) {
	mb := &v1alpha1.MessagingBenchmark{}
	mb.Name, mb.Namespace = "handover", "bench"
	mb.Spec.Protocol = v1alpha1.ProtocolMQTT
	mb.Spec.Network = v1alpha1.NetworkSpec{Profile: v1alpha1.ProfileNone, Timeline: []v1alpha1.NetworkStep{
		{At: at(time.Second), For: durp(time.Second), Outage: true},
		{At: at(5 * time.Second), Profile: "custom", LinkSpec: v1alpha1.LinkSpec{Delay: durp(300 * time.Millisecond)}, Down: &v1alpha1.LinkSpec{LossPercent: strp("2")}},
	}}
	steps, err := ResolveTimeline(mb.Spec.Network)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := chaosOf(mb)
	if len(steps) != 3 || len(base) != 0 {
		t.Fatalf("steps %+v, base objects %d", steps, len(base))
	}
	outage, err := TimelineNetworkChaos(mb, steps, 0, mb.Spec.GatewayMode() == "")
	if err != nil || len(outage) != 2 {
		t.Fatalf("outage: %d objects, %v", len(outage), err)
	}
	for i, dir := range []string{"up", "down"} {
		o := outage[i]
		if o.GetName() != "handover-net-s0-"+dir || o.GetLabels()[LabelNetworkStep] != "0" || o.GetLabels()[v1alpha1.LabelBenchmark] != "handover" {
			t.Errorf("%s: name %s labels %v", dir, o.GetName(), o.GetLabels())
		}
		if loss, _, _ := unstructured.NestedString(o.Object, "spec", "loss", "loss"); loss != "100" {
			t.Errorf("%s: loss %q, want 100", dir, loss)
		}
		if _, found, _ := unstructured.NestedMap(o.Object, "spec", "delay"); found {
			t.Errorf("%s: an outage has no delay block", dir)
		}
	}
	// The same pods as spec.network's objects: workers' egress up, the servers' down.
	if got, _, _ := unstructured.NestedString(outage[0].Object, "spec", "selector", "labelSelectors", v1alpha1.LabelComponent); got != v1alpha1.ComponentWorker {
		t.Errorf("up selects %q", got)
	}
	// The return to profile none impairs nothing.
	if back, err := TimelineNetworkChaos(mb, steps, 1, mb.Spec.GatewayMode() == ""); err != nil || len(back) != 0 {
		t.Errorf("return step: %d objects, %v", len(back), err)
	}
	custom, err := TimelineNetworkChaos(mb, steps, 2, mb.Spec.GatewayMode() == "")
	if err != nil || len(custom) != 2 {
		t.Fatalf("custom step: %d objects, %v", len(custom), err)
	}
	if lat, _, _ := unstructured.NestedString(custom[0].Object, "spec", "delay", "latency"); lat != "300ms" {
		t.Errorf("custom up latency %q", lat)
	}
	if _, found, _ := unstructured.NestedMap(custom[0].Object, "spec", "loss"); found {
		t.Error("custom up has the downlink's loss")
	}
	if loss, _, _ := unstructured.NestedString(custom[1].Object, "spec", "loss", "loss"); loss != "2" {
		t.Errorf("custom down loss %q", loss)
	}
}

// TestTimelineNetworkChaosExternalBroker: with an external broker an outage shapes the uplink
// only (toward the broker's host); a step impairing the downlink is refused, naming the step.
func TestTimelineNetworkChaosExternalBroker(t *testing.T) {
	mb := syntheticBenchmarks()["synthetic-external-broker"].DeepCopy()
	mb.Spec.Network.Timeline = []v1alpha1.NetworkStep{
		{At: at(time.Second), Outage: true},
		{At: at(2 * time.Second), Down: &v1alpha1.LinkSpec{Delay: durp(time.Second)}},
	}
	mb.Spec.Network.Direction = v1alpha1.DirectionBoth
	mb.Spec.Network.Profile = v1alpha1.ProfileNone
	steps, err := ResolveTimeline(mb.Spec.Network)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := TimelineNetworkChaos(mb, steps, 0, mb.Spec.GatewayMode() == "")
	if err != nil || len(objs) != 1 || objs[0].GetName() != "external-net-s0-up" {
		t.Fatalf("outage: %v, %v", objs, err)
	}
	if ext, _, _ := unstructured.NestedStringSlice(objs[0].Object, "spec", "externalTargets"); len(ext) != 1 || ext[0] != "mqtt.example.com" {
		t.Errorf("externalTargets %v", ext)
	}
	_, err = TimelineNetworkChaos(mb, steps, 1, mb.Spec.GatewayMode() == "")
	if err == nil || !strings.HasPrefix(err.Error(), "spec.network.timeline[1]: the broker (or gateway) is external") {
		t.Errorf("err = %v", err)
	}
}
