//go:build linux

package spawn

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

const helperEnv = "MSGBENCH_SPAWN_TEST_HELPER"

// TestMain makes this test binary, with helperEnv set, a parent that starts a child with Start
// from a goroutine whose thread then ends, prints the child's PID and waits to be killed.
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		done := make(chan int)
		go func() {
			runtime.LockOSThread() // never unlocked: this thread ends with the goroutine
			cmd := exec.Command("sleep", "60")
			if err := Start(cmd); err != nil {
				fmt.Println(err)
				os.Exit(1)
			}
			done <- cmd.Process.Pid
		}()
		fmt.Println(<-done)
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func running(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !strings.Contains(string(stat), ") Z ")
}

// TestChildDiesWithParent: a child started with Start dies when its parent is killed with SIGKILL
// (it fails with a plain cmd.Start), and it does not die with the thread of the goroutine that
// asked for it, which ends first.
func TestChildDiesWithParent(t *testing.T) {
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), helperEnv+"=1")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = parent.Process.Kill(); _ = parent.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("helper: %q", line)
	}
	time.Sleep(200 * time.Millisecond) // the goroutine's thread has ended by now
	if !running(child) {
		t.Fatal("the child died with the thread of the goroutine that started it")
	}
	_ = parent.Process.Kill()
	_ = parent.Wait()
	for deadline := time.Now().Add(5 * time.Second); running(child); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = exec.Command("kill", "-9", strconv.Itoa(child)).Run()
			t.Fatalf("child %d outlived its parent's SIGKILL", child)
		}
	}
}

// TestCombinedOutput runs a command to its end and returns what it wrote.
func TestCombinedOutput(t *testing.T) {
	out, err := CombinedOutput(exec.Command("sh", "-c", "echo out; echo err >&2"))
	if err != nil || string(out) != "out\nerr\n" {
		t.Errorf("got %q, %v", out, err)
	}
}
