package testenv

import (
	"fmt"
	"net"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// BisquittGateway is a running bisquitt (https://github.com/energomonitor/bisquitt): a
// transparent MQTT-SN 1.2 gateway in Go not written here (one MQTT connection per MQTT-SN
// client; no SEARCHGW). hack/bisquitt.sh builds the version hack/bisquitt/go.sum pins.
type BisquittGateway struct {
	// Addr is host:port (UDP; 127.0.0.1 from StartBisquitt), for spec.gateway.external.address.
	Addr string
	// Version is the version bisquitt reports when it starts.
	Version string

	p *process
}

// StartBisquitt starts bisquitt (building it with hack/bisquitt.sh on first use, cached under
// bin/tools) on a free loopback UDP port, bridging to the MQTT broker at brokerAddr, with
// predefined topics (name → id) for every client (bisquitt's client id "*"). It returns once
// bisquitt logs that it listens. The test's cleanup stops it (SIGTERM, then by its PID if it has
// not exited within 5 s) and, when the test failed, logs what it printed. Where it cannot be built
// (no go or module proxy) the test is skipped, except in CI, where it fails (Install).
func StartBisquitt(t testing.TB, brokerAddr string, predefined map[string]uint16) *BisquittGateway {
	t.Helper()
	return StartBisquittOn(t, "127.0.0.1", brokerAddr, predefined)
}

// StartBisquittOn is StartBisquitt on an address of this machine's other than loopback (make
// e2e: the node's, for worker pods to reach).
func StartBisquittOn(t testing.TB, listenHost, brokerAddr string, predefined map[string]uint16) *BisquittGateway {
	t.Helper()
	bin := Install(t, "bisquitt.sh", "bisquitt")
	host, port, err := net.SplitHostPort(brokerAddr)
	if err != nil {
		t.Fatalf("broker address %q: %v", brokerAddr, err)
	}
	// Port 0: the system picks a free port and bisquitt logs it, so no other socket can take it
	// between a probe and bisquitt's bind.
	args := []string{"--host", listenHost, "--port", "0", "--mqtt-host", host, "--mqtt-port", port}
	names := make([]string, 0, len(predefined))
	for name := range predefined {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		args = append(args, "--predefined-topic", fmt.Sprintf("*;%s;%d", name, predefined[name]))
	}
	cmd := exec.Command(bin, args...)
	var version string
	// "[INFO ][gw] bisquitt version 0.6.0 starting", then "[INFO ][gw] Listening on 127.0.0.1:PORT"
	// once its UDP socket is bound.
	p, line := startProcess(t, "bisquitt", cmd, func(line string) bool {
		if _, v, ok := strings.Cut(line, "] bisquitt version "); ok {
			version = strings.TrimSuffix(v, " starting")
		}
		return strings.Contains(line, "] Listening on ")
	}, func() error { return cmd.Process.Signal(syscall.SIGTERM) })
	_, addr, _ := strings.Cut(line, "] Listening on ")
	if _, _, err := net.SplitHostPort(addr); err != nil {
		t.Fatalf("bisquitt printed %q; want \"Listening on HOST:PORT\"", line)
	}
	return &BisquittGateway{Addr: addr, Version: version, p: p}
}

// Log is what bisquitt printed so far (it logs on standard output): start, errors of its client
// handlers ("[ERROR][gw][h:ADDR] ...").
func (b *BisquittGateway) Log() string { return b.p.stdout.String() + b.p.stderr.String() }
