// Package proc measures processes: CPU time and peak resident memory of this process
// (getrusage) and of others by PID (/proc), and stops the processes msgbench started.
package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Usage is CPU time used and peak resident set size.
type Usage struct {
	CPU     time.Duration
	PeakRSS int64 // bytes
	RSS     int64 // bytes now (Of only)
}

// Self returns this process's usage.
func Self() Usage {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return Usage{}
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return Usage{CPU: cpu, PeakRSS: ru.Maxrss * 1024}
}

// Own returns this process's usage from /proc (with its resident memory now).
func Own() (Usage, error) { return Of(os.Getpid()) }

// clockTicks is USER_HZ, the unit of /proc/PID/stat times; 100 on every Linux architecture
// Go supports.
const clockTicks = 100

// Of returns the usage of process pid from /proc: utime+stime and VmHWM.
func Of(pid int) (Usage, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Usage{}, err
	}
	// Fields after the command name, which is in parentheses and may contain spaces.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return Usage{}, errors.New("unexpected /proc stat format")
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 13 {
		return Usage{}, errors.New("unexpected /proc stat format")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return Usage{}, errors.New("unexpected /proc stat format")
	}
	u := Usage{CPU: time.Duration(utime+stime) * time.Second / clockTicks}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		for key, dst := range map[string]*int64{"VmHWM:": &u.PeakRSS, "VmRSS:": &u.RSS} {
			if rest, ok := strings.CutPrefix(line, key); ok {
				if kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64); err == nil {
					*dst = kb * 1024
				}
			}
		}
	}
	return u, nil
}

// Stop ends a process this program started: SIGTERM, then SIGKILL after grace, and reaps it.
func Stop(cmd *exec.Cmd, grace time.Duration) error {
	if cmd == nil || cmd.Process == nil {
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		return exitIsSignal(err)
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		return exitIsSignal(<-done)
	}
}

// exitIsSignal treats death by the signal Stop sent as success.
func exitIsSignal(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return nil
		}
		if ee.ExitCode() == 0 || ee.ExitCode() == 143 {
			return nil
		}
	}
	return err
}

// System returns the machine's CPU time since boot over all CPUs, and the part of it the
// hypervisor stole (the "cpu" line of /proc/stat). Both are zero where /proc/stat is missing.
func System() (total, steal time.Duration) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0
	}
	// user nice system idle iowait irq softirq steal [guest guest_nice, already in user/nice]
	var ticks [8]int64
	for i := range ticks {
		ticks[i], _ = strconv.ParseInt(f[i+1], 10, 64)
	}
	var sum int64
	for _, v := range ticks {
		sum += v
	}
	return time.Duration(sum) * time.Second / clockTicks, time.Duration(ticks[7]) * time.Second / clockTicks
}
