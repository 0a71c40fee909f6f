//go:build linux

// Package spawn starts msgbench's child processes so that none outlives it: each gets SIGKILL
// from the kernel when msgbench dies, however it dies (Pdeathsig), and is registered with the
// run's guardian process when there is one (internal/guardian).
//
// The kernel sends the parent-death signal when the *thread* that forked the child ends, not
// the process. An ordinary Go thread may end whenever a goroutine exits while locked to it, which
// would kill the children early; so every child is started from a dedicated OS thread that stays
// locked to its goroutine for as long as its children should live.
package spawn

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/msgbench/msgbench/internal/guardian"
)

// Spawner starts child processes from one dedicated OS thread. Its children get SIGKILL when the
// thread ends: when Stop is called, or when the process dies.
type Spawner struct {
	reqs chan request
	done chan struct{}

	mu     sync.Mutex
	closed bool
}

type request struct {
	nsfd  int
	cmd   *exec.Cmd
	reply chan error
}

// New starts a spawner's thread.
func New() *Spawner {
	s := &Spawner{reqs: make(chan request), done: make(chan struct{})}
	go s.run()
	return s
}

func (s *Spawner) run() {
	runtime.LockOSThread() // never unlocked: the thread serves only this goroutine and ends with it
	defer close(s.done)
	for req := range s.reqs {
		// Each request that names a namespace enters it, so the thread never needs to go back;
		// a spawner used without namespaces never leaves its own.
		if req.nsfd >= 0 {
			if err := unix.Setns(req.nsfd, unix.CLONE_NEWNET); err != nil {
				req.reply <- fmt.Errorf("enter network namespace: %w", err)
				continue
			}
		}
		req.reply <- req.cmd.Start()
	}
}

// Start starts cmd from the spawner's thread, in the network namespace nsfd holds (-1: the
// thread's own, which is the process's unless an earlier request named another). cmd gets
// SIGKILL as its parent-death signal unless it sets its own Pdeathsig.
func (s *Spawner) Start(nsfd int, cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if cmd.SysProcAttr.Pdeathsig == 0 {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrStopped
	}
	reply := make(chan error, 1)
	s.reqs <- request{nsfd: nsfd, cmd: cmd, reply: reply}
	if err := <-reply; err != nil {
		return err
	}
	guardian.Track(cmd.Process.Pid)
	return nil
}

// Stop ends the thread. Call it once no child should live on: their Pdeathsig fires.
func (s *Spawner) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	close(s.reqs)
	<-s.done
}

// ErrStopped is Start's error after Stop.
var ErrStopped = errors.New("the spawner is stopped")

var (
	processOnce sync.Once
	process     *Spawner
)

// Start starts cmd in this process's network namespace from a spawner that lives as long as the
// process: cmd gets SIGKILL when msgbench dies (unless it sets its own Pdeathsig), and the run's
// guardian kills it if msgbench dies before it. Wait for it as usual, then call Forget.
func Start(cmd *exec.Cmd) error {
	processOnce.Do(func() { process = New() })
	return process.Start(-1, cmd)
}

// Forget tells the guardian that cmd has been waited for: its PID may now be reused.
func Forget(cmd *exec.Cmd) {
	if cmd.Process != nil {
		guardian.Forget(cmd.Process.Pid)
	}
}

// CombinedOutput runs cmd like cmd.CombinedOutput, started by Start.
func CombinedOutput(cmd *exec.Cmd) ([]byte, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out // one writer: os/exec copies into it from one goroutine
	if err := Start(cmd); err != nil {
		return nil, err
	}
	err := cmd.Wait()
	Forget(cmd)
	return out.Bytes(), err
}
