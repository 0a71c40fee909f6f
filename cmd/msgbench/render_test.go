package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRenderNamespace: like kubectl, the manifest's metadata.namespace stands unless -n is given,
// and a -n that contradicts it is refused with kubectl's message (the objects said "default" for
// a benchmark in "bench").
func TestRenderNamespace(t *testing.T) {
	data, err := os.ReadFile(repo("config", "samples", "mqtt-qos1.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	inBench := filepath.Join(t.TempDir(), "bench.yaml")
	withNS := strings.Replace(string(data), "metadata:\n", "metadata:\n  namespace: bench\n", 1)
	if withNS == string(data) {
		t.Fatal("the sample has no metadata: line to add a namespace to")
	}
	if err := os.WriteFile(inBench, []byte(withNS), 0o644); err != nil {
		t.Fatal(err)
	}
	namespaces := func(out string) map[string]int {
		seen := map[string]int{}
		for _, line := range strings.Split(out, "\n") {
			if ns, ok := strings.CutPrefix(line, "  namespace: "); ok {
				seen[ns]++
			}
		}
		return seen
	}
	for _, tc := range []struct {
		name   string
		args   []string
		wantNS string
		err    string
	}{
		{"the manifest's namespace", []string{"-f", inBench}, "bench", ""},
		{"-n agreeing", []string{"-f", inBench, "-n", "bench"}, "bench", ""},
		{"-n without one in the manifest", []string{"-f", repo("config", "samples", "mqtt-qos1.yaml"), "-n", "x"}, "x", ""},
		{"neither", []string{"-f", repo("config", "samples", "mqtt-qos1.yaml")}, "default", ""},
		{"-n contradicting", []string{"-f", inBench, "-n", "x"}, "",
			`the namespace from the provided object "bench" does not match the namespace "x". You must pass '--namespace=bench' to perform this operation.`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := msgbench(t, append([]string{"render"}, tc.args...)...)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Errorf("error %v, want %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			seen := namespaces(out)
			if len(seen) != 1 || seen[tc.wantNS] == 0 || !strings.Contains(out, "MessagingBenchmark "+tc.wantNS+"/") {
				t.Errorf("namespaces in the objects %v, want only %s", seen, tc.wantNS)
			}
		})
	}
}
