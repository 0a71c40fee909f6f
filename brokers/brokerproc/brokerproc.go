// Package brokerproc is the lifecycle the local brokers (brokers/mosquitto, brokers/kafka)
// share: a working folder msgbench's guardian removes if msgbench dies first, a child process
// started with a parent-death signal, its bounded log, its CPU and memory, and a stop by PID that
// escalates to SIGKILL after a grace period. A broker package embeds *Process and adds only what
// is its own: configuration, listeners, readiness.
package brokerproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/msgbench/msgbench/internal/guardian"
	"github.com/msgbench/msgbench/internal/proc"
	"github.com/msgbench/msgbench/internal/spawn"
)

// Process is one broker process and its folder.
type Process struct {
	// Dir holds the broker's configuration, certificates and data.
	Dir string

	name   string
	grace  time.Duration
	ownDir string // Dir when this package made it (and removes it)
	cmd    *exec.Cmd
	log    logBuffer
	exited chan struct{}
}

// New prepares a broker named name (for messages): dir is its folder, or "" for a new temporary
// folder msgbench-<name>-* registered with the guardian. Stop waits grace after SIGINT before
// SIGKILL.
func New(name, dir string, grace time.Duration) (*Process, error) {
	p := &Process{Dir: dir, name: name, grace: grace, exited: make(chan struct{})}
	if dir == "" {
		d, err := guardian.MkdirTemp("", "msgbench-"+name+"-")
		if err != nil {
			return nil, err
		}
		p.Dir, p.ownDir = d, d
	}
	return p, nil
}

// Start runs cmd as the broker, its output into Log. start starts it (for example inside a
// network namespace); nil is spawn.Start. Either way the broker must get a parent-death signal,
// so it dies with msgbench however msgbench dies.
func (p *Process) Start(cmd *exec.Cmd, start func(*exec.Cmd) error) error {
	p.cmd = cmd
	cmd.Stdout, cmd.Stderr = &p.log, &p.log
	// A grandchild holding the output pipe must not keep Wait (and Stop) waiting.
	cmd.WaitDelay = p.grace
	if start == nil {
		start = spawn.Start
	}
	if err := start(cmd); err != nil {
		p.cmd = nil
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	go func() {
		_ = cmd.Wait()
		spawn.Forget(cmd)
		close(p.exited)
	}()
	return nil
}

// PID is the broker's process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited is closed when the broker process has ended.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Log is what the broker wrote so far (its first MiB).
func (p *Process) Log() string { return p.log.String() }

// Usage returns the broker's CPU time and peak RSS so far.
func (p *Process) Usage() (proc.Usage, error) { return proc.Of(p.PID()) }

// Stop ends the broker by PID — SIGINT (a controlled shutdown), SIGKILL after the grace
// period — and removes its folder when this package made it. Stop on a broker that never
// started only removes the folder.
func (p *Process) Stop() error {
	var err error
	if p.cmd != nil {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Signal(os.Interrupt)
			select {
			case <-p.exited:
			case <-time.After(p.grace):
				_ = p.cmd.Process.Kill()
				<-p.exited
				err = fmt.Errorf("%s did not stop within %s of SIGINT; killed", p.name, p.grace)
			}
		}
	}
	if p.ownDir != "" {
		_ = guardian.RemoveAll(p.ownDir)
	}
	return err
}

// ErrExited is wrapped by WaitReady's error when the broker ended before it was ready.
var ErrExited = errors.New("exited at start")

// WaitReady calls ready until it returns nil, every interval, for at most timeout: the broker's
// own readiness check. It fails at once when the broker exits or ctx ends, with the broker's log.
func (p *Process) WaitReady(ctx context.Context, timeout, interval time.Duration, what string, ready func(ctx context.Context) error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := ready(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s %w: %s", p.name, ErrExited, bytes.TrimSpace([]byte(p.Log())))
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not %s within %s (last error: %w): %s", p.name, what, timeout, err, bytes.TrimSpace([]byte(p.Log())))
		}
		select {
		case <-p.exited:
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
}

// FreePorts reserves n distinct free ports on host at once (held open together, so they
// differ); listen opens them in the broker's network namespace (nil: the net package).
func FreePorts(listen func(ctx context.Context, network, address string) (net.Listener, error), host string, n int) ([]int, error) {
	if listen == nil {
		var lc net.ListenConfig
		listen = lc.Listen
	}
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	var out []int
	for range n {
		l, err := listen(context.Background(), "tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

// logBuffer keeps the first MiB of a broker's output.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 1<<20 {
		return len(p), nil
	}
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
