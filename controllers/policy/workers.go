package policy

import (
	"cmp"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// Worker is one load-generator pod as observed.
type Worker struct {
	Index int
	Pod   *corev1.Pod
	Addr  string // control host:port
}

// JudgeWorkers decides from the worker pods as observed (and the Job's failure, "" if none)
// whether the run has failed and why — a worker's pod lost, failed or deleted mid-run, or the Job
// failed — which workers do not run yet and why, and the counts for the status. It only reads.
func JudgeWorkers(ws []Worker, jobFailed string, desired, succeeded int32) (counts v1alpha1.WorkerCounts, failure string, notRunning []string) {
	counts = v1alpha1.WorkerCounts{Desired: desired, Succeeded: succeeded}
	for _, w := range ws {
		switch {
		case w.Pod == nil && jobFailed != "":
			counts.Failed++
			return counts, fmt.Sprintf("worker %d lost its pod; its share of the measurement is gone (%s)", w.Index, jobFailed), nil
		case w.Pod == nil:
			notRunning = append(notRunning, fmt.Sprintf("%d (no pod yet)", w.Index))
		case w.Pod.Status.Phase == corev1.PodFailed:
			counts.Failed++
			return counts, fmt.Sprintf("worker %d (pod %s) failed: %s", w.Index, w.Pod.Name, cmp.Or(PodDiagnosis(w.Pod), "pod phase Failed")), nil
		case w.Pod.DeletionTimestamp != nil && w.Pod.Status.Phase != corev1.PodSucceeded:
			counts.Failed++
			return counts, fmt.Sprintf("worker %d (pod %s) was deleted during the run; its share of the measurement is gone", w.Index, w.Pod.Name), nil
		case w.Addr == "" || w.Pod.Status.Phase == corev1.PodPending:
			notRunning = append(notRunning, fmt.Sprintf("%d (%s)", w.Index, cmp.Or(PodDiagnosis(w.Pod), string(w.Pod.Status.Phase))))
		}
		if w.Pod != nil && PodReady(w.Pod) {
			counts.Ready++
		}
	}
	if jobFailed != "" {
		return counts, jobFailed, nil
	}
	return counts, "", notRunning
}
