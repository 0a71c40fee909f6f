package netem

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// InjectionState summarises what Chaos Mesh reports about one NetworkChaos.
type InjectionState string

// Injection states.
const (
	// InjectionPending: Chaos Mesh has not (yet) selected the pods or not injected all of them,
	// and reports no failure.
	InjectionPending InjectionState = "Pending"
	// InjectionInjected: condition AllInjected is True and every record is Injected.
	InjectionInjected InjectionState = "Injected"
	// InjectionFailed: the latest event of a pod not injected is a failure. Chaos Mesh keeps
	// retrying, but a failure such as a kernel without sch_netem does not go away by itself.
	InjectionFailed InjectionState = "Failed"
	// InjectionStopped: the experiment is paused or over (desired phase Stop).
	InjectionStopped InjectionState = "Stopped"
)

// Chaos Mesh's record phases (api/v1alpha1 Phase); "Not Injected/Wait" and "Injected/Wait" are
// transitions.
const chaosPhaseInjected = "Injected"

// ChaosInjection reads the status Chaos Mesh writes on a NetworkChaos (conditions, and
// status.experiment.containerRecords with each pod's phase and events) and says whether the
// impairment is in place, with a message a user can act on: for a failure, Chaos Mesh's own error
// text and the pod it concerns.
func ChaosInjection(obj *unstructured.Unstructured) (InjectionState, string) {
	name := obj.GetNamespace() + "/" + obj.GetName()
	if phase, _, _ := unstructured.NestedString(obj.Object, "status", "experiment", "desiredPhase"); phase == "Stop" {
		return InjectionStopped, fmt.Sprintf("NetworkChaos %s is paused or over (desired phase Stop)", name)
	}
	records, _, _ := unstructured.NestedSlice(obj.Object, "status", "experiment", "containerRecords")
	if len(records) == 0 {
		if _, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "status"); !found {
			return InjectionPending, fmt.Sprintf("NetworkChaos %s has no status yet: is Chaos Mesh installed and its controller-manager running?", name)
		}
		return InjectionPending, fmt.Sprintf("NetworkChaos %s has selected no pods yet (condition Selected is %s): Chaos Mesh needs the worker pods and the broker or gateway pods to exist", name, conditionStatus(obj, "Selected"))
	}

	injected := 0
	var failures []string
	for _, r := range records {
		rec, ok := r.(map[string]any)
		if !ok {
			continue
		}
		phase, _, _ := unstructured.NestedString(rec, "phase")
		if phase == chaosPhaseInjected {
			injected++
			continue
		}
		if msg, failed := lastFailure(rec); failed {
			id, _, _ := unstructured.NestedString(rec, "id")
			failures = append(failures, fmt.Sprintf("pod %s: %s", id, msg))
		}
	}
	switch {
	case len(failures) > 0:
		return InjectionFailed, fmt.Sprintf("Chaos Mesh could not inject NetworkChaos %s (%d of %d pods injected): %s%s",
			name, injected, len(records), strings.Join(failures, "; "), tcHint(failures))
	case injected == len(records) && conditionStatus(obj, "AllInjected") == "True":
		return InjectionInjected, fmt.Sprintf("NetworkChaos %s is injected into %d pods", name, injected)
	default:
		return InjectionPending, fmt.Sprintf("NetworkChaos %s: %d of %d pods injected", name, injected, len(records))
	}
}

// lastFailure returns the message of a record's latest event when that event is a failure: an
// earlier failure followed by a success is history, not the state.
func lastFailure(rec map[string]any) (string, bool) {
	events, _, _ := unstructured.NestedSlice(rec, "events")
	if len(events) == 0 {
		return "", false
	}
	last, ok := events[len(events)-1].(map[string]any)
	if !ok {
		return "", false
	}
	if typ, _, _ := unstructured.NestedString(last, "type"); typ != "Failed" {
		return "", false
	}
	op, _, _ := unstructured.NestedString(last, "operation")
	msg, _, _ := unstructured.NestedString(last, "message")
	msg = strings.TrimSpace(msg)
	if msg == "" {
		msg = "no message"
	}
	return strings.ToLower(op) + " failed: " + msg, true
}

// tcHint says where the real cause of a tc failure is. Chaos Mesh reports only "unable to set
// tcs for pod X"; tc's own message (a kernel without sch_netem says "Error: Specified qdisc kind
// is unknown.") is in the log of the chaos-daemon on the pod's node.
func tcHint(failures []string) string {
	for _, f := range failures {
		if strings.Contains(f, "unable to set tcs") || strings.Contains(f, "qdisc kind is unknown") || strings.Contains(f, "Specified qdisc not found") {
			return ". tc failed on the node: read the log of the chaos-daemon pod on that node (kubectl logs -n chaos-mesh -l app.kubernetes.io/component=chaos-daemon). " +
				"\"Specified qdisc kind is unknown\" means the node's kernel lacks sch_netem: load it (modprobe sch_netem) or install the distribution's extra kernel modules; " +
				"or run the benchmark locally with msgbench run, whose link emulator needs no kernel support"
		}
	}
	return ""
}

func conditionStatus(obj *unstructured.Unstructured, typ string) string {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		cond, ok := c.(map[string]any)
		if !ok {
			continue
		}
		if t, _, _ := unstructured.NestedString(cond, "type"); t == typ {
			s, _, _ := unstructured.NestedString(cond, "status")
			return s
		}
	}
	return "unknown"
}
