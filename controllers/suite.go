package controllers

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"path"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/results/objectives"
	"github.com/msgbench/msgbench/results/report"
	"github.com/msgbench/msgbench/results/store"
	"github.com/msgbench/msgbench/suite"
)

// +kubebuilder:rbac:groups=msgbench.io,resources=messagingbenchmarksuites,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=msgbench.io,resources=messagingbenchmarksuites/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=msgbench.io,resources=messagingbenchmarks,verbs=create

// SuiteReconciler runs MessagingBenchmarkSuites: one child MessagingBenchmark per run, never more
// running than spec.concurrency, statistics and verdict in the status, suite.json stored. Every
// decision is derived from the children as observed (suite.Next), so an operator restarted
// mid-suite goes on where the children say, repeating no finished run and losing none. A suite
// with spec.search runs a capacity search instead, one run at a time (suite_search.go).
type SuiteReconciler struct {
	*Reconciler
	// results caches finished runs' results by the child's UID: a finished run's result never
	// changes, and a suite re-reads all of them on every pass.
	results sync.Map
	// points caches each suite generation's expansion (expand).
	points sync.Map
	// searches caches each search suite generation's checked objectives (checkSearch).
	searches sync.Map
}

func (r *SuiteReconciler) setupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.MessagingBenchmarkSuite{}).
		Owns(&v1alpha1.MessagingBenchmark{}).
		Named("messagingbenchmarksuite").
		Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *SuiteReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	// Read once, as stored: the template is taken from the map (the typed spec cannot say false
	// or 0s where the default differs), the rest from the typed object.
	var u unstructured.Unstructured
	u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("MessagingBenchmarkSuite"))
	if err := r.apiReader.Get(ctx, req.NamespacedName, &u); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	var s v1alpha1.MessagingBenchmarkSuite
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &s); err != nil {
		return ctrl.Result{}, err
	}
	if !s.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	before := s.Status.DeepCopy()
	st := &s.Status
	st.ObservedGeneration = s.Generation
	if st.Phase == v1alpha1.SuiteSucceeded || st.Phase == v1alpha1.SuiteFailed {
		return r.expire(ctx, &s)
	}
	template, _, _ := unstructured.NestedMap(u.Object, "spec", "template")
	if s.Spec.Search != nil {
		return r.reconcileSearch(ctx, &s, template, before)
	}
	points, err := r.expand(&s, template)
	if err != nil {
		r.failSuite(&s, "the suite cannot run: "+err.Error())
		return ctrl.Result{}, r.writeSuiteStatus(ctx, &s, before)
	}
	if s.Spec.Order == v1alpha1.OrderInterleaved && st.Seed == nil {
		seed := s.Spec.Seed
		if seed == nil {
			v := rand.Int64N(1 << 53) // exact in JSON numbers
			seed = &v
		}
		st.Seed = seed
		// The seed is written before any run starts, so a restarted operator keeps the order.
		return ctrl.Result{RequeueAfter: time.Millisecond}, r.writeSuiteStatus(ctx, &s, before)
	}
	seed := int64(0)
	if st.Seed != nil {
		seed = *st.Seed
	}
	schedule := suite.Schedule(len(points), int(s.Spec.Repetitions), s.Spec.Order, seed)

	var children v1alpha1.MessagingBenchmarkList
	if err := r.List(ctx, &children, client.InNamespace(s.Namespace), client.MatchingLabels{v1alpha1.LabelSuite: v1alpha1.LabelValue(s.Name)}); err != nil {
		return ctrl.Result{}, err
	}
	byName := map[string]*v1alpha1.MessagingBenchmark{}
	for i := range children.Items {
		c := &children.Items[i]
		if metav1.IsControlledBy(c, &s) {
			byName[c.Name] = c
		}
	}
	state := func(run suite.Run) suite.State {
		c := byName[suite.RunName(s.Name, points[run.Point], run.Repetition)]
		switch {
		case c == nil:
			return suite.NotStarted
		case c.Status.Phase == v1alpha1.PhaseSucceeded:
			return suite.Succeeded
		case c.Status.Phase == v1alpha1.PhaseFailed:
			return suite.Failed
		}
		return suite.Running
	}
	plan := suite.Next(schedule, state, s.Spec.Concurrency, s.Spec.Suspend, s.Spec.FailurePolicy)
	for _, run := range plan.Start {
		mb, err := suite.Benchmark(&s, template, points[run.Point], run.Repetition)
		if err != nil {
			r.failSuite(&s, err.Error())
			return ctrl.Result{}, r.writeSuiteStatus(ctx, &s, before)
		}
		admitted, err := suite.Manifest(&s, template, points[run.Point], run.Repetition)
		if err != nil {
			return ctrl.Result{}, err
		}
		child(mb, &s, points[run.Point], run.Repetition)
		if err := controllerutil.SetControllerReference(&s, mb, r.Scheme()); err != nil {
			return ctrl.Result{}, err
		}
		obj, err := childObject(mb, admitted)
		if err != nil {
			return ctrl.Result{}, err
		}
		if err := r.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, err
		}
		log.FromContext(ctx).Info("started run", "run", mb.Name)
		if st.StartTime == nil {
			st.StartTime = &metav1.Time{Time: r.Now()}
		}
	}

	outcomes := map[suite.Run]suite.RunOutcome{}
	for _, run := range schedule {
		name := suite.RunName(s.Name, points[run.Point], run.Repetition)
		c := byName[name]
		if c == nil || (c.Status.Phase != v1alpha1.PhaseSucceeded && c.Status.Phase != v1alpha1.PhaseFailed) {
			continue
		}
		o := suite.RunOutcome{Name: name, Phase: string(c.Status.Phase), Message: c.Status.Message, Location: c.Status.ResultsURL}
		if res, err := r.childResult(ctx, c); err == nil {
			o.Result = res
		} else if c.Status.Phase == v1alpha1.PhaseSucceeded {
			o.Message = "result not readable: " + err.Error()
		}
		outcomes[run] = o
	}
	doc := suite.Summarize(&s, points, schedule, outcomes, seed, "kubernetes", r.Now())
	st.Runs = plan.Counts
	st.Progress = fmt.Sprintf("%d/%d", plan.Counts.Succeeded+plan.Counts.Failed, plan.Counts.Total)
	st.Points = doc.PointStatuses()
	st.Verdict = doc.Verdict
	if c := doc.ObjectivesCondition(s.Generation); c != nil {
		meta.SetStatusCondition(&st.Conditions, *c)
	}
	st.Phase = plan.Phase
	st.Message = ""
	switch {
	case plan.Stopped:
		st.Message = "a run failed and spec.failurePolicy is Stop: no further run starts"
	case plan.Done && plan.Counts.Succeeded == 0:
		st.Message = "every run failed, so the suite measured nothing (the runs' own status says why)"
	}
	if plan.Done {
		r.storeSuite(ctx, &s, doc)
		st.CompletionTime = &metav1.Time{Time: r.Now()}
		reason, msg := "Finished", fmt.Sprintf("%d runs: %d succeeded, %d failed", plan.Counts.Total, plan.Counts.Succeeded, plan.Counts.Failed)
		switch {
		case plan.Stopped:
			reason = "Stopped"
		case plan.Phase == v1alpha1.SuiteFailed:
			reason = "NothingMeasured"
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1alpha1.ConditionCompleted, Status: metav1.ConditionTrue,
			Reason: reason, Message: msg, ObservedGeneration: s.Generation})
	} else {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1alpha1.ConditionCompleted, Status: metav1.ConditionFalse,
			Reason: string(plan.Phase), Message: st.Progress + " runs finished", ObservedGeneration: s.Generation})
	}
	if err := r.writeSuiteStatus(ctx, &s, before); err != nil {
		return ctrl.Result{}, err
	}
	if plan.Done {
		return r.expire(ctx, &s)
	}
	// Children's status changes wake the suite (Owns); the poll is a safety net.
	return ctrl.Result{RequeueAfter: 10 * r.Poll}, nil
}

