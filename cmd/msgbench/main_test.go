package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/results"
)

// msgbench runs the CLI in-process with args and returns its stdout and error.
func msgbench(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newRootCommand()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func repo(parts ...string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(append([]string{filepath.Dir(file), "..", ".."}, parts...)...)
}

func TestVersion(t *testing.T) {
	out, err := msgbench(t, "version")
	if err != nil || !strings.HasPrefix(out, "msgbench ") || !strings.Contains(out, runtime.Version()) {
		t.Errorf("version printed %q (%v)", out, err)
	}
}

func TestLoadgenCommand(t *testing.T) {
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Stop() }()
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, err := msgbench(t, "loadgen", "-f", repo("config", "samples", "mqtt-qos1.yaml"), "--broker", b.Addr, "--out", out,
		"--set", "workload.duration=1s", "--set", "workload.warmup=200ms")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "mqtt-qos1: Succeeded") || !strings.Contains(stdout, "end-to-end") {
		t.Errorf("summary:\n%s", stdout)
	}
	r, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Sent < 1900 || *r.Lost != 0 || r.Spec.Workload.Rate != 2000 {
		t.Errorf("result: sent %d lost %d rate %d", r.Sent, *r.Lost, r.Spec.Workload.Rate)
	}
}

func TestLoadgenFailsClearly(t *testing.T) {
	other := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(other, []byte(`{"Version": "plan.msgbench.io/v0", "Workers": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"loadgen", "-f", repo("config", "samples", "mqtt-qos1.yaml"), "--broker", "127.0.0.1:1"}, "connect to 127.0.0.1:1"},
		{[]string{"loadgen", "-f", repo("config", "samples", "mqtt-qos1.yaml"), "--broker", "127.0.0.1:1", "--set", "qos=7"}, "spec.qos"},
		{[]string{"loadgen", "-f", "/nonexistent.yaml", "--broker", "127.0.0.1:1"}, "nonexistent.yaml"},
		{[]string{"loadgen", "--broker", "127.0.0.1:1"}, "give --plan (a compiled plan) or -f (a manifest)"},
		{[]string{"loadgen", "--plan", other, "--broker", "127.0.0.1:1"}, `version "plan.msgbench.io/v0"`},
		{[]string{"loadgen", "--plan", other, "-f", repo("config", "samples", "mqtt-qos1.yaml"), "--broker", "127.0.0.1:1"}, "-f and --plan: give one"},
		{[]string{"loadgen", "--plan", other, "--set", "qos=1", "--broker", "127.0.0.1:1"}, "--set with --plan"},
		{[]string{"loadgen", "-f", repo("config", "samples", "mqtt-qos1.yaml"), "--broker", "127.0.0.1:1", "--out", "/proc/nope/r.json"}, "--out /proc/nope/r.json"},
	} {
		_, err := msgbench(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want it to mention %q", tc.args, err, tc.want)
		}
	}
}
