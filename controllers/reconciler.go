// Package controllers holds the MessagingBenchmark reconciler. Each reconcile observes the world
// (owned objects, worker pods, the workers' control endpoints), walks the run's steps in order —
// common objects, broker, gateway, network, workers, start, run, collect — and derives the
// status from what it saw; the only remembered decisions are in the status itself (the agreed
// start time, the collected summary). The object builders are in controllers/resources.
package controllers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/controllers/policy"
	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/plan"
	"github.com/msgbench/msgbench/results/store"
)

// FieldOwner is the operator's name in server-side apply.
const FieldOwner = "msgbench-operator"

// The operator's RBAC is generated from these markers (make manifests).
// +kubebuilder:rbac:groups=msgbench.io,resources=messagingbenchmarks,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=msgbench.io,resources=messagingbenchmarks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=configmaps;services;serviceaccounts,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=chaos-mesh.org,resources=networkchaos,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=kafka.strimzi.io,resources=kafkas;kafkanodepools;kafkatopics,verbs=get;list;watch;create;update;patch;delete

// Options are what one operator sets differently from another: the builders' configuration,
// the timings and the hooks tests replace. NewReconciler gives every zero field its default.
type Options struct {
	Config resources.Config

	// HTTP talks to the workers' control endpoints (default: 10 s timeout, an idle connection
	// kept per worker).
	HTTP *http.Client
	// Dial checks an external broker is reachable (default: a TCP dial with a 3 s timeout).
	Dial func(ctx context.Context, address string) error
	// ProbeService checks that the broker answers through its Service (a TCP dial from the
	// operator's pod) before any worker starts. Nil skips the check: an operator run outside the
	// cluster cannot route Services (msgbench operator sets it when it runs in a pod).
	ProbeService func(ctx context.Context, address string) error
	// ServiceGrace bounds how long after the broker became available the operator waits for it
	// to answer through its Service (default 2 min); then it starts the workers all the same —
	// they keep trying until spec.timeout — and says so in BrokerReady (a NetworkPolicy may keep
	// the operator out while the workers get in).
	ServiceGrace time.Duration
	// OpenStore opens an object store (default store.New).
	OpenStore func(spec *v1alpha1.ObjectStoreSpec, creds store.Credentials) (store.Store, error)
	// StartDelay is how far ahead of now the start time is set, so that every worker has it
	// before it passes (default 2 s).
	StartDelay time.Duration
	// Poll is how often a waiting step looks again (default 1 s).
	Poll time.Duration
	// UploadAttempts is how often an upload is tried (default 4: 1+2+4 s of backoff).
	UploadAttempts int
	// InjectionTimeout is how long Chaos Mesh may take to confirm a network impairment
	// (default 2 min).
	InjectionTimeout time.Duration
	// ExternalGrace is how long an unreachable external broker is retried before the run fails
	// (default 30 s).
	ExternalGrace time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Metrics, when set, records finished runs (NewMetrics registers them once per process).
	Metrics *Metrics
}

// withDefaults is o with every zero field set to its default.
func (o Options) withDefaults() Options {
	if o.HTTP == nil {
		// Keep an idle connection to every worker: the default transport keeps 100 in all, and
		// a run of 1,000 workers asked for their status every second would dial 900 anew each time.
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConns = 0
		o.HTTP = &http.Client{Timeout: 10 * time.Second, Transport: t}
	}
	if o.Dial == nil {
		o.Dial = DialTCP
	}
	if o.OpenStore == nil {
		o.OpenStore = store.New
	}
	if o.StartDelay == 0 {
		o.StartDelay = 2 * time.Second
	}
	if o.Poll == 0 {
		o.Poll = time.Second
	}
	if o.UploadAttempts == 0 {
		o.UploadAttempts = 4
	}
	if o.InjectionTimeout == 0 {
		o.InjectionTimeout = 2 * time.Minute
	}
	if o.ServiceGrace == 0 {
		o.ServiceGrace = 2 * time.Minute
	}
	if o.ExternalGrace == 0 {
		o.ExternalGrace = 30 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Reconciler runs MessagingBenchmarks. Up to --max-concurrent-reconciles reconciles share it,
// so it is built complete by NewReconciler and only read afterwards.
type Reconciler struct {
	client.Client
	Options

	// apiReader reads the benchmark itself past the cache, so that a reconcile never acts on a
	// status older than its own last write.
	apiReader client.Reader
	recorder  recorder.EventRecorder
	// applied skips writes that would change nothing (applycache.go).
	applied applyCache
}

// NewReconciler builds the reconciler (and the MessagingBenchmarkSuite reconciler beside it)
// complete from the manager's client, API reader and event
// recorder and o (its zero fields defaulted), and registers it with the manager. msgbench
// operator and the envtest suite both call it, so the tests run the wiring the operator runs.
func NewReconciler(mgr ctrl.Manager, o Options) (*Reconciler, error) {
	r := &Reconciler{
		Client:    mgr.GetClient(),
		Options:   o.withDefaults(),
		apiReader: mgr.GetAPIReader(),
		recorder:  mgr.GetEventRecorder("msgbench-operator"),
	}
	if err := r.setupWithManager(mgr); err != nil {
		return nil, err
	}
	// Suites share the options and client: their runs are this reconciler's benchmarks.
	if err := (&SuiteReconciler{Reconciler: r}).setupWithManager(mgr); err != nil {
		return nil, err
	}
	return r, nil
}

// ClientOptions are the manager's client options: Secrets are read directly, never cached, so
// the operator needs no list or watch on them (its RBAC grants none).
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}}
}

