package controllers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/controllers/policy"
	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/loadgen"
	"github.com/msgbench/msgbench/loadgen/control"
)

// workerPods lists the workers' pods across the run's worker sets (Jobs), by a global index: the
// sets in placement order, the completion index inside each. A missing index has a nil pod.
func (r *Reconciler) workerPods(ctx context.Context, st *run) ([]policy.Worker, error) {
	mb := st.mb
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(mb.Namespace), client.MatchingLabels(resources.Selector(mb, v1alpha1.ComponentWorker))); err != nil {
		return nil, err
	}
	sets := st.plan.Placement()
	first := map[string]int{} // a set's first global index, by its name ("" the shared set)
	size := map[string]int{}
	n := 0
	for _, s := range sets {
		first[s.Name], size[s.Name] = n, s.Replicas
		n += s.Replicas
	}
	ws := make([]policy.Worker, n)
	for i := range ws {
		ws[i].Index = i
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		set := p.Labels[v1alpha1.LabelGroup]
		idx, err := strconv.Atoi(p.Annotations[batchv1.JobCompletionIndexAnnotation])
		if _, ok := first[set]; !ok || err != nil || idx < 0 || idx >= size[set] {
			continue
		}
		idx += first[set]
		// A replacement pod of the same index is newer; the newest one is the worker now.
		if cur := ws[idx].Pod; cur == nil || p.CreationTimestamp.After(cur.CreationTimestamp.Time) {
			ws[idx].Pod = p
			ws[idx].Addr = ""
			if p.Status.PodIP != "" {
				ws[idx].Addr = net.JoinHostPort(p.Status.PodIP, strconv.Itoa(int(r.Config.ControlPort)))
			}
		}
	}
	return ws, nil
}

// workerCount is how many workers the run has over all its worker sets.
func workerCount(st *run) int {
	n := 0
	for _, s := range st.plan.Placement() {
		n += s.Replicas
	}
	return n
}

// workers runs the load-generator Jobs (one per worker set) and waits until every worker pod
// runs (its control endpoint up, no client connected yet).
func (r *Reconciler) workers(ctx context.Context, st *run) (bool, error) {
	mb := st.mb
	st.phase = v1alpha1.PhaseStarting
	jobFailed := ""
	for _, j := range resources.WorkersJobs(mb, st.plan, r.Config) {
		if err := r.apply(ctx, j); err != nil {
			return false, err
		}
		var job batchv1.Job
		if err := r.Get(ctx, client.ObjectKeyFromObject(j), &job); err != nil {
			return false, err
		}
		// A failed Job says little (BackoffLimitExceeded): the pods below say which worker and
		// why, and the Job's condition is the message only when they do not.
		for _, c := range job.Status.Conditions {
			if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue && jobFailed == "" {
				jobFailed = fmt.Sprintf("worker Job %s failed: %s: %s", job.Name, c.Reason, c.Message)
			}
		}
	}
	ws, err := r.workerPods(ctx, st)
	if err != nil {
		return false, err
	}
	counts, failure, notRunning := policy.JudgeWorkers(ws, jobFailed, int32(len(ws)), mb.Status.Workers.Succeeded)
	mb.Status.Workers = counts
	if failure != "" {
		return false, fail("%s", failure)
	}
	if mb.Status.StartTime != nil || len(notRunning) == 0 {
		return true, nil
	}
	msg := fmt.Sprintf("waiting for %d of %d worker pods to run: %s", len(notRunning), len(ws), policy.Few(notRunning, 10))
	r.setCondition(st, v1alpha1.ConditionWorkersReady, metav1.ConditionFalse, "Starting", msg)
	st.waiting = msg
	return false, nil
}

