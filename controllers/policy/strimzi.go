package policy

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// StrimziReady reports whether a Strimzi object is Ready for its current generation, and if not,
// why in Strimzi's own words.
func StrimziReady(u *unstructured.Unstructured) (bool, string) {
	if u.GetName() == "" {
		return false, "not created yet"
	}
	observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var why []string
	ready := false
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		typ, _ := m["type"].(string)
		status, _ := m["status"].(string)
		reason, _ := m["reason"].(string)
		msg, _ := m["message"].(string)
		switch {
		case typ == "Ready" && status == "True":
			ready = true
		case (typ == "Ready" && status == "False") || (typ == "NotReady" && status == "True") || (typ == "Error" && status == "True"):
			why = append(why, strings.TrimSpace(reason+" "+msg))
		}
	}
	if ready && observed == u.GetGeneration() {
		return true, ""
	}
	if len(why) > 0 {
		return false, strings.Join(why, "; ")
	}
	if ready {
		return false, fmt.Sprintf("Strimzi has not yet observed generation %d (status is for %d)", u.GetGeneration(), observed)
	}
	return false, "Strimzi has not reported it ready yet"
}

// BootstrapServers is status.listeners[name].bootstrapServers.
func BootstrapServers(k *unstructured.Unstructured, name string) string {
	ls, _, _ := unstructured.NestedSlice(k.Object, "status", "listeners")
	for _, l := range ls {
		if m, ok := l.(map[string]any); ok && m["name"] == name {
			s, _ := m["bootstrapServers"].(string)
			return s
		}
	}
	return ""
}

// SameBootstrap compares Strimzi's bootstrap list with the workers' address, allowing the
// fully qualified form of the same Service.
func SameBootstrap(reported, want string) bool {
	for _, a := range strings.Split(reported, ",") {
		a = strings.TrimSpace(a)
		host, port, ok := strings.Cut(a, ":")
		if ok && strings.TrimSuffix(host, ".cluster.local")+":"+port == want {
			return true
		}
	}
	return false
}
