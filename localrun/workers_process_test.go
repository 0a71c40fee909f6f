package localrun

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/internal/testbin"
	"github.com/msgbench/msgbench/netem/emulator"
	"github.com/msgbench/msgbench/results"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Remove()
	os.Exit(code)
}

func processBenchmark(t *testing.T, replicas int, workload string) *v1alpha1.MessagingBenchmark {
	t.Helper()
	if _, err := mosquitto.Binary(); err != nil {
		t.Skip(err)
	}
	mb, err := manifest.Parse([]byte(fmt.Sprintf(`
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: processes}
spec:
  protocol: mqtt
  qos: 1
  timeout: 1m
  workers: {replicas: %d}
  workload: %s
`, replicas, workload)))
	if err != nil {
		t.Fatal(err)
	}
	return mb
}

var pidsLine = regexp.MustCompile(`workers: (\d+) processes, pids ([\d ]+)`)

// workerLog collects a run's log and the worker PIDs it names, checking each is a live
// `msgbench loadgen` process when named.
type workerLog struct {
	t    *testing.T
	mu   sync.Mutex
	text strings.Builder
	pids []int
	// live: every worker process should be running when named (not so when one fails at once)
	live bool
}

func newWorkerLog(t *testing.T) *workerLog { return &workerLog{t: t, live: true} }

func (l *workerLog) logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.text.WriteString(line + "\n")
	m := pidsLine.FindStringSubmatch(line)
	if m == nil {
		return
	}
	for _, f := range strings.Fields(m[2]) {
		pid, _ := strconv.Atoi(f)
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if l.live && (err != nil || !strings.Contains(string(cmdline), "loadgen\x00")) {
			l.t.Errorf("pid %d is not a msgbench loadgen process: %q %v", pid, cmdline, err)
		}
		l.pids = append(l.pids, pid)
	}
}

func (l *workerLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.text.String()
}

// assertGone fails for every PID that still names a process.
func assertGone(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			t.Errorf("worker pid %d is still there (%v): %q", pid, err, cmdline)
		}
	}
}

// TestWorkerProcessesCountExactly: workers.replicas 3 runs three distinct msgbench loadgen
// processes, and the merged counts are exact (every message sent once, received once by each
// subscriber) and equal to the same workload's in-process run.
func TestWorkerProcessesCountExactly(t *testing.T) {
	// Side by side with the other worker-process tests: each run has its own broker, ports and
	// processes. (Not the emulated link's: a test entering a network namespace runs alone.)
	t.Parallel()
	const workload = `{publishers: 6, subscribers: 6, topics: 3, payloadBytes: 64, messages: 600, warmup: 0s}`
	inProcess, err := Run(context.Background(), processBenchmark(t, 1, workload), Options{})
	if err != nil {
		t.Fatal(err)
	}
	log := newWorkerLog(t)
	res, err := Run(context.Background(), processBenchmark(t, 3, workload), Options{WorkerCommand: []string{testbin.Msgbench(t)}, Logf: log.logf})
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	if len(log.pids) != 3 || log.pids[0] == log.pids[1] || log.pids[1] == log.pids[2] || log.pids[0] == log.pids[2] {
		t.Fatalf("want 3 distinct worker pids, log:\n%s", log)
	}
	assertGone(t, log.pids)
	// 600 messages on 3 topics with 2 subscribers each: 1,200 deliveries.
	for _, r := range []*results.Result{inProcess, res} {
		if r.Phase != "Succeeded" || r.Sent != 600 || r.Received != 1200 || r.Expected != 1200 || r.Lost == nil || *r.Lost != 0 || r.Duplicates == nil || *r.Duplicates != 0 || r.Errors != 0 {
			t.Errorf("%s: phase %s, sent %d, received %d of %d, lost %v, duplicates %v, errors %d: %s",
				r.Environment.Mode, r.Phase, r.Sent, r.Received, r.Expected, r.Lost, r.Duplicates, r.Errors, r.Message)
		}
	}
	if len(res.Workers) != 3 || res.Workers[2].Index != 2 || res.Workers[0].Sent+res.Workers[1].Sent+res.Workers[2].Sent != 600 {
		t.Errorf("workers %+v: want 3 sharing the 600 messages", res.Workers)
	}
	// Collected as the operator collects: each start on msgbench's clock, bounded by a round trip.
	if res.WorkersStart == nil || res.WorkersStart.Workers != 3 || res.Workers[1].ControlRTTMicros <= 0 {
		t.Errorf("workersStart %+v, workers %+v: want the start spread of 3 with control round trips", res.WorkersStart, res.Workers)
	}
	if res.Environment.Mode != "local" || res.Environment.Broker != inProcess.Environment.Broker || res.Resources.BrokerCPUSeconds == nil {
		t.Errorf("environment %+v, broker CPU %v: want the local run's, with the broker measured", res.Environment, res.Resources.BrokerCPUSeconds)
	}
}

