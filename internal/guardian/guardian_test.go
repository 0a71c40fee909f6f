package guardian

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets this test binary be the guardian, as msgbench is: Start runs /proc/self/exe Arg.
func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == Arg {
		os.Exit(Main())
	}
	os.Exit(m.Run())
}

// sleeper starts a process that would outlive this test if nobody killed it (no Pdeathsig).
func sleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	return cmd
}

func alive(pid int) bool { s := state(pid); return s != 0 && s != 'Z' }

func waitGone(t *testing.T, pid int) bool {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if !alive(pid) {
			return true
		}
	}
	return false
}

// TestServeCleansUpOnlyWhatItWasTold feeds the guardian's protocol directly: at end of file it
// kills the registered process and removes the registered folder, and leaves alone what was
// withdrawn, what was never registered, a PID whose start time does not match (a reused PID),
// and paths it must never remove.
func TestServeCleansUpOnlyWhatItWasTold(t *testing.T) {
	tmp := t.TempDir()
	mk := func(name string) string {
		d := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Join(d, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
		return d
	}
	registered, withdrawn, unregistered := mk("msgbench-a"), mk("msgbench-b"), mk("msgbench-c")
	wrongName := mk("other")
	target := mk("target")
	link := filepath.Join(tmp, "msgbench-link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	kill, keep, forgotten, reused := sleeper(t), sleeper(t), sleeper(t), sleeper(t)
	start := func(c *exec.Cmd) uint64 {
		s, err := startTime(c.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	var in bytes.Buffer
	fmt.Fprintf(&in, "pid %d %d\n", kill.Process.Pid, start(kill))
	fmt.Fprintf(&in, "pid %d %d\nforget-pid %d\n", forgotten.Process.Pid, start(forgotten), forgotten.Process.Pid)
	fmt.Fprintf(&in, "pid %d %d\n", reused.Process.Pid, start(reused)+1) // another process had this PID
	fmt.Fprintf(&in, "dir %s\ndir %s\nforget-dir %s\n", registered, withdrawn, withdrawn)
	fmt.Fprintf(&in, "dir %s\ndir %s\ndir %s\ndir %s/../msgbench-c\ndir msgbench-rel\nnonsense line\n", wrongName, link, tmp, registered)
	var log bytes.Buffer
	if err := Serve(&in, &log, os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if !waitGone(t, kill.Process.Pid) {
		t.Errorf("the registered process %d still runs", kill.Process.Pid)
	}
	for _, c := range []*exec.Cmd{keep, forgotten, reused} {
		if !alive(c.Process.Pid) {
			t.Errorf("process %d was killed; it was not registered, or withdrawn, or another process's start time", c.Process.Pid)
		}
	}
	if _, err := os.Stat(registered); !os.IsNotExist(err) {
		t.Errorf("the registered folder is still there (%v)", err)
	}
	for _, d := range []string{withdrawn, unregistered, wrongName, filepath.Join(target, "sub"), link} {
		if _, err := os.Lstat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
	if got := log.String(); !strings.Contains(got, fmt.Sprintf("killed pid %d", kill.Process.Pid)) || !strings.Contains(got, "removed "+registered) {
		t.Errorf("the report does not say what it did: %q", got)
	}
}

// TestServeIsQuietWhenNothingIsLeft: after a run that cleaned up itself, the guardian says
// nothing.
func TestServeIsQuietWhenNothingIsLeft(t *testing.T) {
	c := sleeper(t)
	s, _ := startTime(c.Process.Pid)
	d := filepath.Join(t.TempDir(), "msgbench-x")
	in := fmt.Sprintf("pid %d %d\ndir %s\nforget-pid %d\nforget-dir %s\n", c.Process.Pid, s, d, c.Process.Pid, d)
	var log bytes.Buffer
	if err := Serve(strings.NewReader(in), &log, os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if log.Len() > 0 {
		t.Errorf("reported %q with nothing to clean up", log.String())
	}
}

// TestGuardianProcess starts the real guardian process: it ignores the signals that end
// msgbench, and when its pipe closes without the process and folder being withdrawn (as when
// msgbench dies) it kills the one and removes the other, then exits.
func TestGuardianProcess(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	var log bytes.Buffer
	g, err := Start(&log) // read once Close has waited for the guardian
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = g.Close(5 * time.Second) }()
	child := sleeper(t)
	Track(child.Process.Pid)
	dir, err := MkdirTemp("", "msgbench-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	kept, err := MkdirTemp("", "msgbench-kept-")
	if err != nil {
		t.Fatal(err)
	}
	if err := RemoveAll(kept); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(kept, 0o700); err != nil { // the same path made again, by someone else
		t.Fatal(err)
	}
	if _, err := MkdirTemp("", "other-"); err == nil {
		t.Error("MkdirTemp accepted a pattern without the msgbench- prefix")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGPIPE} {
		_ = syscall.Kill(g.PID(), sig)
	}
	time.Sleep(200 * time.Millisecond)
	select {
	case <-g.exited:
		t.Fatal("the guardian ended on a signal meant for msgbench")
	default:
	}
	if err := g.Close(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if g.cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("the guardian exited with %v", g.cmd.ProcessState)
	}
	if !waitGone(t, child.Process.Pid) {
		t.Errorf("the tracked process still runs")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the folder is still there (%v)", err)
	}
	if _, err := os.Stat(kept); err != nil {
		t.Errorf("the guardian removed a folder that was withdrawn: %v", err)
	}
	if !strings.Contains(log.String(), "removed "+dir) || strings.Contains(log.String(), kept) {
		t.Errorf("the guardian's report %q does not say what it did", log.String())
	}
	// After Close, nothing goes to a guardian any more.
	Track(child.Process.Pid)
}
