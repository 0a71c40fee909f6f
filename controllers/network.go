package controllers

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/netem"
	"github.com/msgbench/msgbench/results"
)

// applyNetworkChaos creates the benchmark's NetworkChaos objects — once the worker and broker
// or gateway pods exist, because Chaos Mesh selects pods when an object is created — and waits
// until Chaos Mesh confirms every injection. Chaos Mesh's own error (a node kernel without
// sch_netem, say) fails the run; no confirmation within InjectionTimeout fails it too.
func (r *Reconciler) applyNetworkChaos(ctx context.Context, st *run) (bool, error) {
	mb := st.mb
	if len(mb.Status.NetworkTimeline) > 0 {
		return true, nil // a timeline step's objects have replaced spec.network's (networkTimeline)
	}
	if err := checkTimelineChaos(mb, st.plan.Network.Steps, st.plan.DirectToBroker()); err != nil {
		return false, err
	}
	objs, err := netem.NetworkChaos(mb, st.plan.Network.Link, st.plan.DirectToBroker())
	if err != nil {
		return false, fail("spec.network: %v", err)
	}
	groups, err := resources.GroupNetworkChaos(mb, st.plan)
	if err != nil {
		return false, fail("%v", err)
	}
	objs = append(objs, groups...)
	if len(objs) == 0 {
		r.setCondition(st, v1alpha1.ConditionNetworkImpaired, metav1.ConditionFalse, "NoImpairment", "the resolved link impairs neither direction")
		return true, nil
	}
	var pending []string
	var oldest time.Time
	for _, o := range objs {
		o.SetOwnerReferences(resources.OwnerReferences(mb))
		if err := r.apply(ctx, o); err != nil {
			return false, err
		}
		cur := &unstructured.Unstructured{}
		cur.SetGroupVersionKind(netem.NetworkChaosGVK)
		if err := r.Get(ctx, client.ObjectKeyFromObject(o), cur); err != nil {
			return false, err
		}
		if oldest.IsZero() || cur.GetCreationTimestamp().Time.Before(oldest) {
			oldest = cur.GetCreationTimestamp().Time
		}
		state, msg := netem.ChaosInjection(cur)
		switch state {
		case netem.InjectionInjected:
		case netem.InjectionFailed:
			r.setCondition(st, v1alpha1.ConditionNetworkImpaired, metav1.ConditionFalse, "InjectionFailed", msg)
			return false, fail("Chaos Mesh could not inject the network impairment: %s", msg)
		default:
			pending = append(pending, msg)
		}
	}
	if len(pending) > 0 {
		msg := strings.Join(pending, "; ")
		r.setCondition(st, v1alpha1.ConditionNetworkImpaired, metav1.ConditionFalse, "Injecting", msg)
		if waited := r.Now().Sub(oldest); waited > r.InjectionTimeout {
			return false, fail("Chaos Mesh did not confirm the network impairment within %s: %s", r.InjectionTimeout, msg)
		}
		st.waiting = "waiting for Chaos Mesh to inject the network impairment: " + msg
		return false, nil
	}
	what := fmt.Sprintf("profile %s", st.plan.Network.Profile)
	if len(groups) > 0 {
		var links []string
		for _, s := range st.plan.Placement() {
			if s.Linked() {
				links = append(links, fmt.Sprintf("%s %s", s.Name, s.Network.Profile))
			}
		}
		what = "the groups' own links: " + strings.Join(links, ", ")
	}
	r.setCondition(st, v1alpha1.ConditionNetworkImpaired, metav1.ConditionTrue, "Injected",
		fmt.Sprintf("Chaos Mesh injected %d NetworkChaos (%s)", len(objs), what))
	return true, nil
}

// deleteNetworkChaos removes the benchmark's NetworkChaos objects: spec.network's, every
// timeline step's and every device group's own.
func (r *Reconciler) deleteNetworkChaos(ctx context.Context, st *run) error {
	// The groups' by their label: whatever links the spec had, none stays behind.
	var list unstructured.UnstructuredList
	list.SetGroupVersionKind(netem.NetworkChaosGVK)
	err := r.List(ctx, &list, client.InNamespace(st.mb.Namespace), client.HasLabels{v1alpha1.LabelGroup},
		client.MatchingLabels{v1alpha1.LabelBenchmark: v1alpha1.LabelValue(st.mb.Name), v1alpha1.LabelComponent: v1alpha1.ComponentNetwork})
	if err != nil && !isNoKind(err) {
		return err
	}
	for i := range list.Items {
		if err := r.Delete(ctx, &list.Items[i]); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	names := []string{"up", "down"}
	if st.plan != nil {
		for k := range st.plan.Network.Steps {
			names = append(names, netem.StepChaosSuffix(k, "up"), netem.StepChaosSuffix(k, "down"))
		}
	}
	for _, dir := range names {
		o := &unstructured.Unstructured{}
		o.SetGroupVersionKind(netem.NetworkChaosGVK)
		o.SetNamespace(st.mb.Namespace)
		o.SetName(netem.ChaosName(st.mb.Name, dir))
		if err := r.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) && !isNoKind(err) {
			return err
		}
	}
	return nil
}