// failure is a permanent error: the benchmark ends Failed with this message.
type failure struct{ msg string }

func (f *failure) Error() string { return f.msg }

func fail(format string, args ...any) error { return &failure{msg: fmt.Sprintf(format, args...)} }

// run is one reconcile's view of a benchmark.
type run struct {
	mb    *v1alpha1.MessagingBenchmark
	names resources.Names
	// phase and waiting describe where the run stands; the last step that did not finish sets them.
	phase   v1alpha1.Phase
	waiting string
	// requeue asks for a new reconcile at once (after a status write that must precede the next action).
	requeue bool
	token   string // the control token
	// wake is when a step wants to act next (a network timeline step), zero if none.
	wake time.Time
	// plan is the spec compiled for Kubernetes (nil when it does not compile: compile fails
	// the run with planErr before anything is created).
	plan    *plan.Plan
	planErr error
}

// wakeAt asks for a reconcile at t (the earliest asked for wins).
func (st *run) wakeAt(t time.Time) {
	if st.wake.IsZero() || t.Before(st.wake) {
		st.wake = t
	}
}

// step is one stage of a run: it observes, acts idempotently and reports whether it finished.
type step func(ctx context.Context, st *run) (done bool, err error)

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var mb v1alpha1.MessagingBenchmark
	if err := r.apiReader.Get(ctx, req.NamespacedName, &mb); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !mb.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	before := mb.Status.DeepCopy()
	st := &run{mb: &mb, names: resources.NamesOf(&mb), phase: v1alpha1.PhasePending}
	st.plan, st.planErr = plan.CompileBenchmark(&mb, plan.Kubernetes)
	if finished(&mb) {
		return r.finish(ctx, st)
	}

	var err error
	// The network comes after the worker pods exist (Chaos Mesh selects pods when it creates its
	// objects) and before they connect, so that every connection sees the emulated link.
	for _, s := range []step{r.compiled, r.common, r.broker, r.gateway, r.workers, r.network, r.networkTimeline, r.connect, r.start, r.wait, r.collect} {
		var done bool
		if done, err = s(ctx, st); err != nil || !done {
			break
		}
	}
	var f *failure
	p := policy.Pass{Phase: st.phase, Waiting: st.waiting, Transient: err != nil && !errors.As(err, &f)}
	if f != nil {
		p.Failure = f.msg
	}
	if p.Transient {
		log.FromContext(ctx).Info("will retry", "error", err.Error())
	}
	d := policy.Decide(mb.Status.Phase, p, r.Now(), r.deadline(&mb), timeoutOf(&mb))
	if d.Failure != "" {
		r.markFailed(st, d.Failure)
	} else {
		st.phase, st.waiting = d.Phase, d.Waiting
		st.requeue = st.requeue || d.Requeue
	}
	if perr := r.report(ctx, st, before); perr != nil {
		return ctrl.Result{}, perr
	}
	if p.Transient {
		return ctrl.Result{}, err
	}
	if finished(&mb) {
		return r.finish(ctx, st)
	}
	if st.requeue {
		return ctrl.Result{RequeueAfter: time.Millisecond}, nil
	}
	after := r.Poll
	if left := time.Until(r.deadline(&mb)); left < after {
		after = max(left, 10*time.Millisecond)
	}
	if !st.wake.IsZero() {
		after = max(min(after, st.wake.Sub(r.Now())), time.Millisecond)
	}
	return ctrl.Result{RequeueAfter: after}, nil
}

// compiled fails the run, before anything is created, when its spec does not compile (a rule
// beyond the CRD's schema and CEL, such as a timeline step after the window's end).
func (r *Reconciler) compiled(_ context.Context, st *run) (bool, error) {
	if st.planErr != nil {
		return false, fail("%v", st.planErr)
	}
	return true, nil
}

func (r *Reconciler) deadline(mb *v1alpha1.MessagingBenchmark) time.Time {
	return mb.CreationTimestamp.Add(timeoutOf(mb))
}

// timeoutOf is spec.timeout, or its default of 15 minutes.
func timeoutOf(mb *v1alpha1.MessagingBenchmark) time.Duration {
	if t := mb.Spec.Timeout.Duration; t > 0 {
		return t
	}
	return 15 * time.Minute
}

