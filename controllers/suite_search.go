package controllers

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/results/objectives"
	"github.com/msgbench/msgbench/suite"
)

// A capacity search (spec.search) runs one child at a time, trial t of step k named
// <suite>-s<k>-t<t> and annotated with its step, trial, value and kind. The steps so far are
// rebuilt from the children on every pass and suite.Search.Next decides the next trial from
// them, so an operator restarted mid-search goes on where the children say: a trial that exists
// is never created again (its name is fixed by its step and trial), and one that finished is
// never run again.

// searchObserved is a search's children as observed.
type searchObserved struct {
	runs     []suite.SearchRun
	outcomes map[string]suite.RunOutcome // finished runs, by name
	running  []suite.SearchRun           // by step and trial
	names    map[string]bool             // every child's name
	first    *metav1.Time                // the earliest child's creation
}

// reconcileSearch is Reconcile for a suite with spec.search.
func (r *SuiteReconciler) reconcileSearch(ctx context.Context, s *v1alpha1.MessagingBenchmarkSuite, template map[string]any,
	before *v1alpha1.MessagingBenchmarkSuiteStatus) (ctrl.Result, error) {
	st := &s.Status
	objs, err := r.checkSearch(s, template)
	if err != nil {
		r.failSuite(s, "the suite cannot run: "+err.Error())
		return ctrl.Result{}, r.writeSuiteStatus(ctx, s, before)
	}
	x := suite.NewSearch(s.Spec.Search)
	obs, err := r.observeSearch(ctx, r.Client, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	now := r.Now()
	if st.StartTime == nil && obs.first != nil {
		// Runs exist but the status that said when the first started was never written: the
		// search started with its first child (maxDuration counts from then).
		st.StartTime = obs.first
	}
	elapsed := func() time.Duration {
		if st.StartTime == nil {
			return 0
		}
		return now.Sub(st.StartTime.Time)
	}
	steps := x.Steps(obs.runs, objs)
	var d suite.Decision
	if len(obs.running) > 0 {
		d = runningDecision(x, steps, obs.running[0])
	} else {
		d = x.Next(steps, elapsed())
		if d.Done {
			// The search ends only on the children as the API server has them: a child created
			// by the pass before, not in the cache yet, would otherwise be left out (and a
			// maxDuration reached meanwhile would end the search while it runs).
			if obs, err = r.observeSearch(ctx, r.apiReader, s); err != nil {
				return ctrl.Result{}, err
			}
			steps = x.Steps(obs.runs, objs)
			if len(obs.running) > 0 {
				d = runningDecision(x, steps, obs.running[0])
			} else {
				d = x.Next(steps, elapsed())
			}
		}
	}

	requeue := 10 * r.Poll
	started := false
	if !d.Done && len(obs.running) == 0 && !s.Spec.Suspend {
		mb, admitted, err := suite.SearchBenchmark(s, template, x, d)
		if err != nil {
			r.failSuite(s, err.Error())
			return ctrl.Result{}, r.writeSuiteStatus(ctx, s, before)
		}
		if !obs.names[mb.Name] {
			child(mb, s, x.SearchPoint(suite.Step{Index: d.Step, Value: d.Value}), d.Trial)
			suite.LabelSearch(mb, s.Name, d) // child wrote the labels and annotations anew
			if err := controllerutil.SetControllerReference(s, mb, r.Scheme()); err != nil {
				return ctrl.Result{}, err
			}
			obj, err := childObject(mb, admitted)
			if err != nil {
				return ctrl.Result{}, err
			}
			switch err := r.Create(ctx, obj); {
			case apierrors.IsAlreadyExists(err):
				// Created before (by a pass whose cache had not seen it yet, or by the operator
				// before a restart): it is that trial; its own events bring the suite back.
				requeue = r.Poll
			case err != nil:
				return ctrl.Result{}, err
			default:
				log.FromContext(ctx).Info("started search run", "run", mb.Name, "step", d.Step, "trial", d.Trial, "value", d.Value, "kind", d.Kind)
			}
		}
		started = true
		if st.StartTime == nil {
			st.StartTime = &metav1.Time{Time: now}
		}
	}

	doc := suite.SummarizeSearchSuite(s, x, steps, obs.outcomes, d, "kubernetes", now)
	running := int32(len(obs.running))
	if started {
		running = 1
	}
	st.Search = doc.Search.Status(&d)
	st.Points = doc.PointStatuses()
	st.Runs = v1alpha1.SuiteRunCounts{Total: max(doc.Runs.Total, doc.Runs.Succeeded+doc.Runs.Failed+running), Running: running,
		Succeeded: doc.Runs.Succeeded, Failed: doc.Runs.Failed}
	st.Verdict = doc.Verdict
	if c := doc.ObjectivesCondition(s.Generation); c != nil {
		meta.SetStatusCondition(&st.Conditions, *c)
	}
	st.Message = ""
	if d.Done {
		st.Progress = fmt.Sprintf("%s, %s: %s", count(int(doc.Runs.Succeeded+doc.Runs.Failed), "run"), count(len(steps), "step"), d.Outcome)
		st.Phase, st.Message = v1alpha1.SuiteSucceeded, d.Message
		if doc.Runs.Succeeded == 0 {
			st.Phase, st.Message = v1alpha1.SuiteFailed, "every run failed, so the search measured nothing (the runs' own status says why)"
		}
		r.storeSuite(ctx, s, doc)
		st.CompletionTime = &metav1.Time{Time: now}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1alpha1.ConditionCompleted, Status: metav1.ConditionTrue,
			Reason: d.Outcome, Message: truncate(d.Message), ObservedGeneration: s.Generation})
	} else {
		st.Progress = fmt.Sprintf("%s, step %d (%s)", count(int(doc.Runs.Succeeded+doc.Runs.Failed+running), "run"), d.Step, d.Kind)
		st.Phase, st.Message = v1alpha1.SuiteRunning, st.Search.Message
		if running == 0 {
			st.Phase, st.Message = v1alpha1.SuiteSuspended, "spec.suspend: no run starts; next: "+st.Search.Message
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1alpha1.ConditionCompleted, Status: metav1.ConditionFalse,
			Reason: string(st.Phase), Message: truncate(st.Search.Message), ObservedGeneration: s.Generation})
	}
	if err := r.writeSuiteStatus(ctx, s, before); err != nil {
		return ctrl.Result{}, err
	}
	if d.Done {
		return r.expire(ctx, s)
	}
	// Children's status changes wake the suite (Owns); the poll is a safety net.
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// checkSearch parses the suite's objectives and checks its search against the template
// (suite.CheckSearch), once per suite generation: it validates the template at min and at max,
// and a suite reconciles on every change of a run.
func (r *SuiteReconciler) checkSearch(s *v1alpha1.MessagingBenchmarkSuite, template map[string]any) ([]objectives.Objective, error) {
	key := fmt.Sprintf("%s/%d", s.UID, s.Generation)
	if v, ok := r.searches.Load(key); ok {
		return v.([]objectives.Objective), nil
	}
	objs, err := objectives.ParseAll(s.Spec.Objectives)
	if err != nil {
		return nil, err
	}
	if err := suite.CheckSearch(s, template, manifest.FieldType); err != nil {
		return nil, err
	}
	r.searches.Store(key, objs)
	return objs, nil
}

