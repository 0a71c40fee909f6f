package testenv

import (
	"bytes"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// AedesBroker is a running aedes (https://www.npmjs.com/package/aedes): a Node.js MQTT broker
// not written here, which speaks MQTT 3.1 and 3.1.1 only (its README: "MQTT 5.0 (not support
// yet)"). hack/aedes.sh installs the version hack/aedes/package-lock.json pins; hack/aedes/server.mjs
// serves it on a loopback port with aedes' documented API.
type AedesBroker struct {
	// Addr is host:port (on 127.0.0.1 from StartAedes), for spec.broker.external.address.
	Addr string
	// Version is the version of aedes that runs, as aedes reports it (aedes.version).
	Version string

	p *process
}

// Aedes starts aedes on a free loopback port for the test and returns its address; the test's
// cleanup stops it. See StartAedes.
func Aedes(t testing.TB) string {
	t.Helper()
	return StartAedes(t).Addr
}

// StartAedes starts aedes (installing it with hack/aedes.sh on first use, cached under
// bin/tools) on a free loopback port; the test's cleanup stops it (closing its standard input:
// server.mjs then closes the broker and exits; by its PID if it has not exited within 5 s) and,
// when the test failed, logs what aedes printed on stderr (every client error). Where aedes
// cannot be installed (no node, npm or npm registry) the test is skipped, except in CI, where
// make setup must have installed it: there the test fails (Install).
func StartAedes(t testing.TB) *AedesBroker {
	t.Helper()
	return StartAedesOn(t, "127.0.0.1")
}

// StartAedesOn is StartAedes on an address of this machine's other than loopback (make e2e: the
// node's, for worker pods to reach).
func StartAedesOn(t testing.TB, host string) *AedesBroker {
	t.Helper()
	server := Install(t, "aedes.sh", "aedes")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("hack/aedes.sh installed aedes but node is not on PATH: %v", err)
	}
	cmd := exec.Command(node, server, host, "0")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	// "listening HOST:PORT aedes VERSION", its first line
	p, line := startProcess(t, "aedes", cmd, func(string) bool { return true }, stdin.Close)
	f := strings.Fields(line)
	if len(f) != 4 || f[0] != "listening" || f[2] != "aedes" {
		t.Fatalf("aedes printed %q; want \"listening HOST:PORT aedes VERSION\"", line)
	}
	return &AedesBroker{Addr: f[1], Version: f[3], p: p}
}

// Stderr is what aedes printed on stderr so far: hack/aedes/server.mjs prints every clientError
// and connectionError aedes emits ("aedes: client ID error: MESSAGE").
func (a *AedesBroker) Stderr() string { return a.p.stderr.String() }

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
