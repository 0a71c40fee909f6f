package netem

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// statusCases are the realistic NetworkChaos status documents in testdata/status, with what
// ChaosInjection must make of them.
var statusCases = []struct {
	file  string
	state InjectionState
	msg   []string // substrings of the message
}{
	{"injected.yaml", InjectionInjected, []string{"is injected into 3 pods"}},
	{"injected-after-retry.yaml", InjectionInjected, []string{"injected into 2 pods"}},
	{"failed-no-sch-netem.yaml", InjectionFailed, []string{
		"1 of 2 pods injected",
		"pod bench/profile-lte-worker-0-7xk2p: apply failed: failed to apply for pod bench/profile-lte-worker-0-7xk2p: unable to set tcs for pod profile-lte-worker-0-7xk2p",
		"kubectl logs -n chaos-mesh", "Specified qdisc kind is unknown", "sch_netem",
	}},
	{"pending-not-selected.yaml", InjectionPending, []string{"selected no pods yet (condition Selected is False)"}},
	{"pending-partial.yaml", InjectionPending, []string{"2 of 3 pods injected"}},
	{"stopped.yaml", InjectionStopped, []string{"paused or over"}},
	{"no-status.yaml", InjectionPending, []string{"no status yet: is Chaos Mesh installed"}},
}

func readStatusDoc(t *testing.T, file string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "status", file))
	if err != nil {
		t.Fatal(err)
	}
	// Through JSON into Unstructured, as from an API server: integers stay int64.
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(js); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return obj
}

func TestChaosInjection(t *testing.T) {
	for _, tc := range statusCases {
		t.Run(tc.file, func(t *testing.T) {
			state, msg := ChaosInjection(readStatusDoc(t, tc.file))
			checkInjection(t, state, msg, tc.state, tc.msg)
		})
	}
}

func checkInjection(t *testing.T, state InjectionState, msg string, wantState InjectionState, wantMsg []string) {
	t.Helper()
	if state != wantState {
		t.Errorf("state %s, want %s (message %q)", state, wantState, msg)
	}
	for _, w := range wantMsg {
		if !strings.Contains(msg, w) {
			t.Errorf("message %q lacks %q", msg, w)
		}
	}
}
