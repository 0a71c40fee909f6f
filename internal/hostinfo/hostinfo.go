// Package hostinfo describes the machine a process runs on, for the result's environment: the
// CPU model and the kernel.
package hostinfo

import (
	"os"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Info is the machine.
type Info struct {
	// CPUModel is the processor's name from /proc/cpuinfo ("AMD EPYC 7B13"), or the
	// architecture when the kernel names none.
	CPUModel string
	// Kernel is the operating system and kernel release ("Linux 6.8.0-45-generic").
	Kernel string
}

var (
	once   sync.Once
	cached Info
)

// Get returns the machine's Info (read once).
func Get() Info {
	once.Do(func() {
		data, _ := os.ReadFile("/proc/cpuinfo")
		cached.CPUModel = CPUModel(string(data))
		cached.Kernel = kernel()
	})
	return cached
}

// CPUModel finds the processor's name in the text of /proc/cpuinfo: "model name" on x86,
// "Model", "Hardware" or "cpu model" elsewhere; the architecture (runtime.GOARCH) when none is
// there (arm64 kernels often name no model).
func CPUModel(cpuinfo string) string {
	found := map[string]string{}
	for line := range strings.Lines(cpuinfo) {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.Join(strings.Fields(v), " ")
		if _, seen := found[k]; !seen && v != "" {
			found[k] = v
		}
	}
	for _, k := range []string{"model name", "Model", "Hardware", "cpu model"} {
		if v := found[k]; v != "" {
			return v
		}
	}
	return runtime.GOARCH
}

func kernel() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return runtime.GOOS
	}
	return unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
}