// connect lets every worker connect and subscribe its clients (the network impairment is in
// place by now) and waits until all report ready.
func (r *Reconciler) connect(ctx context.Context, st *run) (bool, error) {
	mb := st.mb
	if mb.Status.StartTime != nil {
		return true, nil
	}
	ws, err := r.workerPods(ctx, st)
	if err != nil {
		return false, err
	}
	c := r.controlClient(st)
	// A ready pod has connected its clients (its readiness probe passes only then): only the
	// others are told to connect and asked how far they are, each reconcile.
	var pending []policy.Worker
	for _, w := range ws {
		if !policy.PodReady(w.Pod) {
			pending = append(pending, w)
		}
	}
	errs := forEachWorker(pending, func(w policy.Worker) error { return c.Connect(ctx, w.Addr) })
	if len(errs) > 0 {
		return false, errors.Join(errs...)
	}
	// Each call writes only its worker's slots (by position in pending), so they need no lock.
	notReady, failed := make([]string, len(pending)), make([]string, len(pending))
	pos := make(map[int]int, len(pending))
	for i, w := range pending {
		pos[w.Index] = i
	}
	forEachWorker(pending, func(w policy.Worker) error {
		i := pos[w.Index]
		notReady[i] = strconv.Itoa(w.Index)
		s, _, err := c.Status(ctx, w.Addr)
		switch {
		case err == nil && s.State == control.StateFailed:
			// A worker that could not connect its clients stays up (not ready) to tell why: fail
			// now with its reason instead of waiting for spec.timeout.
			failed[i] = fmt.Sprintf("worker %d (pod %s) failed before the start: %s", w.Index, w.Pod.Name, s.Error)
		case err == nil && s.Waiting != "": // its broker or gateway not reachable yet: it keeps trying
			notReady[i] = fmt.Sprintf("%d (%s)", w.Index, s.Waiting)
		}
		return nil
	})
	for _, f := range failed {
		if f != "" {
			mb.Status.Workers.Failed++
			return false, fail("%s", f)
		}
	}
	ready := len(ws) - len(notReady)
	mb.Status.Workers.Ready = int32(ready)
	if len(notReady) > 0 {
		msg := fmt.Sprintf("%d/%d workers have connected their clients; waiting for worker %s", ready, len(ws), policy.Few(notReady, 10))
		r.setCondition(st, v1alpha1.ConditionWorkersReady, metav1.ConditionFalse, "Connecting", msg)
		st.waiting = msg
		return false, nil
	}
	r.setCondition(st, v1alpha1.ConditionWorkersReady, metav1.ConditionTrue, "Ready", fmt.Sprintf("all %d workers connected and subscribed", len(ws)))
	return true, nil
}

func (r *Reconciler) controlClient(st *run) *control.Client {
	return &control.Client{HTTP: r.HTTP, Token: st.token}
}

// start agrees on a start time, writes it to the status first (so that an operator restarted
// in the middle sends the same time), then tells every worker.
func (r *Reconciler) start(ctx context.Context, st *run) (bool, error) {
	mb := st.mb
	if mb.Status.StartTime == nil {
		// Far enough ahead for every wave of control calls to reach its workers before it.
		mb.Status.StartTime = &metav1.Time{Time: policy.StartAt(r.Now(), r.StartDelay, workerCount(st))}
		st.requeue = true
		st.waiting = "starting every worker at " + mb.Status.StartTime.UTC().Format("15:04:05.000")
		return false, nil
	}
	ws, err := r.workerPods(ctx, st)
	if err != nil {
		return false, err
	}
	c := r.controlClient(st)
	at := mb.Status.StartTime.Time
	var clocks []loadgen.PeerClock
	// Once Running, every worker has its start: no new measurement on each later pass.
	if mb.Status.Phase != v1alpha1.PhaseRunning && mb.Status.Phase != v1alpha1.PhaseCollecting {
		if clocks, err = r.clocks(ctx, st, c, ws); err != nil {
			return false, err
		}
	}
	began := time.Now()
	var sent atomic.Int32
	errs := forEachWorker(ws, func(w policy.Worker) error {
		if w.Addr == "" {
			return fmt.Errorf("worker %d has no pod IP", w.Index)
		}
		s, _, err := c.Status(ctx, w.Addr)
		if err != nil {
			return err
		}
		switch s.State {
		case control.StateStarted, control.StateDone:
			return nil
		case control.StateFailed:
			return fail("worker %d failed: %s", w.Index, s.Error)
		}
		sent.Add(1)
		_, _, err = c.Start(ctx, w.Addr, at, clocks)
		return err
	})
	if err := firstFailure(errs); err != nil {
		return false, err
	}
	if len(errs) > 0 {
		return false, errors.Join(errs...)
	}
	// The margin left says whether StartLead was enough: a negative one means the last workers
	// started late (their startSkewMicros show it).
	if n := sent.Load(); n > 0 {
		log.FromContext(ctx).Info("start sent", "workers", n, "took", time.Since(began).String(), "marginLeft", time.Until(at).String())
	}
	return true, nil
}

