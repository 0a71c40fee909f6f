package controllers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
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
		if got := podDiagnosis(&corev1.Pod{Status: c.status}); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
