package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/internal/guardian"
)

// guardianMarkEnv names a file a guardian started by this test binary appends a line to, so that
// a test can tell whether a run started one (see guardianStarted).
const guardianMarkEnv = "MSGBENCH_TEST_GUARDIAN_MARK"

// A package variable's initializer runs before any init function, so before signals.go's init
// makes this process a guardian: it marks the start, and the guardian goes on as usual.
var _ = func() bool {
	if len(os.Args) == 2 && os.Args[1] == guardian.Arg {
		if path := os.Getenv(guardianMarkEnv); path != "" {
			if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
				_, _ = f.WriteString("started\n")
				_ = f.Close()
			}
		}
	}
	return true
}()

// guardianStarted runs `msgbench args…` in-process and says how many guardians it started.
func guardianStarted(t *testing.T, args ...string) (int, error) {
	t.Helper()
	mark := filepath.Join(t.TempDir(), "guardian-started")
	t.Setenv(guardianMarkEnv, mark)
	_, err := msgbench(t, args...)
	data, _ := os.ReadFile(mark)
	return strings.Count(string(data), "started\n"), err
}

// TestRefusedRunStartsNoGuardian: a spec or flag refused by the checks before a run starts
// nothing, not even the guardian (which took ~1.3 s to start under -race for every refusal); a run
// that starts does start one, before its broker, so a killed msgbench still leaves nothing behind
// (TestEveryWayOfEndingLeavesNothingBehind checks that with SIGKILL).
func TestRefusedRunStartsNoGuardian(t *testing.T) {
	sample := repo("config", "samples", "mqtt-qos0.yaml")
	t.Run("refused", func(t *testing.T) {
		t.Setenv(mosquitto.BinaryEnv, "/nonexistent/mosquitto")
		want := []string{"mosquitto is not installed", "--run-id", "objectStore"}
		for i, args := range [][]string{
			{"run", "-f", sample, "--no-embedded-broker", "--out", t.TempDir()},                                        // localrun.Check
			{"run", "-f", sample, "--out", t.TempDir(), "--run-id", "a/b"},                                             // the output folder
			{"run", "-f", sample, "--out", t.TempDir(), "--set", "results.objectStore.url=file:///proc/msgbench-test"}, // the object store
		} {
			n, err := guardianStarted(t, args...)
			if err == nil || !strings.Contains(err.Error(), want[i]) {
				t.Errorf("%v: error %v, want the refusal naming %q", args, err, want[i])
			}
			if n != 0 {
				t.Errorf("%v refused (%v) after starting %d guardian(s); want none", args, err, n)
			}
		}
	})
	t.Run("run", func(t *testing.T) {
		n, err := guardianStarted(t, "run", "-f", sample, "-q", "--out", t.TempDir(), "--set", "workload.duration=1s", "--set", "workload.warmup=0s")
		if err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("a run started %d guardians, want 1", n)
		}
	})
}
