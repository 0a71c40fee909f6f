package localrun

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msgbench/msgbench/internal/guardian"
	"github.com/msgbench/msgbench/internal/proc"
	"github.com/msgbench/msgbench/internal/spawn"
	"github.com/msgbench/msgbench/loadgen"
	"github.com/msgbench/msgbench/loadgen/control"
	"github.com/msgbench/msgbench/plan"
	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/results/complete"
)

// workerProc is one worker process of a local run: `msgbench loadgen --control-fd 3`, driven
// through the control protocol like a worker pod.
type workerProc struct {
	index    int
	cmd      *exec.Cmd
	addr     string // its control address (the listener msgbench opened and handed down)
	out      *tailBuffer
	exited   chan struct{} // closed once it exited and was waited for
	exitErr  error         // why it exited, once exited is closed
	progress atomic.Pointer[control.Progress]
}

func (w *workerProc) pid() int { return w.cmd.Process.Pid }

// failed names the worker, its PID and what it wrote last.
func (w *workerProc) failed(format string, args ...any) error {
	// fmt.Errorf keeps a %w'd error (a cancellation stays one).
	err := fmt.Errorf("worker %d (pid %d) "+format, append([]any{w.index, w.pid()}, args...)...)
	if tail := w.out.tail(); tail != "" {
		return fmt.Errorf("%w; its output ends:\n%s", err, tail)
	}
	return err
}

// explain is err of a request to the worker, or, when the worker has exited (its control socket
// then refuses), why it exited.
func (w *workerProc) explain(err error) error {
	select {
	case <-w.exited:
		return w.failed("exited: %v", w.exitErr)
	case <-time.After(time.Second):
		return w.failed("%w", err)
	}
}

// runWorkerProcesses runs spec.workers.replicas workers as processes, as the operator runs
// pods: each is connected (/connect), awaited until ready, started at one time (/start),
// followed (/status) until done, and its result collected (/result) before it exits (/exit);
// the results merge exactly like the operator merges them. Any worker that fails or exits ends
// the run naming it; every worker process is gone when the run's teardown is over.
func (r *runner) runWorkerProcesses(ctx context.Context) (*results.Result, error) {
	n := r.plan.Workers
	c := &control.Client{Token: randomHex(16), HTTP: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{}}}
	r.onTeardown(c.HTTP.CloseIdleConnections)
	ws, err := r.startWorkerProcesses(n, c.Token)
	if err != nil {
		return nil, err
	}
	if r.usage != nil {
		r.register(proc.NewCollector(r.usage, loadgen.LabelsOf(r.plan, 0).Component("broker")), true)
	}
	pids := make([]string, n)
	for i, w := range ws {
		pids[i] = strconv.Itoa(w.pid())
	}
	metrics := newWorkerMetrics(c, ws) // each worker's, its process's CPU and memory included
	if r.o.Metrics != nil {
		if err := registerWorkerMetrics(r.o.Metrics, fmt.Sprint(loadgen.LabelsOf(r.plan, 0)), metrics); err != nil {
			r.logf("metrics: %v", err)
		}
	}
	r.logf("workers: %d processes, pids %s", n, strings.Join(pids, " "))
	stopProgress := r.progress(ctx, func() []loadgen.Snapshot { return processSnapshots(ws) })
	defer stopProgress()

	if err := eachWorker(ws, func(w *workerProc) error { return c.Connect(ctx, w.addr) }); err != nil {
		return nil, err
	}
	if err := r.awaitWorkers(ctx, c, ws, "ready", func(st control.Status) bool {
		return st.State != control.StateConnecting && st.State != control.StateWaiting
	}); err != nil {
		return nil, err
	}
	// One start time for all, far enough ahead for every /start to arrive before it.
	at := time.Now().Add(100*time.Millisecond + time.Duration(n)*10*time.Millisecond)
	marks, stopTimeline := r.startTimeline(ctx, releasedGate(at))
	err = eachWorker(ws, func(w *workerProc) error {
		_, _, err := c.Start(ctx, w.addr, at, nil)
		return err
	})
	if err == nil {
		err = r.awaitWorkers(ctx, c, ws, "done", func(st control.Status) bool { return st.State == control.StateDone })
	}
	if err := errors.Join(err, stopTimeline()); err != nil {
		return nil, err
	}
	// Collected as the operator collects: the results, then each worker's clock offset in a pass
	// of its own.
	parts := make([]*results.Result, n)
	if err := eachWorker(ws, func(w *workerProc) (err error) {
		parts[w.index], err = c.Result(ctx, w.addr)
		return err
	}); err != nil {
		return nil, err
	}
	if err := eachWorker(ws, func(w *workerProc) error {
		offset, rtt, err := c.ClockOffset(ctx, w.addr)
		control.OnOurClock(parts[w.index], offset, rtt)
		return err
	}); err != nil {
		return nil, err
	}
	if r.o.Metrics != nil {
		metrics.refresh() // the final values, kept after the run
	}
	_ = eachWorker(ws, func(w *workerProc) error { return c.Exit(ctx, w.addr) })
	r.workerGrace = 5 * time.Second // then the teardown kills any that missed it
	// The workers know their clients' side; the run knows the rest. Resources: Merge sums the
	// processes' CPU and keeps the largest worker's peak memory.
	run := r.completion(*marks)
	run.Network = r.net.applied()
	run.Environment = func(e *results.Environment) {
		e.Mode, e.Host = r.env.Mode, r.env.Host
		e.Broker, e.Gateway = r.env.Broker, r.env.Gateway
	}
	return complete.Complete(parts, run)
}

