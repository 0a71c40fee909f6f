package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/plan"
)

// gatewayPlanFile writes the compiled plan of a sample manifest, its version replaced by
// version when not empty, and returns the file's path.
func gatewayPlanFile(t *testing.T, sample, version string) string {
	t.Helper()
	mb, err := manifest.ReadFile(repo("config", "samples", sample))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Compile(&mb.Spec, plan.Admitted)
	if err != nil {
		t.Fatal(err)
	}
	data, err := plan.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if version != "" {
		data = bytes.Replace(data, []byte(`"`+plan.Version+`"`), []byte(`"`+version+`"`), 1)
	}
	path := filepath.Join(t.TempDir(), plan.FileName)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestGatewayRefusesItsInputClearly: `msgbench gateway` runs the plan it is given (--plan) or
// a manifest (-f), not both, and refuses a plan of another msgbench by its version.
func TestGatewayRefusesItsInputClearly(t *testing.T) {
	sample := repo("config", "samples", "mqtt-sn-qos1.yaml")
	current := gatewayPlanFile(t, "mqtt-sn-qos1.yaml", "")
	other := gatewayPlanFile(t, "mqtt-sn-qos1.yaml", "plan.msgbench.io/v0")
	base := []string{"gateway", "--mode", "mqtt-sn", "--listen", "127.0.0.1:0", "--broker", "127.0.0.1:1"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--plan", other}, `version "plan.msgbench.io/v0"`},
		{[]string{"--plan", current, "-f", sample}, "-f and --plan"},
		{[]string{"--plan", current, "--set", "qos=0"}, "--set with --plan"},
		{[]string{"--plan", "/nonexistent/plan.json"}, "/nonexistent/plan.json"},
		{[]string{"--mode", "http", "--plan", current}, "no group of the plan"},
	} {
		_, err := msgbench(t, append(append([]string{}, base...), tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want it to mention %q", tc.args, err, tc.want)
		}
	}
}
