package policy

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// PodDiagnosis says in a few words why a pod is not (or no longer) running, from what the
// kubelet and the scheduler reported: a container's termination (its exit code and termination
// message, which msgbench's containers write), a container waiting (ImagePullBackOff …), the pod
// unschedulable, or the pod's own reason. "" when there is nothing to say. One function for the
// broker, gateway and worker pods, so every message reads alike.
func PodDiagnosis(p *corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && (t.ExitCode != 0 || p.Status.Phase == corev1.PodFailed) {
			msg := strings.TrimSpace(t.Message)
			if msg == "" {
				msg = t.Reason
			}
			return fmt.Sprintf("container %s exited with code %d: %s", cs.Name, t.ExitCode, msg)
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			return strings.TrimSpace(w.Reason + " " + w.Message)
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return strings.TrimSpace("unschedulable: " + c.Message)
		}
	}
	if p.Status.Message != "" {
		return strings.TrimSpace(p.Status.Reason + ": " + p.Status.Message)
	}
	return ""
}

// PodReady reports the pod's Ready condition.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