// startWorkerProcesses starts n worker processes where the clients dial from, each serving the
// control protocol on a listener opened here (so that it is reachable from here whatever network
// namespace the worker runs in). The run's teardown kills those still running.
func (r *runner) startWorkerProcesses(n int, token string) ([]*workerProc, error) {
	argv, err := r.workerArgs()
	if err != nil {
		return nil, err
	}
	start := r.net.startClient
	if start == nil {
		start = spawn.Start
	}
	ws := make([]*workerProc, 0, n)
	r.onTeardown(func() { stopWorkerProcesses(ws, r.workerGrace) })
	for i := 0; i < n; i++ {
		w, err := startWorkerProcess(i, argv, token, start)
		if err != nil {
			return nil, fmt.Errorf("worker %d: %w", i, err)
		}
		ws = append(ws, w)
	}
	return ws, nil
}

// workerArgs is a worker process's command line but for its index: the compiled plan, as the
// operator hands it to its pods, the clients' address and TLS trust, the run's id (client ids unique per
// run) and the broker's PID (its CPU and memory in the result).
func (r *runner) workerArgs() ([]string, error) {
	cmd := r.o.WorkerCommand
	if len(cmd) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("spec.workers.replicas: the worker processes run this program, which cannot be found: %w", err)
		}
		cmd = []string{exe}
	}
	dir, err := guardian.MkdirTemp("", "msgbench-workers-")
	if err != nil {
		return nil, err
	}
	r.onTeardown(func() { _ = guardian.RemoveAll(dir) })
	// The plan this run compiled: every worker runs the same compilation.
	data, err := plan.Marshal(r.plan)
	if err != nil {
		return nil, err
	}
	planFile := filepath.Join(dir, plan.FileName)
	if err := os.WriteFile(planFile, data, 0o600); err != nil {
		return nil, err
	}
	argv := append(append([]string(nil), cmd...), "loadgen", "--plan", planFile, "--broker", r.address,
		"--control-fd", "3", "--run-id", r.runID, "--workers", strconv.Itoa(r.plan.Workers))
	if r.brokerPID > 0 {
		argv = append(argv, "--broker-pid", strconv.Itoa(r.brokerPID))
	}
	for _, g := range r.plan.Groups {
		if a, ok := r.endpoints[g.Name]; ok {
			argv = append(argv, "--endpoint", g.Name+"="+a)
		}
	}
	for g, f := range credentialFiles(r.plan, r.o) {
		argv = append(argv, "--credentials", g+"="+f)
	}
	if ca, serverName := r.workerTrust(); ca != nil {
		caFile := filepath.Join(dir, "ca.crt")
		if err := os.WriteFile(caFile, ca, 0o600); err != nil {
			return nil, err
		}
		argv = append(argv, "--ca", caFile, "--server-name", serverName)
	}
	cc, err := r.clientCerts.workerFlags(dir)
	if err != nil {
		return nil, err
	}
	argv = append(argv, cc...)
	return argv, nil
}

// workerTrust is the CA and server name the clients verify, as startBroker and startGateway
// chose them for in-process workers (nil: no TLS, or the system's roots).
func (r *runner) workerTrust() (ca []byte, serverName string) {
	switch g := &r.plan.Groups[0]; {
	case g.Gateway != "" && g.GatewayTLS && r.bundle != nil:
		return r.bundle.CACert, hostOf(r.address)
	case g.Gateway == "" && r.plan.Broker.TLS:
		return r.brokerCA, hostOf(r.broker)
	}
	return nil, ""
}

