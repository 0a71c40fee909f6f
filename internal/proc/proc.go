// Package proc measures processes: CPU time and peak resident memory of this process
// (getrusage) and of others by PID (the process's CPU clock and /proc), and stops the
// processes msgbench started.
//
// Every CPU figure carries its resolution (Usage.CPUResolution): a difference of two readings
// smaller than it may be a true zero or anything below the resolution, never a measured zero.
// Where each counter comes from and why, finest first:
//
//   - Self: getrusage(RUSAGE_SELF), 1 µs. All threads of this process, exited ones included.
//   - Of(pid): the process's CPU-time clock (clock_gettime on clock_getcpuclockid(pid)'s
//     clock, CPUCLOCK_SCHED), 1 ns. The kernel's thread-group sum: sum_exec_runtime of every
//     live thread plus what exited threads left in the signal struct — exactly the total that
//     /proc/PID/stat's utime+stime is scaled to, before it is cut to 10 ms clock ticks. Any
//     process in the same PID namespace can read it, without privilege or ptrace access.
//     Not /proc/PID/schedstat: that is the main thread alone; summing
//     /proc/PID/task/*/schedstat loses every thread that exited (a JVM's or Erlang VM's
//     short-lived workers, a Go thread released by LockOSThread).
//   - Others' cgroups: a cgroup v2 cpu.stat usage_usec, 1 µs, for a container's cgroup this
//     process can see (a cgroup namespace usually hides the sibling containers' cgroups; then
//     the process clocks). It also counts the container's processes that have exited.
//   - Fallback only, where nothing finer answers: /proc/PID/stat utime+stime in USER_HZ
//     clock ticks, 10 ms (ClockTick).
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
	CPU time.Duration
	// CPUResolution is the step CPU is counted in (1 ns, 1 µs, or a 10 ms ClockTick): a
	// difference of two readings below it is "less than CPUResolution", not zero. 0 means
	// unknown (a zero Usage).
	CPUResolution time.Duration
	PeakRSS       int64 // bytes
	RSS           int64 // bytes now (Of only)
}

// Resolutions of the CPU counters (see the package comment).
const (
	ResolutionClock  = time.Nanosecond          // a process CPU-time clock
	ResolutionRusage = time.Microsecond         // getrusage; cgroup v2 usage_usec
	ClockTick        = time.Second / clockTicks // /proc/PID/stat's utime and stime
)

// Self returns this process's usage: getrusage, CPU in µs.
func Self() Usage {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return Usage{}
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return Usage{CPU: cpu, CPUResolution: ResolutionRusage, PeakRSS: ru.Maxrss * 1024}
}

// Own returns this process's usage from /proc (with its resident memory now).
func Own() (Usage, error) { return Of(os.Getpid()) }

// clockTicks is USER_HZ, the unit of /proc/PID/stat times; 100 on every Linux architecture
// Go supports.
const clockTicks = 100

// processClock is clock_getcpuclockid(pid) of glibc and musl: the kernel's
// MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED), ~pid<<3 | 2.
func processClock(pid int) int32 { return int32(^pid<<3 | 2) }

// ClockCPU is the CPU time of process pid from its CPU-time clock: every thread's, exited
// threads' included, in ns.
func ClockCPU(pid int) (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(processClock(pid), &ts); err != nil {
		return 0, fmt.Errorf("CPU clock of process %d: %w", pid, err)
	}
	return time.Duration(ts.Nano()), nil
}

// Of returns the usage of process pid: CPU from its CPU-time clock (ns), or where that clock
// does not answer, from /proc/PID/stat's utime+stime (10 ms ticks); VmHWM and VmRSS from
// /proc/PID/status.
func Of(pid int) (Usage, error) {
	u, err := ticksOf(pid)
	if err != nil {
		return Usage{}, err
	}
	// After /proc/PID/stat: a PID that is gone fails there, and the clock read next cannot be
	// of a process that replaced it (the clock refuses a PID that is not a process).
	if cpu, err := ClockCPU(pid); err == nil {
		u.CPU, u.CPUResolution = cpu, ResolutionClock
	}
	return u, memoryOf(pid, &u)
}

// TicksOf is Of with CPU read from /proc/PID/stat only: utime+stime in 10 ms clock ticks, the
// fallback (and what msgbench read before the process clock).
func TicksOf(pid int) (Usage, error) {
	u, err := ticksOf(pid)
	if err != nil {
		return Usage{}, err
	}
	return u, memoryOf(pid, &u)
}

func ticksOf(pid int) (Usage, error) {
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
	return Usage{CPU: time.Duration(utime+stime) * ClockTick, CPUResolution: ClockTick}, nil
}

// memoryOf fills u's peak and current resident memory from /proc/PID/status.
func memoryOf(pid int, u *Usage) error {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return err
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
	return nil
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
