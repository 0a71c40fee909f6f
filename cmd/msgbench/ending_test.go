package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/internal/testbin"
)

// TestEveryWayOfEndingLeavesNothingBehind runs the real msgbench binary against real Mosquitto
// and ends it mid-run in each way a user can — Ctrl-C, kill, closing the terminal, a closed pipe
// (`msgbench run … 2>&1 | head -1`), SIGKILL — then checks that no process it started, no
// temporary folder and no network namespace of it survives. Every process the run starts carries
// a token in its environment (inherited from msgbench), and TMPDIR is the test's own, so anything
// left is found and attributed exactly.
//
// MSGBENCH_TEST_BINARY=path runs another build instead of building this one (to show that an
// earlier msgbench fails it).
func TestEveryWayOfEndingLeavesNothingBehind(t *testing.T) {
	if _, err := mosquitto.Binary(); err != nil {
		t.Skip(err)
	}
	bin := os.Getenv("MSGBENCH_TEST_BINARY")
	if bin == "" {
		bin = testbin.Msgbench(t)
	}
	signal := func(sig syscall.Signal, group bool) func(t *testing.T, r *endingRun) {
		return func(t *testing.T, r *endingRun) {
			r.waitFor(t, " sent ") // the first progress line: the clients are connecting or running
			r.waitForBroker(t)
			time.Sleep(500 * time.Millisecond)
			pid := r.cmd.Process.Pid
			if group { // as a terminal does: to the foreground process group
				pid = -pid
			}
			if err := syscall.Kill(pid, sig); err != nil {
				t.Fatal(err)
			}
		}
	}
	closePipe := func(t *testing.T, r *endingRun) {
		r.waitFor(t, "running") // the first line, as head -1 reads it
		_ = r.out.Close()
		r.waitForBroker(t)
	}
	tests := []struct {
		name    string
		network bool
		// combined sends stderr into the stdout pipe (2>&1).
		combined bool
		// interrupted: the run must end non-zero saying so. killed: SIGKILL, no exit to check.
		interrupted, killed bool
		end                 func(t *testing.T, r *endingRun)
	}{
		{name: "SIGINT to the group (Ctrl-C)", end: signal(syscall.SIGINT, true), interrupted: true},
		{name: "SIGTERM", end: signal(syscall.SIGTERM, false), interrupted: true},
		{name: "SIGHUP to the group (terminal closed)", end: signal(syscall.SIGHUP, true), interrupted: true},
		{name: "SIGHUP with a network profile", network: true, end: signal(syscall.SIGHUP, true), interrupted: true},
		{name: "stdout closed (| head -1)", end: closePipe},
		{name: "stdout and stderr closed (2>&1 | head -1)", combined: true, end: closePipe},
		{name: "SIGKILL", end: signal(syscall.SIGKILL, false), killed: true},
		{name: "SIGKILL with a network profile", network: true, end: signal(syscall.SIGKILL, false), killed: true},
	}
	// Side by side (each run is its own process group, with its own token and TMPDIR, and
	// finds only what carries them): they mostly wait on msgbench.
	var subtests []subtest
	for _, tt := range tests {
		subtests = append(subtests, subtest{name: tt.name, f: func(t *testing.T) {
			if tt.network {
				needRoot(t)
			}
			// Signals come mid-run; a closed pipe lets the run go on to its end.
			duration := "20s"
			if !tt.interrupted && !tt.killed {
				duration = "2s"
			}
			r := startEndingRun(t, bin, tt.network, tt.combined, duration)
			tt.end(t, r)
			err := r.wait(t, 30*time.Second)
			state := r.cmd.ProcessState
			switch {
			case tt.killed:
			case state.Sys().(syscall.WaitStatus).Signaled():
				t.Errorf("msgbench died by %v instead of ending by itself", state.Sys().(syscall.WaitStatus).Signal())
			case tt.interrupted && (err == nil || !strings.Contains(r.log(), "interrupted")):
				t.Errorf("exit %v, want non-zero and a message saying the run was interrupted; stderr:\n%s", err, r.log())
			}
			r.checkNothingLeft(t)
		}})
	}
	runSubtests(t, 4, subtests)
}

// endingRun is one `msgbench run` of TestEveryWayOfEndingLeavesNothingBehind.
type endingRun struct {
	cmd    *exec.Cmd
	token  string
	tmp    string
	out    *os.File // the reading end of the pipe stdout (and maybe stderr) writes to
	errOut *os.File // the reading end of stderr's pipe, unless combined

	mu    sync.Mutex
	lines bytes.Buffer
	seen  chan struct{} // a new line arrived
	eof   chan struct{} // closed when the log's pipe has no writer left
	// namespaces are the network namespaces of the run (msgbench's descriptors of them and
	// Mosquitto's own), other than the test's.
	namespaces map[string]bool
}

