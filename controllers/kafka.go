package controllers

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/controllers/policy"
	"github.com/msgbench/msgbench/controllers/resources"
)

// applyKafka applies the Strimzi Kafka, KafkaNodePool and KafkaTopics and waits until Strimzi
// reports the Kafka and every topic ready for their current generation, and the workers'
// listener at the bootstrap address the workers are given. What Strimzi says while it is not
// ready (its NotReady reason and message) becomes the BrokerReady condition and the run's
// message, so a cluster that cannot start shows why before the run times out.
func (r *Reconciler) applyKafka(ctx context.Context, st *run) (bool, error) {
	mb := st.mb
	cluster := resources.KafkaClusterName(mb)
	if meta.IsStatusConditionTrue(mb.Status.Conditions, v1alpha1.ConditionBrokerReady) {
		// Once ready, only the Kafka is observed again (not every topic) on each reconcile.
		k, err := r.getStrimzi(ctx, resources.KafkaGVK, mb.Namespace, cluster)
		if err != nil {
			return false, err
		}
		if ok, _ := policy.StrimziReady(k); ok {
			return true, nil
		}
	}
	objs, err := resources.KafkaObjects(mb, st.plan)
	if err != nil {
		return false, fail("%v", err)
	}
	for _, o := range objs {
		if err := r.apply(ctx, o); err != nil {
			return false, err
		}
	}
	waiting := func(reason, msg string) (bool, error) {
		r.setCondition(st, v1alpha1.ConditionBrokerReady, metav1.ConditionFalse, reason, msg)
		st.waiting = "waiting for the broker: " + msg
		return false, nil
	}

	k, err := r.getStrimzi(ctx, resources.KafkaGVK, mb.Namespace, cluster)
	if err != nil {
		return false, err
	}
	if ok, why := policy.StrimziReady(k); !ok {
		return waiting("KafkaNotReady", fmt.Sprintf("Strimzi Kafka %s: %s", cluster, why))
	}
	topics := resources.KafkaTopics(mb)
	ready := 0
	var firstWhy string
	for _, t := range topics {
		kt, err := r.getStrimzi(ctx, resources.KafkaTopicGVK, mb.Namespace, t.GetName())
		if err != nil {
			return false, err
		}
		if ok, why := policy.StrimziReady(kt); ok {
			ready++
		} else if firstWhy == "" {
			firstWhy = fmt.Sprintf("KafkaTopic %s: %s", t.GetName(), why)
		}
	}
	if ready < len(topics) {
		return waiting("TopicsNotReady", fmt.Sprintf("%d/%d KafkaTopics ready (%s)", ready, len(topics), firstWhy))
	}

	listener, _ := resources.KafkaListener(st.plan)
	reported := policy.BootstrapServers(k, listener)
	if reported == "" {
		return waiting("NoListener", fmt.Sprintf("Strimzi Kafka %s reports no %q listener in status.listeners yet", cluster, listener))
	}
	want := resources.KafkaBootstrapAddress(mb, st.plan)
	if !policy.SameBootstrap(reported, want) {
		return false, fail("Strimzi Kafka %s reports bootstrap %s for listener %q, but the workers are set up for %s", cluster, reported, listener, want)
	}
	version, _, _ := unstructured.NestedString(k.Object, "status", "kafkaVersion")
	r.setCondition(st, v1alpha1.ConditionBrokerReady, metav1.ConditionTrue, "Ready",
		fmt.Sprintf("Strimzi Kafka %s (Kafka %s) and %d KafkaTopics are ready; workers bootstrap from %s (listener %s)", cluster, version, len(topics), want, listener))
	return true, nil
}

func (r *Reconciler) getStrimzi(ctx context.Context, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)
	if apierrors.IsNotFound(err) {
		// Just applied: the cache has not seen it yet. Not ready, not an error.
		return u, nil
	}
	return u, err
}

// kafkaObjects are the run's Strimzi objects, for cleanup (none unless broker type is kafka).
func (r *Reconciler) kafkaObjects(st *run) []client.Object {
	if st.mb.Spec.Broker.Type != v1alpha1.BrokerKafka {
		return nil
	}
	mb := st.mb
	var out []client.Object
	add := func(gvk schema.GroupVersionKind, name string) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace(mb.Namespace)
		u.SetName(name)
		out = append(out, u)
	}
	// Topics first: the Topic Operator finalizes them while the cluster still runs.
	for t := 0; t < int(mb.Spec.Workload.Topics); t++ {
		add(resources.KafkaTopicGVK, resources.KafkaTopicName(mb, t))
	}
	add(resources.KafkaNodePoolGVK, resources.KafkaClusterName(mb))
	add(resources.KafkaGVK, resources.KafkaClusterName(mb))
	return out
}
