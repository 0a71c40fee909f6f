package proc

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// childEnv makes the test binary the child of TestLightProcessCPU.
const childEnv = "MSGBENCH_PROC_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		lightChild()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// lightChild prints its getrusage CPU in ns, and on each line of stdin burns about 3 ms of CPU
// in a thread that then exits, and prints it again; it idles otherwise, and ends with stdin.
func lightChild() {
	runtime.LockOSThread() // main keeps the main thread: the burning goroutine gets a thread of its own, which exits with it
	report := func() { fmt.Println(Self().CPU.Nanoseconds()) }
	report()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread() // never unlocked: the thread exits when this goroutine returns
			defer close(done)
			var ts unix.Timespec
			for {
				if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil || ts.Nano() >= 3e6 {
					return
				}
			}
		}()
		<-done
		time.Sleep(20 * time.Millisecond) // the thread is gone by then
		report()
	}
}

// A process that uses about 3 ms of CPU, in a thread that has exited since, then idles: Of
// counts those 3 ms to within a fraction of a millisecond of the process's own getrusage, at
// 1 ns resolution. /proc/PID/stat's ticks (what Of read before) say 0 or 10 ms, and summing
// the live threads' /proc/PID/task/*/schedstat misses the thread that exited.
func TestLightProcessCPU(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stdin.Close(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	lines := bufio.NewScanner(stdout)
	rusage := func() time.Duration {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("child: %v", lines.Err())
		}
		ns, err := strconv.ParseInt(lines.Text(), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return time.Duration(ns)
	}
	read := func() (clock, ticks Usage, sched time.Duration) {
		t.Helper()
		var err1, err2 error
		clock, err1 = Of(pid)
		ticks, err2 = TicksOf(pid)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		return clock, ticks, liveThreadsSchedstat(pid)
	}

	r0 := rusage()
	c0, k0, s0 := read()
	if _, err := stdin.Write([]byte("burn\n")); err != nil {
		t.Fatal(err)
	}
	r1 := rusage()
	c1, k1, s1 := read()

	own, got, ticks, sched := r1-r0, c1.CPU-c0.CPU, k1.CPU-k0.CPU, s1-s0
	t.Logf("3 ms burnt in a thread that exited: getrusage %v, process clock %v, /proc/PID/stat ticks %v, live threads' schedstat %v", own, got, ticks, sched)
	if own < 2900*time.Microsecond || own > 10*time.Millisecond {
		t.Fatalf("the child's own count is %v, want about 3 ms", own)
	}
	if d := got - own; d < -500*time.Microsecond || d > 500*time.Microsecond {
		t.Errorf("Of counted %v, the process's own getrusage %v", got, own)
	}
	if c1.CPUResolution != ResolutionClock || k1.CPUResolution != ClockTick {
		t.Errorf("resolutions: Of %v, TicksOf %v", c1.CPUResolution, k1.CPUResolution)
	}
	if ticks%ClockTick != 0 {
		t.Errorf("ticks moved by %v, not a multiple of %v", ticks, ClockTick)
	}
	if s0 >= 0 && sched > own/2 {
		t.Errorf("the live threads' schedstat kept %v of the exited thread's %v: the test did not end the thread", sched, own)
	}
}

// liveThreadsSchedstat sums the first field of /proc/PID/task/*/schedstat (-1 where it is
// missing or zero, a kernel without schedstats).
func liveThreadsSchedstat(pid int) time.Duration {
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var sum time.Duration
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		ns, _ := strconv.ParseInt(strings.Fields(string(data) + " 0")[0], 10, 64)
		sum += time.Duration(ns)
	}
	if sum == 0 {
		return -1
	}
	return sum
}

func TestSelfAndOwnResolution(t *testing.T) {
	if r := Self().CPUResolution; r != ResolutionRusage {
		t.Errorf("Self: %v", r)
	}
	u, err := Own()
	if err != nil || u.CPUResolution != ResolutionClock || u.CPU <= 0 {
		t.Errorf("Own: %+v, %v", u, err)
	}
	// The process clock and getrusage count the same CPU time.
	a, b := Self().CPU, u.CPU
	if d := a - b; d < -5*time.Millisecond || d > 50*time.Millisecond {
		t.Errorf("getrusage %v, process clock %v", a, b)
	}
	if _, err := Of(1 << 30); err == nil {
		t.Error("a PID that does not exist was read")
	}
}