// TestWorkerProcessesStopOnCancel: cancelling a run (Ctrl-C, SIGTERM, a closed terminal) while
// its worker processes measure leaves none of them behind.
func TestWorkerProcessesStopOnCancel(t *testing.T) {
	// Side by side with the other worker-process tests: each run has its own broker, ports and
	// processes. (Not the emulated link's: a test entering a network namespace runs alone.)
	t.Parallel()
	mb := processBenchmark(t, 3, `{publishers: 3, subscribers: 3, topics: 3, payloadBytes: 64, rate: 30, duration: 30s, warmup: 0s}`)
	log := newWorkerLog(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	measuring := make(chan struct{})
	var once sync.Once
	o := Options{WorkerCommand: []string{testbin.Msgbench(t)}, Logf: log.logf, Progress: func(p Progress) {
		if p.Received > 0 {
			once.Do(func() { close(measuring) })
		}
	}}
	go func() {
		select {
		case <-measuring:
		case <-time.After(20 * time.Second):
		}
		cancel()
	}()
	began := time.Now()
	_, err := Run(ctx, mb, o)
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want the cancellation\n%s", err, log)
	}
	select {
	case <-measuring:
	default:
		t.Fatalf("the workers never received anything\n%s", log)
	}
	if d := time.Since(began); d > 15*time.Second {
		t.Errorf("the cancelled run took %s", d)
	}
	if len(log.pids) != 3 {
		t.Fatalf("pids %v\n%s", log.pids, log)
	}
	assertGone(t, log.pids)
}

// TestFailingWorkerProcessFailsTheRun: a worker process that dies before it is ready fails the
// run with its index, PID and last output; the others are stopped.
func TestFailingWorkerProcessFailsTheRun(t *testing.T) {
	// Side by side with the other worker-process tests: each run has its own broker, ports and
	// processes. (Not the emulated link's: a test entering a network namespace runs alone.)
	t.Parallel()
	mb := processBenchmark(t, 3, `{publishers: 3, subscribers: 3, topics: 3, payloadBytes: 64, rate: 30, duration: 10s, warmup: 0s}`)
	// Worker 1 fails as a broken build or a refused flag would; the others are msgbench.
	script := `case " $* " in *" --worker-index 1 "*) echo "injected: worker 1 cannot start" >&2; exit 3;; esac; exec "$@"`
	log := newWorkerLog(t)
	log.live = false
	_, err := Run(context.Background(), mb, Options{WorkerCommand: []string{"/bin/sh", "-c", script, "sh", testbin.Msgbench(t)}, Logf: log.logf})
	if err == nil || !strings.Contains(err.Error(), "worker 1 (pid ") || !strings.Contains(err.Error(), "injected: worker 1 cannot start") ||
		!strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("err %v: want worker 1 named with its exit and output\n%s", err, log)
	}
	assertGone(t, log.pids)
}

