package controllers

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/netem"
	"github.com/msgbench/msgbench/plan"
)

// Third-party kinds the operator drives, declared where their objects are built.
var (
	networkChaosGVK = netem.NetworkChaosGVK
	kafkaGVK        = resources.KafkaGVK
)

// installed reports whether the API server serves gvk (its CRD is installed).
func (r *Reconciler) installed(gvk schema.GroupVersionKind) (bool, error) {
	_, err := r.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return false, nil
	}
	return err == nil, err
}

// network applies spec.network through Chaos Mesh.
func (r *Reconciler) network(ctx context.Context, st *run) (bool, error) {
	n := &st.plan.Network
	own := slices.ContainsFunc(st.plan.Placement(), func(s plan.WorkerSet) bool { return s.Linked() })
	if !n.Impaired && !own {
		r.setCondition(st, v1alpha1.ConditionNetworkImpaired, metav1.ConditionFalse, "NotRequested", "spec.network.profile is none")
		return true, nil
	}
	ok, err := r.installed(networkChaosGVK)
	if err != nil {
		return false, err
	}
	if !ok {
		what, instead := "spec.network.profile "+string(n.Profile), "set spec.network.profile to none"
		if len(n.Steps) > 0 {
			what, instead = "spec.network.timeline", "remove spec.network.timeline and set spec.network.profile to none"
		}
		if own {
			what, instead = "spec.groups[].network", "remove the groups' network, or run the manifest with msgbench run"
		}
		msg := fmt.Sprintf("%s asks for network impairment, but Chaos Mesh is not installed "+
			"(no chaos-mesh.org/v1alpha1 NetworkChaos CRD): install Chaos Mesh, or %s", what, instead)
		r.setCondition(st, v1alpha1.ConditionNetworkImpaired, metav1.ConditionFalse, "ChaosMeshNotInstalled", msg)
		return false, fail("%s", msg)
	}
	return r.applyNetworkChaos(ctx, st)
}

// kafkaBroker provisions Kafka through Strimzi.
func (r *Reconciler) kafkaBroker(ctx context.Context, st *run) (bool, error) {
	ok, err := r.installed(kafkaGVK)
	if err != nil {
		return false, err
	}
	if !ok {
		msg := "spec.broker.type kafka provisions Kafka through Strimzi, but Strimzi is not installed " +
			"(no kafka.strimzi.io/v1 Kafka CRD): install the Strimzi operator, or use spec.broker.type external"
		r.setCondition(st, v1alpha1.ConditionBrokerReady, metav1.ConditionFalse, "StrimziNotInstalled", msg)
		return false, fail("%s", msg)
	}
	return r.applyKafka(ctx, st)
}
