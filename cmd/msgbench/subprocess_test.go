package main

import (
	"context"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// asMsgbenchEnv makes this test binary act as `msgbench run …` (see init below).
const asMsgbenchEnv = "MSGBENCH_TEST_AS_MSGBENCH"

// Tests that run several `msgbench run` side by side cannot run them in-process: a run's guardian
// (internal/guardian) is one per process, so one run ending would clean up what another started.
// They start this test binary instead, built with the tests' flags (-race included), which acts
// as msgbench when started as `<test binary> run …` with asMsgbenchEnv set: the same code, the
// same race detector (a race makes it exit non-zero), a process of its own. The variable is
// removed first, so that what the run starts (the guardian, workers) is started as usual.
func init() {
	if os.Getenv(asMsgbenchEnv) == "1" && len(os.Args) > 1 && os.Args[1] == "run" {
		_ = os.Unsetenv(asMsgbenchEnv)
		main()
		os.Exit(0)
	}
}

// msgbenchProcess runs `msgbench args…` as a process of this test binary (see init above) with
// env added to the test's environment, and returns its stdout and stderr together.
func msgbenchProcess(t *testing.T, timeout time.Duration, env []string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), asMsgbenchEnv+"=1"), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// weighted is a counting semaphore whose holders take different weights: the heavy runs (a JVM
// broker booting) count for more of the machine than a Mosquitto run that mostly waits.
type weighted struct {
	mu   sync.Mutex
	cond *sync.Cond
	free int
}

func newWeighted(n int) *weighted {
	w := &weighted{free: n}
	w.cond = sync.NewCond(&w.mu)
	return w
}

func (w *weighted) acquire(n int) {
	w.mu.Lock()
	for w.free < n {
		w.cond.Wait()
	}
	w.free -= n
	w.mu.Unlock()
}

func (w *weighted) release(n int) {
	w.mu.Lock()
	w.free += n
	w.mu.Unlock()
	w.cond.Broadcast()
}