func TestOthersResolution(t *testing.T) {
	u, err := Others()
	if err != nil {
		t.Skip(err) // nothing else visible
	}
	if u.CPUResolution != ResolutionClock && u.CPUResolution != ResolutionRusage {
		t.Errorf("Others: resolution %v (%+v)", u.CPUResolution, u)
	}
}

func TestCgroupParsing(t *testing.T) {
	for in, want := range map[string]string{
		"0::/kubepods.slice/kubepods-burstable.slice/cri-containerd-ab.scope\n": "/kubepods.slice/kubepods-burstable.slice/cri-containerd-ab.scope",
		"12:cpu,cpuacct:/docker/x\n1:name=systemd:/x\n0::/x/y\n":                "/x/y",
		"0::/\n":                           "",
		"0::/../cri-containerd-cd.scope\n": "", // a sibling outside this cgroup namespace
		"4:memory:/a\n":                    "", // cgroup v1 only
	} {
		if got, ok := parseCgroup(in); got != want || ok != (want != "") {
			t.Errorf("%q: %q %v, want %q", in, got, ok, want)
		}
	}
	if d, err := parseCPUStat("usage_usec 1234567\nuser_usec 1000000\nsystem_usec 234567\n"); err != nil || d != 1234567*time.Microsecond {
		t.Errorf("cpu.stat: %v %v", d, err)
	}
	if _, err := parseCPUStat("nr_periods 0\n"); err == nil {
		t.Error("cpu.stat without usage_usec parsed")
	}
	for _, c := range []struct {
		cg, own string
		apart   bool
	}{{"/pod/broker", "/pod/usage", true}, {"/pod/usage", "/pod/usage", false}, {"/pod", "/pod/usage", false}, {"/pod/b", "", true}} {
		if got := cgroupApart(c.cg, c.own); got != c.apart {
			t.Errorf("cgroupApart(%q, %q) = %v", c.cg, c.own, got)
		}
	}
}

func TestCgroupCPU(t *testing.T) {
	defer func(r string) { cgroupRoot = r }(cgroupRoot)
	cgroupRoot = t.TempDir()
	if err := os.MkdirAll(filepath.Join(cgroupRoot, "pod", "broker"), 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(cgroupRoot, "pod", "broker", "cpu.stat"), []byte("usage_usec 3100\n"), 0o644)
	if _, err := cgroupCPU("/pod/broker"); err == nil {
		t.Error("read without cgroup.controllers at the root (not a cgroup v2 mount)")
	}
	_ = os.WriteFile(filepath.Join(cgroupRoot, "cgroup.controllers"), []byte("cpu memory\n"), 0o644)
	if d, err := cgroupCPU("/pod/broker"); err != nil || d != 3100*time.Microsecond {
		t.Errorf("%v %v", d, err)
	}
}

// A sidecar says the resolution of its figure; one from before it did read 10 ms ticks.
func TestFetchCarriesResolution(t *testing.T) {
	for body, want := range map[string]Usage{
		`{"cpuSeconds":0.0031,"cpuResolutionSeconds":1e-9,"peakRSSBytes":5,"rssBytes":4}`: {CPU: 3100 * time.Microsecond, CPUResolution: time.Nanosecond, PeakRSS: 5, RSS: 4},
		`{"cpuSeconds":0.02,"peakRSSBytes":5,"rssBytes":4}`:                               {CPU: 20 * time.Millisecond, CPUResolution: ClockTick, PeakRSS: 5, RSS: 4},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(body)) }))
		got, err := Fetch(srv.URL, 5*time.Second)()
		srv.Close()
		if err != nil || got != want {
			t.Errorf("%s: %+v %v, want %+v", body, got, err, want)
		}
	}
}
