//go:build linux

package guardian_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/msgbench/msgbench/internal/guardian"
	"github.com/msgbench/msgbench/netem"
	"github.com/msgbench/msgbench/netem/emulator"
)

// TestServeKillsWhatRunsInANamespace: a registered namespace is emptied at the end, including
// processes nobody registered (what a broker might have started), which frees it.
func TestServeKillsWhatRunsInANamespace(t *testing.T) {
	if err := emulator.CheckPrivileges(); err != nil {
		t.Skipf("needs root: %v", err)
	}
	l, err := emulator.Start(netem.Link{}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	// A shell whose sleep is its own child: not started by msgbench, no parent-death signal.
	sh := exec.Command("sh", "-c", "sleep 60 & echo $!; wait")
	out, err := sh.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Server().Start(sh); err != nil {
		t.Fatal(err)
	}
	var grandchild int
	if _, err := fmt.Fscan(out, &grandchild); err != nil {
		t.Fatal(err)
	}
	fd := filepath.Base(l.Server().Path()) // /proc/<this process>/fd/<fd>
	if err := guardian.Serve(strings.NewReader("netns "+fd+"\n"), os.Stderr, os.Getpid()); err != nil {
		t.Fatal(err)
	}
	_ = sh.Wait()
	if sh.ProcessState == nil || sh.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("the shell ended with %v, want SIGKILL", sh.ProcessState)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(grandchild) + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the shell's sleep (pid %d) still runs in the namespace", grandchild)
		}
	}
}