func startWorkerProcess(i int, argv []string, token string, start func(*exec.Cmd) error) (*workerProc, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("control listener: %w", err)
	}
	defer ln.Close() // the worker has its own copy
	lf, err := ln.(*net.TCPListener).File()
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	w := &workerProc{index: i, addr: ln.Addr().String(), out: &tailBuffer{}, exited: make(chan struct{})}
	args := append(append([]string(nil), argv[1:]...), "--worker-index", strconv.Itoa(i))
	w.cmd = exec.Command(argv[0], args...)
	w.cmd.Env = append(os.Environ(), "MSGBENCH_CONTROL_TOKEN="+token)
	w.cmd.ExtraFiles = []*os.File{lf} // fd 3
	w.cmd.Stdout, w.cmd.Stderr = w.out, w.out
	if err := start(w.cmd); err != nil {
		return nil, err
	}
	go func() {
		w.exitErr = w.cmd.Wait()
		spawn.Forget(w.cmd)
		close(w.exited)
	}()
	return w, nil
}

// stopWorkerProcesses kills the workers still running after grace (the time the ones told to
// exit have to do so) and waits until they are gone.
func stopWorkerProcesses(ws []*workerProc, grace time.Duration) {
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	for _, w := range ws {
		select {
		case <-w.exited:
		case <-deadline.C:
			for _, w := range ws { // each at once: none has time left
				_ = w.cmd.Process.Kill()
			}
			<-w.exited
		}
	}
}

// awaitWorkers polls every worker's /status until each satisfies reached; a worker that failed
// or exited, or a /status that fails, ends the wait with an error naming the worker. It keeps
// each worker's progress for the display.
func (r *runner) awaitWorkers(ctx context.Context, c *control.Client, ws []*workerProc, what string, reached func(control.Status) bool) error {
	pending := append([]*workerProc(nil), ws...)
	every := 100 * time.Millisecond // a quick start
	if what == "done" {
		every = 250 * time.Millisecond // the progress line's pace, light on a measuring machine
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		var still []*workerProc
		for _, w := range pending {
			select {
			case <-w.exited:
				return w.failed("exited before it was %s: %v", what, w.exitErr)
			default:
			}
			st, _, err := c.Status(ctx, w.addr)
			switch {
			case ctx.Err() != nil:
				return ctx.Err()
			case err != nil:
				return w.explain(err)
			case st.State == control.StateFailed:
				return w.failed("failed: %s", st.Error)
			}
			if st.Progress != nil {
				w.progress.Store(st.Progress)
			}
			if !reached(st) {
				still = append(still, w)
			}
		}
		if pending = still; len(pending) == 0 {
			return nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// eachWorker calls f for every worker at once and returns the first error in worker order.
func eachWorker(ws []*workerProc, f func(*workerProc) error) error {
	errs := make([]error, len(ws))
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(w); err != nil {
				errs[i] = w.explain(err)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// processSnapshots is the workers' progress as their last /status said it.
func processSnapshots(ws []*workerProc) []loadgen.Snapshot {
	out := make([]loadgen.Snapshot, 0, len(ws))
	for _, w := range ws {
		p := w.progress.Load()
		if p == nil {
			out = append(out, loadgen.Snapshot{Phase: loadgen.PhaseConnecting})
			continue
		}
		out = append(out, loadgen.Snapshot{Phase: p.Phase, Elapsed: time.Duration(p.ElapsedMillis) * time.Millisecond,
			Sent: p.Sent, Received: p.Received, Errors: p.Errors})
	}
	return out
}

// releasedGate is a start gate already open at at: the timeline plays from it.
func releasedGate(at time.Time) *startGate {
	g := newStartGate(0)
	g.at = at
	close(g.done)
	return g
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// tailBuffer keeps the last few KiB a worker wrote, for the message when it fails.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

const tailBytes = 2048

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*tailBytes {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailBytes:]...)
	}
	return len(p), nil
}

// tail is the last lines written, at most tailBytes.
func (t *tailBuffer) tail() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > tailBytes {
		b = b[len(b)-tailBytes:]
		if i := strings.IndexByte(string(b), '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return strings.TrimRight(string(b), "\n")
}