// clocks measures, when the run's groups are spread over several worker sets, every worker's
// clock offset from the operator's, each in a pass of its own before any start is sent (a
// measurement among other calls takes their delays), with the groups the worker runs: a
// subscriber puts another worker's messages on its own clock with them. nil for a run in one
// set, whose every worker runs every group.
func (r *Reconciler) clocks(ctx context.Context, st *run, c *control.Client, ws []policy.Worker) ([]loadgen.PeerClock, error) {
	sets := st.plan.Placement()
	if len(sets) < 2 {
		return nil, nil
	}
	var groups [][]string
	for _, s := range sets {
		for range s.Replicas {
			groups = append(groups, s.Groups)
		}
	}
	clocks := make([]loadgen.PeerClock, len(ws))
	for _, w := range ws {
		if w.Addr == "" {
			return nil, fmt.Errorf("worker %d has no pod IP", w.Index)
		}
		offset, rtt, err := c.ClockOffset(ctx, w.Addr)
		if err != nil {
			return nil, fmt.Errorf("worker %d: measuring its clock: %w", w.Index, err)
		}
		clocks[w.Index] = loadgen.PeerClock{Groups: groups[w.Index], OffsetMicros: offset.Microseconds(), RTTMicros: max(rtt.Microseconds(), 1)}
	}
	return clocks, nil
}

// wait follows the run until every worker finished.
func (r *Reconciler) wait(ctx context.Context, st *run) (bool, error) {
	mb := st.mb
	st.phase = v1alpha1.PhaseRunning
	ws, err := r.workerPods(ctx, st)
	if err != nil {
		return false, err
	}
	c := r.controlClient(st)
	var mu sync.Mutex
	done := 0
	errs := forEachWorker(ws, func(w policy.Worker) error {
		if w.Pod == nil || w.Addr == "" {
			return fail("worker %d lost its pod during the run; its share of the measurement is gone", w.Index)
		}
		s, _, err := c.Status(ctx, w.Addr)
		if err != nil {
			return err
		}
		switch {
		case s.State == control.StateFailed:
			return fail("worker %d (pod %s) failed: %s", w.Index, w.Pod.Name, s.Error)
		case s.State == control.StateReady || s.State == control.StateConnecting || !s.StartAt.Equal(mb.Status.StartTime.Time):
			return fail("worker %d (pod %s) was replaced during the run (it has not started); its share of the measurement is gone", w.Index, w.Pod.Name)
		case s.State == control.StateDone:
			mu.Lock()
			done++
			mu.Unlock()
		}
		return nil
	})
	if err := firstFailure(errs); err != nil {
		return false, err
	}
	if len(errs) > 0 {
		return false, errors.Join(errs...)
	}
	mb.Status.Workers.Succeeded = int32(done)
	if done < len(ws) {
		st.waiting = fmt.Sprintf("%d/%d workers finished", done, len(ws))
		return false, nil
	}
	if mb.Status.Phase != v1alpha1.PhaseCollecting {
		// Say so before the (possibly slow) collection and upload.
		st.phase, st.waiting, st.requeue = v1alpha1.PhaseCollecting, "collecting the workers' results", true
		return false, nil
	}
	return true, nil
}

// forEachWorker calls f for every worker, up to policy.ControlConcurrency at once, and returns
// the errors.
func forEachWorker(ws []policy.Worker, f func(policy.Worker) error) []error {
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	slots := make(chan struct{}, policy.ControlConcurrency)
	for _, w := range ws {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			if err := f(w); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	sort.Slice(errs, func(a, b int) bool { return errs[a].Error() < errs[b].Error() })
	return errs
}

func firstFailure(errs []error) error {
	for _, err := range errs {
		var f *failure
		if errors.As(err, &f) {
			return f
		}
	}
	return nil
}
