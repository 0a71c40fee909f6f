package controllers

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// applyNetworkChaos creates the benchmark's NetworkChaos objects and waits until Chaos Mesh
// confirms the injection. (Completed together with the netem package.)
func (r *Reconciler) applyNetworkChaos(_ context.Context, _ *run) (bool, error) {
	return false, fail("network impairment on Kubernetes is not available in this build")
}

// thirdPartyObjects are the Chaos Mesh and Strimzi objects of a run, for cleanup.
func (r *Reconciler) thirdPartyObjects(st *run) []client.Object { return r.kafkaObjects(st) }

// isNoKind reports a delete of a kind whose CRD is not installed.
func isNoKind(err error) bool { return meta.IsNoMatchError(err) }
