package controllers

import (
	"context"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/controllers/resources"
)

// finish cleans up after a finished run as spec.cleanup says, and deletes the benchmark
// itself ttlSecondsAfterFinished after it finished. The result ConfigMap stays as long as the
// benchmark does.
func (r *Reconciler) finish(ctx context.Context, st *run) (ctrl.Result, error) {
	mb := st.mb
	st.phase = mb.Status.Phase
	clean := mb.Spec.Cleanup == v1alpha1.CleanupOnCompletion || mb.Spec.Cleanup == "" ||
		(mb.Spec.Cleanup == v1alpha1.CleanupOnSuccess && mb.Status.Phase == v1alpha1.PhaseSucceeded)
	// Cleanup runs once per run: the deletions it causes bring the benchmark back here, and
	// deleting again would be one request per object for nothing (an operator restarted
	// afterwards deletes once more, finding nothing).
	if clean && !r.applied.exists("cleaned/"+string(mb.UID)) {
		if err := r.cleanup(ctx, st); err != nil {
			return ctrl.Result{}, err
		}
		r.applied.markExists("cleaned/" + string(mb.UID))
	}
	if mb.Spec.TTLSecondsAfterFinished == nil || mb.Status.CompletionTime == nil {
		return ctrl.Result{}, nil
	}
	deleteAt := mb.Status.CompletionTime.Add(time.Duration(*mb.Spec.TTLSecondsAfterFinished) * time.Second)
	if left := deleteAt.Sub(r.Now()); left > 0 {
		return ctrl.Result{RequeueAfter: left}, nil
	}
	if err := r.Delete(ctx, mb); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// cleanup deletes everything the run created except the result ConfigMap.
func (r *Reconciler) cleanup(ctx context.Context, st *run) error {
	ns, n, spec := st.mb.Namespace, st.names, &st.mb.Spec
	objs := []client.Object{
		&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: n.Workers, Namespace: ns}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n.Spec, Namespace: ns}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: n.Control, Namespace: ns}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: n.WorkerServiceAccount, Namespace: ns}},
	}
	// Only what this spec made: a request for an object that never existed is a request for nothing.
	if spec.Broker.Type.MQTTBroker() {
		objs = append(objs,
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: n.Broker, Namespace: ns}},
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: n.Broker, Namespace: ns}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n.BrokerConfig, Namespace: ns}})
	}
	// The plan says which gateways ran; a spec that no longer compiles (nothing was created for
	// it, or an older operator created it) gets the request for the one gateway anyway.
	gateways := []string{n.Gateway}
	if st.plan != nil {
		gateways = gateways[:0]
		for _, mode := range st.plan.GatewayModes() {
			gateways = append(gateways, resources.GatewayName(st.mb, st.plan, mode))
		}
		// Each group behind its own link, or with a placement of its own, had a Job of its own.
		for _, s := range st.plan.Placement() {
			if s.Own() {
				objs = append(objs, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: resources.WorkersJobName(st.mb, s), Namespace: ns}})
			}
		}
	}
	for _, g := range gateways {
		objs = append(objs,
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: g, Namespace: ns}},
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: g, Namespace: ns}})
	}
	if st.plan == nil || st.plan.NeedsCertificate() {
		objs = append(objs, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: n.TLS, Namespace: ns}})
	}
	if cc := spec.ClientCertificates(); cc != nil && (cc.CA == nil || cc.CA.SecretRef == nil) {
		objs = append(objs, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: n.ClientCA, Namespace: ns}})
	}
	objs = append(objs, r.thirdPartyObjects(st)...)
	if spec.Impaired() || slices.ContainsFunc(spec.Groups, func(g v1alpha1.DeviceGroupSpec) bool { return g.Network != nil }) {
		if err := r.deleteNetworkChaos(ctx, st); err != nil {
			return err
		}
	}
	for _, o := range objs {
		err := r.Delete(ctx, o, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if err != nil && !apierrors.IsNotFound(err) && !isNoKind(err) {
			return err
		}
	}
	return nil
}