// observeSearch lists the search's children (labelled with the suite and controlled by it) from
// reader and rebuilds its runs from their annotations; a finished child's outcome carries its
// result. A child without a search's annotations is not a run of the search and is left out.
func (r *SuiteReconciler) observeSearch(ctx context.Context, reader client.Reader, s *v1alpha1.MessagingBenchmarkSuite) (*searchObserved, error) {
	var children v1alpha1.MessagingBenchmarkList
	if err := reader.List(ctx, &children, client.InNamespace(s.Namespace), client.MatchingLabels{v1alpha1.LabelSuite: v1alpha1.LabelValue(s.Name)}); err != nil {
		return nil, err
	}
	obs := &searchObserved{outcomes: map[string]suite.RunOutcome{}, names: map[string]bool{}}
	for i := range children.Items {
		c := &children.Items[i]
		if !metav1.IsControlledBy(c, s) {
			continue
		}
		obs.names[c.Name] = true
		if obs.first == nil || c.CreationTimestamp.Before(obs.first) {
			obs.first = c.CreationTimestamp.DeepCopy()
		}
		run, ok := searchRunOf(c)
		if !ok {
			log.FromContext(ctx).Info("a child of the search without its step, trial and value annotations is left out", "run", c.Name)
			continue
		}
		if c.Status.Phase != v1alpha1.PhaseSucceeded && c.Status.Phase != v1alpha1.PhaseFailed {
			obs.running = append(obs.running, run)
			obs.runs = append(obs.runs, run)
			continue
		}
		o := suite.RunOutcome{Name: c.Name, Phase: string(c.Status.Phase), Message: c.Status.Message, Location: c.Status.ResultsURL}
		if res, err := r.childResult(ctx, c); err == nil {
			o.Result = res
		} else if c.Status.Phase == v1alpha1.PhaseSucceeded {
			o.Message = "result not readable: " + err.Error()
		}
		obs.outcomes[c.Name] = o
		run.Outcome = &o
		obs.runs = append(obs.runs, run)
	}
	slices.SortFunc(obs.running, func(a, b suite.SearchRun) int {
		if a.Step != b.Step {
			return a.Step - b.Step
		}
		return a.Trial - b.Trial
	})
	return obs, nil
}

// searchRunOf is the run a child of a search is: its step from the point annotation (s<step>),
// its trial from the repetition annotation, its value and kind from the search's annotations.
func searchRunOf(c *v1alpha1.MessagingBenchmark) (suite.SearchRun, bool) {
	a := c.Annotations
	point, ok := strings.CutPrefix(a[v1alpha1.AnnotationPoint], "s")
	if !ok {
		return suite.SearchRun{}, false
	}
	step, err1 := strconv.Atoi(point)
	trial, err2 := strconv.Atoi(a[v1alpha1.AnnotationRepetition])
	value, err3 := strconv.ParseInt(a[suite.AnnotationSearchValue], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || step < 1 || trial < 1 {
		return suite.SearchRun{}, false
	}
	return suite.SearchRun{Step: step, Trial: trial, Value: value, Kind: suite.StepKind(a[suite.AnnotationSearchKind])}, true
}

// count is "1 run", "2 runs".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// runningDecision is the decision a running trial stands for: the search goes on with it, with
// the bracket the finished steps give.
func runningDecision(x suite.Search, steps []suite.Step, run suite.SearchRun) suite.Decision {
	d := suite.Decision{Outcome: v1alpha1.SearchSearching, Step: run.Step, Value: run.Value, Kind: run.Kind, Trial: run.Trial}
	d.LastPass, d.FirstFail = x.Bracket(steps)
	return d
}