// networkTimeline keeps the NetworkChaos of spec.network.timeline's current step in place while
// the workers measure. The steps' times count from the measured window's start: the workers'
// agreed start (status.startTime) plus the warm-up. At a step's time the operator creates the
// step's objects, then deletes the link's before (spec.network's, or the previous step's), so
// the pods never go unimpaired in between; status.networkTimeline records each step applied,
// and when. It never holds the run up; it asks to be woken at the next step's time.
func (r *Reconciler) networkTimeline(ctx context.Context, st *run) (bool, error) {
	mb := st.mb
	if len(st.plan.Network.Steps) == 0 || mb.Status.StartTime == nil {
		return true, nil
	}
	steps := st.plan.Network.Steps
	window := mb.Status.StartTime.Add(st.plan.Timing.Warmup)
	now := r.Now()
	cur := netem.CurrentStep(steps, now.Sub(window))
	if cur+1 < len(steps) {
		st.wakeAt(window.Add(steps[cur+1].At))
	}
	if cur < 0 {
		return true, nil
	}
	objs, err := netem.TimelineNetworkChaos(mb, steps, cur, st.plan.DirectToBroker())
	if err != nil {
		return false, fail("%v", err)
	}
	keep := map[string]bool{}
	for _, o := range objs {
		o.SetOwnerReferences(resources.OwnerReferences(mb))
		if err := r.apply(ctx, o); err != nil {
			return false, err
		}
		keep[o.GetName()] = true
	}
	if !recorded(mb.Status.NetworkTimeline, steps[cur]) {
		s := v1alpha1.NetworkStepStatus{At: metav1.Duration{Duration: steps[cur].At}, Description: steps[cur].Description,
			AppliedTime: metav1.NewMicroTime(r.Now())}
		if i := steps[cur].Index; i >= 0 {
			s.Step = ptr(int32(i))
		}
		mb.Status.NetworkTimeline = append(mb.Status.NetworkTimeline, s)
		r.setCondition(st, v1alpha1.ConditionNetworkImpaired, metav1.ConditionTrue, "TimelineStep",
			fmt.Sprintf("%s (%s) applied %.3fs into the measured window (planned %s)", steps[cur].Path(), steps[cur].Description,
				now.Sub(window).Seconds(), steps[cur].At))
	}
	// Then the link before goes: every other NetworkChaos of the benchmark.
	var list unstructured.UnstructuredList
	list.SetGroupVersionKind(netem.NetworkChaosGVK)
	if err := r.List(ctx, &list, client.InNamespace(mb.Namespace),
		client.MatchingLabels{v1alpha1.LabelBenchmark: v1alpha1.LabelValue(mb.Name), v1alpha1.LabelComponent: v1alpha1.ComponentNetwork}); err != nil {
		return false, err
	}
	for i := range list.Items {
		o := &list.Items[i]
		if keep[o.GetName()] || o.GetDeletionTimestamp() != nil || o.GetLabels()[v1alpha1.LabelGroup] != "" {
			continue
		}
		if err := r.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
			return false, err
		}
	}
	// Chaos Mesh's own error on a step's object fails the run, as it does for spec.network's.
	for _, o := range objs {
		cur := &unstructured.Unstructured{}
		cur.SetGroupVersionKind(netem.NetworkChaosGVK)
		if err := r.Get(ctx, client.ObjectKeyFromObject(o), cur); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		if state, msg := netem.ChaosInjection(cur); state == netem.InjectionFailed {
			return false, fail("Chaos Mesh could not inject %s: %s", o.GetName(), msg)
		}
	}
	return true, nil
}

// checkTimelineChaos refuses, before the workers connect, a timeline step Chaos Mesh cannot
// apply (the plan checked the steps' times and outages against the window and keep-alive).
func checkTimelineChaos(mb *v1alpha1.MessagingBenchmark, steps []netem.Step, direct bool) error {
	for k := range steps {
		if _, err := netem.TimelineNetworkChaos(mb, steps, k, direct); err != nil {
			return fail("%v", err)
		}
	}
	return nil
}

// recorded reports whether status already lists step s.
func recorded(applied []v1alpha1.NetworkStepStatus, s netem.Step) bool {
	for _, a := range applied {
		if a.At.Duration == s.At {
			return true
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }

// timelineMarks is status.networkTimeline as the result's network.timeline: each step's time
// in seconds since the measured window began, as applied and as planned.
func timelineMarks(mb *v1alpha1.MessagingBenchmark, warmup time.Duration) []results.NetworkStepMark {
	if len(mb.Status.NetworkTimeline) == 0 || mb.Status.StartTime == nil {
		return nil
	}
	window := mb.Status.StartTime.Add(warmup)
	marks := make([]results.NetworkStepMark, 0, len(mb.Status.NetworkTimeline))
	for _, s := range mb.Status.NetworkTimeline {
		m := results.NetworkStepMark{At: s.AppliedTime.Sub(window).Seconds(), Planned: s.At.Seconds(), Description: s.Description}
		if s.Step != nil {
			m.Step = ptr(int(*s.Step))
		}
		marks = append(marks, m)
	}
	return marks
}
