//go:build linux

package emulator

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/msgbench/msgbench/netem"
)

// TestCloseLeavesNothing starts processes in both namespaces, one of them a grandchild that
// outlives its parent, and checks that Close ends them all and releases every descriptor.
func TestCloseLeavesNothing(t *testing.T) {
	if err := CheckPrivileges(); err != nil {
		t.Skipf("needs root: %v", err)
	}
	fds := fdCount(t)
	l, err := Start(netem.Link{Up: netem.Impairment{Delay: 5 * ms}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command("sleep", "60")
	if err := l.Device().Start(child); err != nil {
		t.Fatal(err)
	}
	// The shell prints its background child's PID and exits; the child stays in the namespace.
	parent := exec.Command("sh", "-c", "sleep 60 & echo $!")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Server().Start(parent); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	grandchild, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	if !running(grandchild) {
		t.Fatalf("the grandchild %d is not running before Close", grandchild)
	}
	env := strings.Join(l.Env(), " ")
	for _, want := range []string{"MSGBENCH_SERVER_ADDR=198.18.0.2", "MSGBENCH_SERVER_ADDR6=2001:2::2", "MSGBENCH_DEVICE_ADDR=198.18.0.1", "MSGBENCH_DEVICE_ADDR6=2001:2::1"} {
		if !strings.Contains(env, want) {
			t.Errorf("Env() = %q lacks %s", env, want)
		}
	}

	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_ = child.Wait() // reap our own child
	deadline := time.Now().Add(2 * time.Second)
	for running(grandchild) || running(child.Process.Pid) {
		if time.Now().After(deadline) {
			t.Fatalf("processes left after Close: child running %v, grandchild running %v", running(child.Process.Pid), running(grandchild))
		}
		time.Sleep(10 * ms)
	}
	if got := fdCount(t); got > fds {
		t.Errorf("%d descriptors open after Close, %d before Start", got, fds)
	}
	if err := l.Device().Start(exec.Command("true")); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Start after Close: %v, want an error saying the link is closed", err)
	}
}

// TestStaleProcessesAreReaped plays a crashed msgbench: a process in a link's namespace carries
// the tag of a dead owner, and the cleanup that Start runs kills it. A process tagged by a live
// owner stays.
func TestStaleProcessesAreReaped(t *testing.T) {
	l := startLink(t, netem.Link{}, Options{})
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	tagged := func(owner int) *exec.Cmd {
		// Through the spawner, not Namespace.Start, which would tag it with this process.
		cmd := exec.Command("sleep", "60")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=msgb-%d-0", tagVar, owner))
		if err := l.spawner.Start(l.Device().fd, cmd); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	orphan := tagged(dead.Process.Pid)
	keeper := exec.Command("sleep", "60")
	if err := keeper.Start(); err != nil { // a live "owner"
		t.Fatal(err)
	}
	defer func() { _ = keeper.Process.Kill(); _ = keeper.Wait() }()
	kept := tagged(keeper.Process.Pid)

	reapStale()
	if state, _ := orphan.Process.Wait(); state == nil || state.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("the orphan of dead PID %d ended with %v, want SIGKILL", dead.Process.Pid, state)
	}
	if !running(kept.Process.Pid) {
		t.Errorf("the process of a live owner was killed")
	}
}

// TestCheckPrivilegesWithoutCapabilities runs CheckPrivileges in a copy of this test binary as
// user nobody and checks that the message says what to do.
func TestCheckPrivilegesWithoutCapabilities(t *testing.T) {
	if os.Getenv("MSGBENCH_TEST_CHECK_PRIVILEGES") == "1" {
		if err := CheckPrivileges(); err != nil {
			fmt.Println(err)
		}
		return
	}
	if os.Getuid() != 0 {
		err := CheckPrivileges()
		if err == nil || !strings.Contains(err.Error(), "sudo setcap cap_net_admin,cap_sys_admin+ep") {
			t.Fatalf("CheckPrivileges as uid %d: %v", os.Getuid(), err)
		}
		return
	}
	// A directory user nobody can enter (t.TempDir's parent is private).
	dir, err := os.MkdirTemp("", "msgbench-privileges-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "emulator.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(context.Background(), bin, "-test.run=^TestCheckPrivilegesWithoutCapabilities$")
	cmd.Env = append(os.Environ(), "MSGBENCH_TEST_CHECK_PRIVILEGES=1")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, want := range []string{"CAP_NET_ADMIN and CAP_SYS_ADMIN", "run it as root", "sudo setcap cap_net_admin,cap_sys_admin+ep bin/msgbench"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("message %q lacks %q", out, want)
		}
	}
}

// running reports whether pid is a live process (not gone, not a zombie).
func running(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// TestTCPListening sees a listener appear in the server namespace, and only there.
func TestTCPListening(t *testing.T) {
	l := startLink(t, netem.Link{}, Options{})
	if ok, err := l.Server().TCPListening(5555); err != nil || ok {
		t.Fatalf("before listening: %v, %v", ok, err)
	}
	ln, err := l.Server().Listen(context.Background(), "tcp", "[2001:2::2]:5555")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	if ok, err := l.Server().TCPListening(5555); err != nil || !ok {
		t.Errorf("server side while listening: %v, %v", ok, err)
	}
	if ok, _ := l.Device().TCPListening(5555); ok {
		t.Errorf("the device side sees the server's listener")
	}
}

// TestStartFailureCleansUp makes Start fail half-way (the kernel refuses an MTU below IPv4's 68)
// and checks that it returns the error, not a panic, and releases what it had created.
func TestStartFailureCleansUp(t *testing.T) {
	if err := CheckPrivileges(); err != nil {
		t.Skipf("needs root: %v", err)
	}
	fds := fdCount(t)
	l, err := Start(netem.Link{MTU: 40}, Options{})
	if err == nil || l != nil || !strings.Contains(err.Error(), "set MTU 40") {
		t.Fatalf("Start = %v, %v; want no link and an error about the MTU", l, err)
	}
	if got := fdCount(t); got > fds {
		t.Errorf("%d descriptors open after the failed Start, %d before", got, fds)
	}
}

// TestNoTCPKeepAliveProbes: connections dialled from the device side and accepted on the
// server side send no TCP keep-alive probes. Go's default sends one every 15 s, which a device
// does not (the kernel's own default waits 2 h) and which would keep an emulated radio connected
// for ever: NB-IoT's 20 s inactivity timer never ran out.
func TestNoTCPKeepAliveProbes(t *testing.T) {
	l := startLink(t, netem.Link{}, Options{})
	ln, err := l.Server().Listen(context.Background(), "tcp", "198.18.0.2:5556")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := l.Device().DialContext(context.Background(), "tcp", "198.18.0.2:5556")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	s := <-accepted
	if s == nil {
		t.Fatal("nothing accepted")
	}
	defer func() { _ = s.Close() }()
	for side, conn := range map[string]net.Conn{"dialled": c, "accepted": s} {
		raw, err := conn.(*net.TCPConn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var on int
		var serr error
		if err := raw.Control(func(fd uintptr) { on, serr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_KEEPALIVE) }); err != nil || serr != nil {
			t.Fatal(err, serr)
		}
		if on != 0 {
			t.Errorf("the %s connection has SO_KEEPALIVE on: it would probe every 15 s", side)
		}
	}
}