func finished(mb *v1alpha1.MessagingBenchmark) bool {
	return mb.Status.Phase == v1alpha1.PhaseSucceeded || mb.Status.Phase == v1alpha1.PhaseFailed
}

func (r *Reconciler) markFailed(st *run, msg string) {
	st.phase, st.waiting = v1alpha1.PhaseFailed, ""
	st.mb.Status.Message = msg
	r.setCondition(st, v1alpha1.ConditionCompleted, metav1.ConditionFalse, "Failed", msg)
}

// report writes the status when it changed, with an event on each phase transition.
func (r *Reconciler) report(ctx context.Context, st *run, before *v1alpha1.MessagingBenchmarkStatus) error {
	mb := st.mb
	s := &mb.Status
	s.ObservedGeneration = mb.Generation
	s.Workers.Desired = mb.Spec.Workers.Replicas
	if st.plan != nil { // with groups behind links of their own, a worker per link
		s.Workers.Desired = int32(workerCount(st))
	}
	if st.phase != v1alpha1.PhaseFailed && st.waiting != "" {
		s.Message = st.waiting
	}
	if st.phase == v1alpha1.PhaseSucceeded {
		s.Message = ""
	}
	changedPhase := s.Phase != st.phase
	s.Phase = st.phase
	if finished(mb) && s.CompletionTime == nil {
		s.CompletionTime = &metav1.Time{Time: r.Now()}
	}
	if equality.Semantic.DeepEqual(before, s) {
		return nil
	}
	if err := r.Status().Update(ctx, mb); err != nil {
		return err
	}
	if changedPhase {
		kind := corev1.EventTypeNormal
		if st.phase == v1alpha1.PhaseFailed {
			kind = corev1.EventTypeWarning
		}
		note := s.Message
		if note == "" {
			note = "phase " + string(st.phase)
		}
		r.recorder.Eventf(mb, nil, kind, string(st.phase), "Reconcile", "%s", note)
		if finished(mb) && r.Metrics != nil {
			r.Metrics.Finished(mb, st.plan)
		}
	}
	return nil
}

func (r *Reconciler) setCondition(st *run, typ string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&st.mb.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: truncate(msg), ObservedGeneration: st.mb.Generation,
	})
}

// maxConditionMessage is the API's limit on a condition's message.
const maxConditionMessage = 32768

// truncate cuts s to a condition message's length.
func truncate(s string) string {
	if len(s) <= maxConditionMessage {
		return s
	}
	return s[:maxConditionMessage-3] + "..."
}

// apply creates or updates obj by server-side apply, owned by the operator.
func (r *Reconciler) apply(ctx context.Context, obj client.Object) error {
	var m map[string]any
	if u, ok := obj.(*unstructured.Unstructured); ok {
		m = u.DeepCopy().Object
	} else {
		var err error
		if m, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return err
		}
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	u := &unstructured.Unstructured{Object: m}
	gvk := u.GroupVersionKind()
	if gvk.Empty() {
		var err error
		if gvk, err = r.GroupVersionKindFor(obj); err != nil {
			return err
		}
		u.SetGroupVersionKind(gvk)
	}
	now := r.Now()
	unchanged, hash := r.applied.unchanged(ctx, r.Client, gvk, u.GetNamespace(), u.GetName(), m, now)
	if unchanged {
		return nil
	}
	if err := r.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	r.applied.remember(gvk, u.GetNamespace(), u.GetName(), hash, now)
	return nil
}

// createOnce creates obj unless it exists (objects whose content is generated once: keys).
func (r *Reconciler) createOnce(ctx context.Context, obj client.Object) error {
	key := obj.GetNamespace() + "/" + obj.GetName() + "/" + string(ownerUID(obj))
	if r.applied.exists(key) {
		return nil
	}
	err := r.Create(ctx, obj)
	if err == nil || apierrors.IsAlreadyExists(err) {
		r.applied.markExists(key)
		return nil
	}
	return err
}

// ownerUID is the UID of obj's controlling owner (its benchmark): a benchmark deleted and created
// again under the same name gets its objects created again.
func ownerUID(obj client.Object) types.UID {
	for _, o := range obj.GetOwnerReferences() {
		if o.Controller != nil && *o.Controller {
			return o.UID
		}
	}
	return ""
}

// setupWithManager registers the reconciler and what it watches.
func (r *Reconciler) setupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.MessagingBenchmark{}).
		Owns(&corev1.ConfigMap{}).
		Owns(&corev1.Service{}).
		Owns(&appsv1.Deployment{}).
		Owns(&batchv1.Job{}).
		// Worker pods belong to the Job; their readiness moves a run on, so map them back.
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			name := o.GetAnnotations()[resources.AnnotationBenchmark]
			if name == "" {
				return nil
			}
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
		})).
		Named("messagingbenchmark").
		Complete(r)
}
