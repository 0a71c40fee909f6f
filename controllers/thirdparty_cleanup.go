package controllers

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// thirdPartyObjects are the Strimzi objects of a run, for cleanup (NetworkChaos objects are
// deleted by deleteNetworkChaos).
func (r *Reconciler) thirdPartyObjects(st *run) []client.Object { return r.kafkaObjects(st) }

// isNoKind reports a delete of a kind whose CRD is not installed.
func isNoKind(err error) bool { return meta.IsNoMatchError(err) }
