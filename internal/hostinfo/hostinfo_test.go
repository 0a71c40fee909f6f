package hostinfo_test

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/msgbench/msgbench/internal/hostinfo"
)

func TestCPUModel(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"x86", "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel\t\t: 1\nmodel name\t: AMD EPYC 7B13  64-Core Processor\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13  64-Core Processor\n",
			"AMD EPYC 7B13 64-Core Processor"},
		{"raspberry pi", "processor\t: 0\nBogoMIPS\t: 108.00\nCPU part\t: 0xd08\n\nHardware\t: BCM2835\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n", "Raspberry Pi 4 Model B Rev 1.4"},
		{"no model", "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n", runtime.GOARCH},
		{"empty", "", runtime.GOARCH},
	} {
		if got := hostinfo.CPUModel(tc.in); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestGet reads this machine: the kernel release is uname's, the CPU model /proc/cpuinfo's.
func TestGet(t *testing.T) {
	info := hostinfo.Get()
	release, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		t.Skip(err)
	}
	if want := "Linux " + strings.TrimSpace(string(release)); info.Kernel != want {
		t.Errorf("kernel %q, want %q", info.Kernel, want)
	}
	if info.CPUModel == "" {
		t.Error("no CPU model")
	}
	cpuinfo, _ := os.ReadFile("/proc/cpuinfo")
	if strings.Contains(string(cpuinfo), "model name") && !strings.Contains(strings.Join(strings.Fields(string(cpuinfo)), " "), info.CPUModel) {
		t.Errorf("CPU model %q is not in /proc/cpuinfo", info.CPUModel)
	}
	t.Logf("%+v", info)
}