// expand is suite.Expand and the suite's objectives checked, once per suite generation: it
// validates every point (about 1 ms each), and a suite reconciles on every change of a run.
func (r *SuiteReconciler) expand(s *v1alpha1.MessagingBenchmarkSuite, template map[string]any) ([]suite.Point, error) {
	key := fmt.Sprintf("%s/%d", s.UID, s.Generation)
	if v, ok := r.points.Load(key); ok {
		return v.([]suite.Point), nil
	}
	if _, err := objectives.ParseAll(s.Spec.Objectives); err != nil {
		return nil, err
	}
	points, err := suite.Expand(s, template)
	if err != nil {
		return nil, err
	}
	r.points.Store(key, points)
	return points, nil
}

// child labels and names a suite's run; its own TTL is dropped (the suite's governs: a run
// deleted before the suite ends would be run again), and its results stay with it.
func child(mb *v1alpha1.MessagingBenchmark, s *v1alpha1.MessagingBenchmarkSuite, p suite.Point, rep int) {
	mb.Namespace = s.Namespace
	mb.Labels, mb.Annotations = nil, nil
	suite.Label(mb, s.Name, p.Name, rep)
	mb.Spec.TTLSecondsAfterFinished = nil
	if s.Spec.Concurrency > 1 {
		mb.Annotations[suite.AnnotationConcurrent] = strconv.Itoa(int(s.Spec.Concurrency))
	}
}

