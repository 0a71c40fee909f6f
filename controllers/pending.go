package controllers

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// applyKafka creates the Strimzi Kafka, KafkaNodePool and KafkaTopics and waits until they are
// ready. (Completed together with the Kafka driver.)
func (r *Reconciler) applyKafka(_ context.Context, _ *run) (bool, error) {
	return false, fail("broker type kafka on Kubernetes is not available in this build")
}

// thirdPartyObjects are the Chaos Mesh and Strimzi objects of a run, for cleanup.
func (r *Reconciler) thirdPartyObjects(_ *run) []client.Object { return nil }

// isNoKind reports a delete of a kind whose CRD is not installed.
func isNoKind(err error) bool { return meta.IsNoMatchError(err) }
