// Package guardian cleans up after a msgbench that dies without doing so itself, for example
// when it is killed with SIGKILL.
//
// The kernel's parent-death signal (internal/spawn) ends msgbench's children with it, but a dead
// process removes no folders. So `msgbench run` starts a small guardian first: msgbench itself,
// re-executed with a hidden argument, in a session of its own (no terminal signal reaches it),
// reading a pipe whose only writer is msgbench. msgbench tells it, line by line, what it creates:
// child processes (PID and start time), temporary folders, network namespaces; and what it has
// cleaned up itself. When the pipe reaches end of file — msgbench closed it at the end of the run,
// or died in whatever way — the guardian kills the processes it still knows of (those whose start
// time still matches: a reused PID is left alone) and every process inside the namespaces it
// holds, waits for them to go, removes the folders it still knows of, and exits. It never touches
// anything it was not told about, and it never outlives msgbench by more than that cleanup.
//
// In a process without a guardian (tests, other commands), Track and the other calls do
// nothing.
package guardian

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Arg is the hidden argument that makes msgbench a guardian (`msgbench __guardian`): its main
// calls Main when it sees it, before anything else.
const Arg = "__guardian"

// Guardian is the guardian process of this msgbench.
type Guardian struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	w      *os.File // the pipe; nil once closed
	exited chan struct{}
}

var current atomic.Pointer[Guardian]

// Start starts the guardian (this executable with Arg) and makes it the one Track and the other
// calls tell. stderr receives what the guardian reports (it cleans up quietly when msgbench did
// so already). Close it at the end.
func Start(stderr io.Writer) (*Guardian, error) {
	r, w, err := os.Pipe() // close-on-exec: no other child inherits the writing end
	if err != nil {
		return nil, err
	}
	// /proc/self/exe is this very binary even if its file was replaced or removed meanwhile.
	cmd := exec.Command("/proc/self/exe", Arg)
	cmd.Args[0] = os.Args[0]
	ready, readyW, err := os.Pipe()
	if err != nil {
		_ = r.Close()
		_ = w.Close()
		return nil, err
	}
	defer ready.Close()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = r, readyW, stderr
	// A session of its own: closing the terminal, Ctrl-C or Ctrl-Z reach msgbench and its
	// children, not the one that must clean up after them.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	_ = r.Close()
	_ = readyW.Close()
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("start the guardian: %w", err)
	}
	g := &Guardian{cmd: cmd, w: w, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(g.exited) }()
	// It says when it ignores msgbench's signals and serves the pipe.
	_ = ready.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := ready.Read(make([]byte, 1)); err != nil {
		_ = w.Close()
		_ = cmd.Process.Kill()
		<-g.exited
		return nil, fmt.Errorf("start the guardian: it did not get ready: %w", err)
	}
	current.Store(g)
	return g, nil
}

// PID is the guardian's process id.
func (g *Guardian) PID() int { return g.cmd.Process.Pid }

// Close closes the pipe, which makes the guardian clean up whatever it still knows of (nothing,
// when msgbench cleaned up itself) and exit, and waits for it, at most timeout.
func (g *Guardian) Close(timeout time.Duration) error {
	current.CompareAndSwap(g, nil)
	g.mu.Lock()
	if g.w != nil {
		_ = g.w.Close()
		g.w = nil
	}
	g.mu.Unlock()
	select {
	case <-g.exited:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("the guardian (pid %d) did not exit within %s of the end of the run", g.PID(), timeout)
	}
}

func (g *Guardian) send(format string, args ...any) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.w == nil {
		return
	}
	// One short line is one write, never interleaved (below PIPE_BUF). A failed write means the
	// guardian is gone; msgbench then cleans up on its own as before.
	_, _ = fmt.Fprintf(g.w, format+"\n", args...)
}

func tell(format string, args ...any) {
	if g := current.Load(); g != nil {
		g.send(format, args...)
	}
}

// Track registers a child process of this msgbench: if msgbench dies before it, the guardian
// kills it.
func Track(pid int) {
	if current.Load() == nil {
		return
	}
	if start, err := startTime(pid); err == nil {
		tell("pid %d %d", pid, start)
	}
}

// Forget withdraws a process Track registered, once it has been waited for.
func Forget(pid int) { tell("forget-pid %d", pid) }

// TrackNamespace registers a network namespace that fd (a descriptor of this process) holds:
// if msgbench dies, the guardian kills every process in it, which frees it.
func TrackNamespace(fd int) { tell("netns %d", fd) }

// ForgetNamespace withdraws a namespace TrackNamespace registered; call it before closing fd.
func ForgetNamespace(fd int) { tell("forget-netns %d", fd) }

// MkdirTemp is os.MkdirTemp with the folder registered with the guardian before it exists, so it
// cannot outlive msgbench unnoticed however msgbench ends. Remove it with RemoveAll. The pattern's
// base must start with "msgbench-", which the guardian requires of what it removes.
func MkdirTemp(dir, pattern string) (string, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	if !strings.HasPrefix(pattern, "msgbench-") || strings.ContainsRune(pattern, os.PathSeparator) {
		return "", fmt.Errorf("guardian.MkdirTemp: pattern %q must start with msgbench- and name no folder", pattern)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for try := 0; try < 100; try++ {
		var b [8]byte
		_, _ = rand.Read(b[:])
		path := filepath.Join(abs, pattern+hex.EncodeToString(b[:]))
		tell("dir %s", path)
		err := os.Mkdir(path, 0o700)
		if err == nil {
			return path, nil
		}
		tell("forget-dir %s", path) // not ours, or not made: the guardian must not remove it
		if !errors.Is(err, os.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("guardian.MkdirTemp: no free name for %s in %s", pattern, abs)
}

// RemoveAll removes a folder MkdirTemp made and withdraws it from the guardian.
func RemoveAll(path string) error {
	err := os.RemoveAll(path)
	tell("forget-dir %s", path)
	return err
}

// startTime is field 22 of /proc/PID/stat: when the process started, in clock ticks since boot.
// With the PID it names one process for good; a PID alone may be reused.
func startTime(pid int) (uint64, error) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(stat, ')') // the command name may hold spaces and parentheses
	if i < 0 {
		return 0, errors.New("unexpected /proc stat format")
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 20 {
		return 0, errors.New("unexpected /proc stat format")
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// state is field 3 of /proc/PID/stat ('Z' for a zombie); 0 when there is no such process.
func state(pid int) byte {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return 0
	}
	return stat[i+2]
}

// scanLines reads the guardian's commands.
func scanLines(in io.Reader, f func(verb, arg string)) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		verb, arg, _ := strings.Cut(sc.Text(), " ")
		f(verb, arg)
	}
	return sc.Err()
}