// childObject is the child run as the API server must store it: mb's metadata (labels,
// annotations, owner) with the admitted manifest's spec, whose values equal to a Go zero but not
// to the CRD's default stay written (warmup: 0s). Created from the typed object, such a field
// (omitzero) was left out and the API server put its default in: warmup 0s ran as 5 s.
func childObject(mb *v1alpha1.MessagingBenchmark, admitted map[string]any) (*unstructured.Unstructured, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(mb)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(admitted["spec"])
	if err != nil {
		return nil, err
	}
	var spec map[string]any
	if err := json.Unmarshal(data, &spec); err != nil {
		return nil, err
	}
	delete(spec, "ttlSecondsAfterFinished") // the suite's own TTL governs its children (child)
	obj["spec"] = spec
	delete(obj, "status")
	return &unstructured.Unstructured{Object: obj}, nil
}

// childResult reads a finished child's merged result from its result ConfigMap (cached).
func (r *SuiteReconciler) childResult(ctx context.Context, c *v1alpha1.MessagingBenchmark) (*results.Result, error) {
	if v, ok := r.results.Load(c.UID); ok {
		return v.(*results.Result), nil
	}
	var cm corev1.ConfigMap
	key := client.ObjectKey{Namespace: c.Namespace, Name: resources.NamesOf(c).Result}
	if err := r.Get(ctx, key, &cm); err != nil {
		if !apierrors.IsNotFound(err) || c.Status.Phase != v1alpha1.PhaseSucceeded {
			return nil, err
		}
		// A run that succeeded wrote its ConfigMap before its phase, but the cache may have
		// seen the phase first: its result is looked for at the API server before a search
		// judges the run without it (a failed run mostly has none).
		if err := r.apiReader.Get(ctx, key, &cm); err != nil {
			return nil, err
		}
	}
	zr, err := gzip.NewReader(bytes.NewReader(cm.BinaryData["result.json.gz"]))
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	var res results.Result
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, err
	}
	r.results.Store(c.UID, &res)
	return &res, nil
}

