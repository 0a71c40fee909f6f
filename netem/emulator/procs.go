//go:build linux

package emulator

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// tagVar marks the processes a link starts: MSGBENCH_NETEM_LINK=msgb-<pid>-<n>. Children pass it
// on to what they start, so a later msgbench can tell leftovers of a dead one.
const tagVar = "MSGBENCH_NETEM_LINK"

// killNamespaceProcesses SIGKILLs every process whose network namespace is the one nsfd holds.
// Only a link's own children (and what they started) live there.
func killNamespaceProcesses(nsfd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(nsfd, &st); err != nil {
		return fmt.Errorf("stat network namespace: %w", err)
	}
	want := fmt.Sprintf("net:[%d]", st.Ino)
	var errs []error
	for _, pid := range pids() {
		if link, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "ns", "net")); err == nil && link == want {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				errs = append(errs, fmt.Errorf("kill %d: %w", pid, err))
			}
		}
	}
	return errors.Join(errs...)
}

// reapStale SIGKILLs processes that an earlier msgbench, now dead, started in its links: their
// environment carries its tag and they are not in this process's network namespace. Anything
// else (a live msgbench's children, processes that merely share the name) is left alone.
func reapStale() {
	// This thread's namespace, not /proc/self's: that is the main thread's, and the main
	// thread may be the one that spawns children inside a link.
	self, err := os.Readlink("/proc/thread-self/ns/net")
	if err != nil {
		return
	}
	prefix := []byte(tagVar + "=msgb-")
	for _, pid := range pids() {
		dir := filepath.Join("/proc", strconv.Itoa(pid))
		env, err := os.ReadFile(filepath.Join(dir, "environ"))
		if err != nil {
			continue
		}
		i := bytes.Index(env, prefix)
		if i < 0 || (i > 0 && env[i-1] != 0) {
			continue
		}
		owner, _, _ := strings.Cut(string(env[i+len(prefix):]), "-")
		ownerPID, err := strconv.Atoi(owner)
		if err != nil || ownerPID == os.Getpid() || alive(ownerPID) {
			continue
		}
		if ns, err := os.Readlink(filepath.Join(dir, "ns", "net")); err != nil || ns == self {
			continue
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// pids lists the processes in /proc, this one excluded.
func pids() []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	out := make([]int, 0, len(entries))
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid != self {
			out = append(out, pid)
		}
	}
	return out
}
