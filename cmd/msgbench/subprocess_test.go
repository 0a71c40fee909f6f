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

// subtest is one subtest for runSubtests.
type subtest struct {
	name   string
	weight int // of runSubtests' capacity; 0 counts as 1
	f      func(t *testing.T)
}

// runSubtests runs the subtests side by side, in order, each starting once its weight fits in
// capacity, and returns when all have ended. Unlike t.Parallel, it does not wait for the parent
// to return nor hold the others to go test's -parallel (GOMAXPROCS: 2 here), which is for
// tests that compute, not for runs that mostly wait on a schedule, a broker or a process. The
// subtests must share nothing: no t.Setenv, and no in-process `msgbench run` that starts
// anything (the guardian is one per process: msgbenchProcess runs it as a process instead).
func runSubtests(t *testing.T, capacity int, tests []subtest) {
	t.Helper()
	sem := newWeighted(capacity)
	var wg sync.WaitGroup
	for _, st := range tests {
		w := max(st.weight, 1)
		sem.acquire(w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer sem.release(w)
			t.Run(st.name, st.f)
		}()
	}
	wg.Wait()
}
