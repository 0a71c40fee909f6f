package fleetlimits

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func childLimit(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("sh", "-c", "ulimit -n").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// A Go program started with a soft limit of 1,024 runs with the hard limit itself, but its
// children get 1,024 back, until Raise: then they get the hard limit. The helper runs in a
// process of its own, started by a shell that lowered the soft limit.
func TestRaiseReachesChildren(t *testing.T) {
	if os.Getenv("FLEETLIMITS_HELPER") == "1" {
		before := childLimit(t)
		if _, err := Raise(); err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString("child-before=" + before + " child-after=" + childLimit(t) + "\n")
		return
	}
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		t.Fatal(err)
	}
	if r.Max <= 1024 || r.Max > 1<<30 {
		t.Skipf("hard limit %d: nothing to raise", r.Max)
	}
	cmd := exec.Command("sh", "-c", `ulimit -Sn 1024 && exec "$0" -test.run='^TestRaiseReachesChildren$' -test.count=1`, os.Args[0])
	cmd.Env = append(os.Environ(), "FLEETLIMITS_HELPER=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := "child-before=1024 child-after=" + strconv.FormatUint(r.Max, 10)
	if !strings.Contains(string(out), want) {
		t.Errorf("want %q in:\n%s", want, out)
	}
}

func TestRead(t *testing.T) {
	m, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	if m.NoFileSoft <= 0 || m.NoFileHard < m.NoFileSoft || m.PortRange <= 0 || m.MemAvailable <= 0 {
		t.Errorf("Read = %+v", m)
	}
}
