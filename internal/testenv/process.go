package testenv

import (
	"bufio"
	"io"
	"os/exec"
	"testing"
	"time"
)

// process is a third-party server a test runs (aedes, bisquitt): what it prints is kept, and the
// test's cleanup stops it by its PID.
type process struct {
	cmd            *exec.Cmd
	stdout, stderr SyncBuffer
	done           chan struct{}
}

// startProcess starts cmd and waits up to 30 s for the first line of its standard output that
// ready accepts (a server that says it listens), which it returns; it fails the test if the
// process exits first. The test's cleanup calls stop (the process's own way to exit: closing its
// standard input, a signal), kills it by its PID if it has not exited within 5 s, and when the
// test failed logs everything it printed.
func startProcess(t testing.TB, name string, cmd *exec.Cmd, ready func(line string) bool, stop func() error) (*process, string) {
	t.Helper()
	p := &process{cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = &p.stderr
	// A pipe of our own rather than StdoutPipe: Wait then waits until everything printed is
	// copied, so the last lines are kept.
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		if stop() == nil {
			select {
			case <-p.done:
			case <-time.After(5 * time.Second):
			}
		}
		_ = cmd.Process.Kill() // by PID; a no-op once it has exited
		<-p.done
		if t.Failed() {
			t.Logf("%s stdout:\n%s\n%s stderr:\n%s", name, p.stdout.String(), name, p.stderr.String())
		}
	})
	lines, scanned := make(chan string, 1), make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pr)
		found := false
		for sc.Scan() {
			line := sc.Text()
			_, _ = p.stdout.Write([]byte(line + "\n"))
			if !found && ready(line) {
				found = true
				lines <- line
			}
		}
		_, _ = io.Copy(io.Discard, pr) // past a line too long to scan, keep the process unblocked
	}()
	go func() { _ = cmd.Wait(); _ = pw.Close(); <-scanned; close(p.done) }()
	select {
	case line := <-lines:
		return p, line
	case <-p.done:
		t.Fatalf("%s exited before it listened (%v): %s%s", name, cmd.ProcessState, p.stdout.String(), p.stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not listen within 30s: %s%s", name, p.stdout.String(), p.stderr.String())
	}
	return nil, ""
}