// storeSuite keeps suite.json in the ConfigMap <suite>-suite and, when the template names an
// object store, uploads it there; the outcome is the ResultsStored condition.
func (r *SuiteReconciler) storeSuite(ctx context.Context, s *v1alpha1.MessagingBenchmarkSuite, doc *suite.Document) {
	set := func(status metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionResultsStored, Status: status,
			Reason: reason, Message: truncate(msg), ObservedGeneration: s.Generation})
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		set(metav1.ConditionFalse, "EncodeFailed", err.Error())
		return
	}
	gz := gzipped(data)
	name := v1alpha1.ShortName(s.Name, "-suite")
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.Namespace, Labels: map[string]string{v1alpha1.LabelSuite: v1alpha1.LabelValue(s.Name)}},
		BinaryData: map[string][]byte{"suite.json.gz": gz},
	}
	if len(gz) > maxResultConfigMap {
		cm.BinaryData = nil
		cm.Data = map[string]string{"note": fmt.Sprintf("suite.json is %d KiB gzipped, too large for a ConfigMap; set spec.template.results.objectStore", len(gz)>>10)}
	}
	if err := controllerutil.SetControllerReference(s, cm, r.Scheme()); err == nil {
		if err := r.apply(ctx, cm); err != nil {
			set(metav1.ConditionFalse, "ConfigMapFailed", err.Error())
			return
		}
	}
	os := s.Spec.Template.Results.ObjectStore
	if os == nil {
		set(metav1.ConditionTrue, "ConfigMap", "no object store configured; suite.json is in ConfigMap "+name)
		return
	}
	st, err := r.openStore(ctx, s.Namespace, os)
	if err == nil {
		base := path.Join(s.Namespace, "suites", s.Name, string(s.UID))
		if err = store.PutWithRetry(ctx, st, base+"/suite.json", data, r.UploadAttempts); err == nil {
			// The suite's report beside it, as `msgbench run` writes it locally.
			var html bytes.Buffer
			if doc.Runs.Succeeded > 0 && report.WriteHTML(&html, report.FromSuite(doc), nil) == nil {
				err = store.PutWithRetry(ctx, st, base+"/report.html", html.Bytes(), r.UploadAttempts)
			}
		}
		if err == nil {
			s.Status.ResultsURL = st.URL(base + "/suite.json")
			set(metav1.ConditionTrue, "Uploaded", "uploaded to "+s.Status.ResultsURL+" with report.html beside it")
			return
		}
	}
	set(metav1.ConditionFalse, "UploadFailed", err.Error()+"; suite.json is in ConfigMap "+name)
}

func (r *SuiteReconciler) failSuite(s *v1alpha1.MessagingBenchmarkSuite, msg string) {
	s.Status.Phase, s.Status.Message = v1alpha1.SuiteFailed, msg
	if s.Status.CompletionTime == nil {
		s.Status.CompletionTime = &metav1.Time{Time: r.Now()}
	}
	meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionCompleted, Status: metav1.ConditionFalse,
		Reason: "Failed", Message: truncate(msg), ObservedGeneration: s.Generation})
}

func (r *SuiteReconciler) writeSuiteStatus(ctx context.Context, s *v1alpha1.MessagingBenchmarkSuite, before *v1alpha1.MessagingBenchmarkSuiteStatus) error {
	if equality.Semantic.DeepEqual(before, &s.Status) {
		return nil
	}
	if err := r.Status().Update(ctx, s); err != nil {
		return err
	}
	if before.Phase != s.Status.Phase {
		kind := corev1.EventTypeNormal
		if s.Status.Phase == v1alpha1.SuiteFailed {
			kind = corev1.EventTypeWarning
		}
		note := s.Status.Message
		if note == "" {
			note = "phase " + string(s.Status.Phase) + ", " + s.Status.Progress + " runs"
		}
		r.recorder.Eventf(s, nil, kind, string(s.Status.Phase), "Reconcile", "%s", note)
	}
	return nil
}

// expire deletes a finished suite (and, through owner references, its runs) ttlSecondsAfterFinished
// after it finished.
func (r *SuiteReconciler) expire(ctx context.Context, s *v1alpha1.MessagingBenchmarkSuite) (ctrl.Result, error) {
	if s.Spec.TTLSecondsAfterFinished == nil || s.Status.CompletionTime == nil {
		return ctrl.Result{}, nil
	}
	at := s.Status.CompletionTime.Add(time.Duration(*s.Spec.TTLSecondsAfterFinished) * time.Second)
	if left := at.Sub(r.Now()); left > 0 {
		return ctrl.Result{RequeueAfter: left}, nil
	}
	if err := r.Delete(ctx, s, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}
