//go:build linux

package emulator

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// spawner starts child processes inside a link's namespaces from one dedicated OS thread. A
// child inherits the network namespace of the thread that forks it, and its Pdeathsig fires when
// that thread (not the process) ends; an ordinary Go thread may end whenever some goroutine
// exits while locked to it, which would kill the children. This thread stays locked to the
// spawner until the link closes, after its children are gone.
type spawner struct {
	reqs chan spawnRequest
	done chan struct{}

	mu     sync.Mutex
	closed bool
}

type spawnRequest struct {
	nsfd  int
	cmd   *exec.Cmd
	reply chan error
}

func newSpawner() *spawner {
	s := &spawner{reqs: make(chan spawnRequest), done: make(chan struct{})}
	go s.run()
	return s
}

func (s *spawner) run() {
	runtime.LockOSThread() // never unlocked: the thread serves only this goroutine and ends with it
	defer close(s.done)
	for req := range s.reqs {
		// Each request names its namespace, so the thread never needs to go back.
		if err := unix.Setns(req.nsfd, unix.CLONE_NEWNET); err != nil {
			req.reply <- fmt.Errorf("enter network namespace: %w", err)
			continue
		}
		req.reply <- req.cmd.Start()
	}
}

func (s *spawner) start(nsfd int, cmd *exec.Cmd) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("the link is closed")
	}
	reply := make(chan error, 1)
	s.reqs <- spawnRequest{nsfd: nsfd, cmd: cmd, reply: reply}
	return <-reply
}

// stop ends the thread. Call it once no child should live on: their Pdeathsig fires.
func (s *spawner) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	close(s.reqs)
	<-s.done
}
