// Package fleetlimits works out, before a local run starts anything, the open files, ephemeral
// ports and memory its processes need (load generator, gateway, broker, link emulator), holds
// them against this machine's limits, and refuses a run that cannot fit with a message that names
// the limit, the numbers and how to fix it. The decisions are pure functions of a spec and a
// Machine; Read and Raise are the only parts that touch the system.
package fleetlimits

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"github.com/msgbench/msgbench/loadgen/drivers"
)

// Machine is what limits a local run on this machine.
type Machine struct {
	// NoFileSoft and NoFileHard are RLIMIT_NOFILE: the soft limit is what a process may open,
	// the hard limit what it may raise the soft one to without CAP_SYS_RESOURCE.
	NoFileSoft, NoFileHard int
	// PortRange is the number of ephemeral ports (net.ipv4.ip_local_port_range).
	PortRange int
	// MemAvailable is /proc/meminfo's MemAvailable in bytes (0: unknown, not checked).
	MemAvailable int64
}

// Read reads this machine's limits.
func Read() (Machine, error) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return Machine{}, fmt.Errorf("getrlimit RLIMIT_NOFILE: %w", err)
	}
	m := Machine{NoFileSoft: clampInt(r.Cur), NoFileHard: clampInt(r.Max), PortRange: drivers.PortRange()}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		m.MemAvailable = memAvailable(b)
	}
	return m, nil
}

// Raise sets the soft RLIMIT_NOFILE to the hard one with setrlimit(2), which any process may do.
// Go raises its own soft limit at start already, but restores the original one (often 1024) in
// every child it starts unless the program called Setrlimit itself: without Raise, the broker
// msgbench starts would get 1,024 files however high the hard limit is. It returns the limit
// now in force.
func Raise() (int, error) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, fmt.Errorf("getrlimit RLIMIT_NOFILE: %w", err)
	}
	r.Cur = r.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, fmt.Errorf("setrlimit RLIMIT_NOFILE to the hard limit %d: %w", r.Max, err)
	}
	return clampInt(r.Cur), nil
}

func clampInt(v uint64) int {
	if v > 1<<40 { // RLIM_INFINITY
		return 1 << 40
	}
	return int(v)
}

// memAvailable parses MemAvailable (kB) out of /proc/meminfo.
func memAvailable(meminfo []byte) int64 {
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) >= 2 && string(f[0]) == "MemAvailable:" {
			kb, err := strconv.ParseInt(string(f[1]), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
