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
)

// applyNetworkChaos creates the benchmark's NetworkChaos objects — once the worker and broker
// or gateway pods exist, because Chaos Mesh selects pods when an object is created — and waits
// until Chaos Mesh confirms every injection. Chaos Mesh's own error (a node kernel without
// sch_netem, say) fails the run; no confirmation within InjectionTimeout fails it too.
func (r *Reconciler) applyNetworkChaos(ctx context.Context, st *run) (bool, error) {
	mb := st.mb
	objs, err := netem.NetworkChaos(mb)
	if err != nil {
		return false, fail("spec.network: %v", err)
	}
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
	r.setCondition(st, v1alpha1.ConditionNetworkImpaired, metav1.ConditionTrue, "Injected",
		fmt.Sprintf("Chaos Mesh injected %d NetworkChaos (profile %s)", len(objs), mb.Spec.Network.Profile))
	return true, nil
}

// deleteNetworkChaos removes the benchmark's NetworkChaos objects.
func (r *Reconciler) deleteNetworkChaos(ctx context.Context, st *run) error {
	for _, dir := range []string{"up", "down"} {
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
