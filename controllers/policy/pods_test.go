package policy

import (
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodDiagnosis(t *testing.T) {
	container := func(s corev1.ContainerState) corev1.PodStatus {
		return corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "loadgen", State: s}}}
	}
	for _, c := range []struct {
		name   string
		status corev1.PodStatus
		want   string
	}{
		{"running", container(corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}), ""},
		{"killed", container(corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}),
			"container loadgen exited with code 137: OOMKilled"},
		{"termination message", container(corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: "broker gone\n"}}),
			"container loadgen exited with code 1: broker gone"},
		{"completed", container(corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}), ""},
		{"image", container(corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image"}}),
			"ImagePullBackOff Back-off pulling image"},
		{"unschedulable", corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Message: "0/1 nodes are available"}}},
			"unschedulable: 0/1 nodes are available"},
		{"evicted", corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "low on memory"}, "Evicted: low on memory"},
	} {
		if got := PodDiagnosis(&corev1.Pod{Status: c.status}); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestJudgeWorkers(t *testing.T) {
	pod := func(name string, phase corev1.PodPhase, ready bool, mut ...func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Phase: phase}}
		if ready {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}
		for _, m := range mut {
			m(p)
		}
		return p
	}
	running := func(i int, ready bool) Worker {
		return Worker{Index: i, Pod: pod("w"+strconv.Itoa(i), corev1.PodRunning, ready), Addr: "10.0.0.1:9000"}
	}
	for _, c := range []struct {
		name       string
		ws         []Worker
		jobFailed  string
		ready      int32
		failure    string
		notRunning string
	}{
		{"all running, one ready", []Worker{running(0, true), running(1, false)}, "", 1, "", ""},
		{"one without a pod yet", []Worker{running(0, true), {Index: 1}}, "", 1, "", "1 (no pod yet)"},
		{"one pulling its image", []Worker{running(0, false), {Index: 1, Pod: pod("w1", corev1.PodPending, false, func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "loadgen", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}}}
		})}}, "", 0, "", "1 (ImagePullBackOff)"},
		{"one failed", []Worker{running(0, true), {Index: 1, Pod: pod("w1", corev1.PodFailed, false, func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "loadgen", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}}}
		})}}, "", 1, "worker 1 (pod w1) failed: container loadgen exited with code 137: OOMKilled", ""},
		{"one deleted mid-run", []Worker{{Index: 0, Addr: "x", Pod: pod("w0", corev1.PodRunning, true, func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{} })}}, "", 0,
			"worker 0 (pod w0) was deleted during the run; its share of the measurement is gone", ""},
		{"pod lost and the Job failed", []Worker{running(0, true), {Index: 1}}, "worker Job j failed: BackoffLimitExceeded: …", 1,
			"worker 1 lost its pod; its share of the measurement is gone (worker Job j failed: BackoffLimitExceeded: …)", ""},
		{"the Job failed, pods say nothing", []Worker{running(0, true)}, "worker Job j failed: DeadlineExceeded: …", 1, "worker Job j failed: DeadlineExceeded: …", ""},
	} {
		counts, failure, notRunning := JudgeWorkers(c.ws, c.jobFailed, int32(len(c.ws)), 0)
		if failure != c.failure || strings.Join(notRunning, ", ") != c.notRunning {
			t.Errorf("%s: failure %q, not running %q; want %q, %q", c.name, failure, notRunning, c.failure, c.notRunning)
		}
		if c.failure == "" && counts.Ready != c.ready {
			t.Errorf("%s: %d ready, want %d", c.name, counts.Ready, c.ready)
		}
	}
}
