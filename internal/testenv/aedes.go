package testenv

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// AedesBroker is a running aedes (https://www.npmjs.com/package/aedes): a Node.js MQTT broker
// not written here, which speaks MQTT 3.1 and 3.1.1 only (its README: "MQTT 5.0 (not support
// yet)"). hack/aedes.sh installs the version hack/aedes/package-lock.json pins; hack/aedes/server.mjs
// serves it on a loopback port with aedes' documented API.
type AedesBroker struct {
	// Addr is host:port on 127.0.0.1, for spec.broker.external.address.
	Addr string
	// Version is the version of aedes that runs, as aedes reports it (aedes.version).
	Version string

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *SyncBuffer
	done   chan struct{}
}

// Aedes starts aedes on a free loopback port for the test and returns its address; the test's
// cleanup stops it. See StartAedes.
func Aedes(t testing.TB) string {
	t.Helper()
	return StartAedes(t).Addr
}

// StartAedes starts aedes (installing it with hack/aedes.sh on first use, cached under
// bin/tools) on a free loopback port; the test's cleanup stops it by its PID and, when the test
// failed, logs what aedes printed on stderr (every client error). Where aedes cannot be installed
// (no node, npm or npm registry) the test is skipped, except in CI (CI set in the environment, as
// .ci/run runs), where make setup must have installed it: there the test fails.
func StartAedes(t testing.TB) *AedesBroker {
	t.Helper()
	server, err := installAedes()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("aedes (make setup installs it for CI with hack/aedes.sh): %v", err)
		}
		t.Skipf("aedes cannot be installed here (hack/aedes.sh needs node, npm and the npm registry): %v", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("hack/aedes.sh installed aedes but node is not on PATH: %v", err)
	}
	a := &AedesBroker{stderr: &SyncBuffer{}, done: make(chan struct{})}
	a.cmd = exec.Command(node, server, "127.0.0.1", "0")
	a.cmd.Stderr = a.stderr
	if a.stdin, err = a.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := a.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.cmd.Start(); err != nil {
		t.Fatalf("start aedes: %v", err)
	}
	t.Cleanup(func() {
		a.stop()
		if t.Failed() {
			t.Logf("aedes %s stderr:\n%s", a.Version, a.Stderr())
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default: // only the first line is read; the rest is dropped
			}
		}
	}()
	go func() { _ = a.cmd.Wait(); close(a.done) }()
	select {
	case line := <-lines:
		// "listening 127.0.0.1:PORT aedes VERSION"
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != "listening" || f[2] != "aedes" {
			t.Fatalf("aedes printed %q; want \"listening HOST:PORT aedes VERSION\"", line)
		}
		a.Addr, a.Version = f[1], f[3]
	case <-a.done:
		t.Fatalf("aedes exited before listening (%v): %s", a.cmd.ProcessState, a.Stderr())
	case <-time.After(30 * time.Second):
		t.Fatalf("aedes did not listen within 30s: %s", a.Stderr())
	}
	return a
}

// Stderr is what aedes printed on stderr so far: hack/aedes/server.mjs prints every clientError
// and connectionError aedes emits ("aedes: client ID error: MESSAGE").
func (a *AedesBroker) Stderr() string { return a.stderr.String() }

// stop closes aedes' standard input (server.mjs then closes the broker and exits) and kills it
// by PID if it has not exited within 5 s.
func (a *AedesBroker) stop() {
	_ = a.stdin.Close()
	select {
	case <-a.done:
	case <-time.After(5 * time.Second):
		_ = a.cmd.Process.Kill()
		<-a.done
	}
}

var aedesInstall = sync.OnceValues(func() (string, error) {
	out, err := exec.Command(filepath.Join(RepoRoot(), "hack", "aedes.sh")).Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			msg += ": " + strings.TrimSpace(string(ee.Stderr))
		}
		return "", fmt.Errorf("hack/aedes.sh: %s", msg)
	}
	return strings.TrimSpace(string(out)), nil
})

// installAedes runs hack/aedes.sh once per test binary and returns the path of server.mjs.
func installAedes() (string, error) { return aedesInstall() }

// SyncBuffer is a bytes.Buffer safe for a process's writes and a test's reads at once.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