// TestEndedRunLeavesNoWorkerProcess: `msgbench run` ended by SIGTERM (as Ctrl-C or a closed
// terminal) has stopped its worker processes when it exits; killed with SIGKILL, which it cannot
// handle, it takes them with it (their parent-death signal).
func TestEndedRunLeavesNoWorkerProcess(t *testing.T) {
	// Side by side with the other worker-process tests: each run has its own broker, ports and
	// processes. (Not the emulated link's: a test entering a network namespace runs alone.)
	t.Parallel()
	if _, err := mosquitto.Binary(); err != nil {
		t.Skip(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(testbin.Msgbench(t), "run", "-q", "-f", "../config/samples/mqtt-qos1.yaml", "--out", t.TempDir(),
				"--set", "workers.replicas=2", "--set", "workload.duration=30s", "--set", "workload.rate=20")
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
			var pids []int
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				if m := pidsLine.FindStringSubmatch(sc.Text()); m != nil {
					for _, f := range strings.Fields(m[2]) {
						pid, _ := strconv.Atoi(f)
						pids = append(pids, pid)
					}
					break
				}
			}
			if len(pids) != 2 {
				t.Fatalf("no worker pids in msgbench run's output")
			}
			go func() { _, _ = bufio.NewReader(stderr).WriteTo(discard{}) }() // until msgbench exits
			time.Sleep(500 * time.Millisecond)                                // connected, maybe started
			_ = cmd.Process.Signal(sig)
			if err := cmd.Wait(); err == nil {
				t.Errorf("msgbench run ended by %s exited 0", sig)
			}
			if sig == syscall.SIGKILL { // the kernel signals the workers as msgbench dies; they go soon after
				deadline := time.Now().Add(5 * time.Second)
				for _, pid := range pids {
					for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
						time.Sleep(20 * time.Millisecond)
					}
				}
			}
			assertGone(t, pids)
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestWorkerProcessesOnTheEmulatedLink: over spec.network the worker processes run in the
// device network namespace, so their clients' packets cross the emulated link (counted by it),
// and the counts stay exact.
func TestWorkerProcessesOnTheEmulatedLink(t *testing.T) {
	if err := emulator.CheckPrivileges(); err != nil {
		t.Skip(err)
	}
	mb := processBenchmark(t, 2, `{publishers: 2, subscribers: 2, topics: 2, payloadBytes: 64, messages: 100, warmup: 0s}`)
	mb.Spec.Network.Profile = "wifi" // 2 ms each way
	log := newWorkerLog(t)
	var nets []string
	o := Options{WorkerCommand: []string{testbin.Msgbench(t)}, Logf: func(f string, a ...any) {
		log.logf(f, a...)
		if m := pidsLine.FindStringSubmatch(fmt.Sprintf(f, a...)); m != nil {
			for _, p := range strings.Fields(m[2]) {
				ns, _ := os.Readlink("/proc/" + p + "/ns/net")
				nets = append(nets, ns)
			}
		}
	}}
	res, err := Run(context.Background(), mb, o)
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	// (Not /proc/self's: the thread group leader may be a thread that entered a namespace.)
	host, _ := os.Readlink("/proc/1/ns/net")
	if len(nets) != 2 || nets[0] == "" || nets[0] == host || nets[1] != nets[0] {
		t.Errorf("worker network namespaces %q, the machine's %q: want both in the device namespace", nets, host)
	}
	if res.Phase != "Succeeded" || res.Sent != 100 || res.Received != 100 || *res.Lost != 0 {
		t.Errorf("phase %s, sent %d, received %d, lost %d: %s", res.Phase, res.Sent, res.Received, *res.Lost, res.Message)
	}
	network, _ := res.Network.(map[string]any)
	packets, _ := network["packets"].(map[string]any)
	up, _ := packets["up"].(map[string]any)
	if n, _ := strconv.Atoi(fmt.Sprint(up["packets"])); n < 100 {
		t.Errorf("network %v: want the workers' 100 publishes counted by the link", network)
	}
	assertGone(t, log.pids)
}

// TestTailBuffer: a failing worker's message quotes the end of its output, whole lines, at most
// tailBytes, however much it wrote.
func TestTailBuffer(t *testing.T) {
	var b tailBuffer
	for i := range 1000 {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	got := b.tail()
	if len(got) > tailBytes || !strings.HasPrefix(got, "line ") || !strings.HasSuffix(got, "line 999") {
		t.Errorf("tail %d bytes %q…%q: want whole last lines ending with line 999", len(got), got[:min(20, len(got))], got[max(0, len(got)-20):])
	}
	var short tailBuffer
	fmt.Fprint(&short, "boom\n")
	if short.tail() != "boom" {
		t.Errorf("tail %q, want boom", short.tail())
	}
}
