package netem

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// LabelNetworkStep marks the NetworkChaos objects of one step of spec.network.timeline with
// the step's place in ResolveTimeline's list.
const LabelNetworkStep = "msgbench.io/network-step"

// StepChaosSuffix is the ChaosName suffix of step k's objects in direction dir ("up", "down").
func StepChaosSuffix(k int, dir string) string { return "s" + strconv.Itoa(k) + "-" + dir }

// TimelineNetworkChaos builds the NetworkChaos objects that give mb's pods the link of step k
// of steps (ResolveTimeline's list): like NetworkChaos for spec.network, one netem action per
// impaired direction, named <benchmark>-net-s<k>-up and -down and labelled LabelNetworkStep=k;
// none when the step's link is unimpaired. The operator creates them at the step's time and
// then deletes the objects of the link before, so that one link is in force at a time.
//
// An outage is 100 % loss each way. With an external broker Chaos Mesh cannot shape the
// broker's egress, so there an outage drops the uplink only — the devices' packets reach
// nothing, which stops every exchange just the same — and any other step that impairs the
// downlink is refused, naming the step.
func TimelineNetworkChaos(mb *v1alpha1.MessagingBenchmark, steps []Step, k int, direct bool) ([]*unstructured.Unstructured, error) {
	if k < 0 || k >= len(steps) {
		return nil, fmt.Errorf("timeline step %d of %d", k, len(steps))
	}
	s := steps[k]
	link := s.Link
	external, err := externalTarget(mb, direct)
	if err != nil {
		return nil, err
	}
	if external != "" {
		if s.Index >= 0 && mb.Spec.Network.Timeline[s.Index].Outage {
			link.Down = Impairment{}
		}
		if !link.Down.IsZero() {
			return nil, fmt.Errorf("%s: the broker (or gateway) is external, so Chaos Mesh cannot shape its egress toward the workers, and this step impairs the downlink; set spec.network.direction: to", s.Path())
		}
	}
	if s.Index >= 0 {
		st := mb.Spec.Network.Timeline[s.Index]
		if st.GilbertElliott != nil || (st.Up != nil && st.Up.GilbertElliott != nil) || (st.Down != nil && st.Down.GilbertElliott != nil) {
			return nil, fmt.Errorf("%s.gilbertElliott: Chaos Mesh's NetworkChaos has no Gilbert-Elliott loss (tc netem's gemodel); use lossPercent with correlation on Kubernetes, or run the manifest with msgbench run", s.Path())
		}
	}
	var objs []*unstructured.Unstructured
	if !link.Up.IsZero() {
		objs = append(objs, networkChaos(mb, StepChaosSuffix(k, "up"), link.Up, workerSelector(mb), serverSelector(mb), external))
	}
	if !link.Down.IsZero() {
		objs = append(objs, networkChaos(mb, StepChaosSuffix(k, "down"), link.Down, serverSelector(mb), workerSelector(mb), ""))
	}
	for _, o := range objs {
		labels := o.GetLabels()
		labels[LabelNetworkStep] = strconv.Itoa(k)
		o.SetLabels(labels)
	}
	return objs, nil
}