func startEndingRun(t *testing.T, bin string, network, combined bool, duration string) *endingRun {
	r := &endingRun{token: strconv.FormatInt(time.Now().UnixNano(), 36), tmp: t.TempDir(), seen: make(chan struct{}, 1), eof: make(chan struct{})}
	args := []string{"run", "-f", repo("config", "samples", "mqtt-qos1.yaml"), "--out", t.TempDir(),
		"--set", "workload.warmup=1s", "--set", "workload.duration=" + duration, "--set", "workload.rate=200",
		"--set", "workload.publishers=2", "--set", "workload.subscribers=2", "--set", "workload.topics=2"}
	if network {
		args = append(args, "--set", "network.profile=lte")
	}
	r.cmd = exec.Command(bin, args...)
	r.cmd.Env = append(os.Environ(), "TMPDIR="+r.tmp, "MSGBENCH_ENDING_TEST_TOKEN="+r.token)
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a process group, as a terminal's job
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.out = outR
	r.cmd.Stdout = outW
	var logR *os.File
	if combined {
		r.cmd.Stderr, logR = outW, outR
	} else {
		errR, errW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.cmd.Stderr, r.errOut, logR = errW, errR, errR
		defer errW.Close()
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = outW.Close()
	t.Cleanup(func() {
		_ = r.out.Close()
		if r.errOut != nil {
			_ = r.errOut.Close()
		}
		if r.cmd.ProcessState == nil {
			_ = r.cmd.Process.Kill()
			_ = r.cmd.Wait()
		}
		// Whatever failed the test is not left for the next one.
		for _, pid := range r.processes() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	go func() {
		defer close(r.eof)
		sc := bufio.NewScanner(logR)
		for sc.Scan() {
			r.mu.Lock()
			r.lines.WriteString(sc.Text() + "\n")
			r.mu.Unlock()
			select {
			case r.seen <- struct{}{}:
			default:
			}
		}
	}()
	return r
}

func (r *endingRun) log() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lines.String()
}

// waitFor waits until msgbench has logged a line containing s.
func (r *endingRun) waitFor(t *testing.T, s string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for !strings.Contains(r.log(), s) {
		select {
		case <-r.seen:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("msgbench did not log %q within 20s:\n%s", s, r.log())
		}
	}
}

// waitForBroker waits until this run's Mosquitto runs (else the test proves nothing) and notes
// the run's network namespaces.
func (r *endingRun) waitForBroker(t *testing.T) {
	t.Helper()
	self, _ := os.Readlink("/proc/self/ns/net")
	r.namespaces = map[string]bool{}
	note := func(link string) {
		if strings.HasPrefix(link, "net:[") && link != self {
			r.namespaces[link] = true
		}
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		broker := 0
		for _, pid := range r.processes() {
			dir := "/proc/" + strconv.Itoa(pid)
			if exe, _ := os.Readlink(dir + "/exe"); strings.HasSuffix(exe, "/mosquitto") {
				broker = pid
				ns, _ := os.Readlink(dir + "/ns/net")
				note(ns)
			}
		}
		if broker != 0 {
			fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", r.cmd.Process.Pid))
			for _, fd := range fds {
				link, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", r.cmd.Process.Pid, fd.Name()))
				note(link)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Mosquitto of this run appeared within 20s:\n%s", r.log())
		}
	}
}

func (r *endingRun) wait(t *testing.T, timeout time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- r.cmd.Wait() }()
	select {
	case err := <-done:
		// msgbench's last lines may still be in the pipe when it has exited: read them before the
		// caller looks (a process it left holding the pipe is checkNothingLeft's to find).
		select {
		case <-r.eof:
		case <-time.After(5 * time.Second):
		}
		return err
	case <-time.After(timeout):
		_ = r.cmd.Process.Kill()
		<-done //nolint:errcheck // killed: the error is the kill
		t.Fatalf("msgbench did not end within %s of being ended:\n%s", timeout, r.log())
		return nil
	}
}

// processes lists the live (not zombie) processes carrying this run's token: msgbench and
// everything it started, whoever their parent is now.
func (r *endingRun) processes() []int {
	want := []byte("\x00MSGBENCH_ENDING_TEST_TOKEN=" + r.token + "\x00")
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(append([]byte{0}, env...), want) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && !bytes.Contains(stat, []byte(") Z ")) {
			out = append(out, pid)
		}
	}
	return out
}

// checkNothingLeft waits up to 5 s (the guardian's cleanup after SIGKILL is asynchronous) for
// every process of the run, its temporary folders and its network namespace to be gone.
func (r *endingRun) checkNothingLeft(t *testing.T) {
	t.Helper()
	var procs, files, holders []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		procs, files, holders = nil, nil, nil
		for _, pid := range r.processes() {
			cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
			procs = append(procs, strconv.Itoa(pid)+" "+strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " ")))
		}
		entries, _ := os.ReadDir(r.tmp)
		for _, e := range entries {
			files = append(files, e.Name())
		}
		for ns := range r.namespaces {
			holders = append(holders, namespaceHolders(ns)...)
		}
		if len(procs)+len(files)+len(holders) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(procs) > 0 {
		t.Errorf("processes of the run still alive: %s", strings.Join(procs, "; "))
	}
	if len(files) > 0 {
		t.Errorf("left in its TMPDIR: %s", strings.Join(files, ", "))
	}
	if len(holders) > 0 {
		t.Errorf("network namespaces of the run still held: %s", strings.Join(holders, ", "))
	}
	if t.Failed() {
		t.Logf("msgbench's output:\n%s", r.log())
	}
}

// namespaceHolders lists what keeps network namespace ns (e.g. "net:[4026532843]") alive: a
// process inside it, or a descriptor of it. (msgbench's namespaces have no name under
// /run/netns: with neither, the kernel has freed it.)
func namespaceHolders(ns string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		if link, _ := os.Readlink(filepath.Join(dir, "ns", "net")); link == ns {
			out = append(out, ns+" by pid "+e.Name()+" inside it")
		}
		fds, _ := os.ReadDir(filepath.Join(dir, "fd"))
		for _, fd := range fds {
			if link, _ := os.Readlink(filepath.Join(dir, "fd", fd.Name())); link == ns {
				out = append(out, ns+" by pid "+e.Name()+" fd "+fd.Name())
			}
		}
	}
	sort.Strings(out)
	return out
}
