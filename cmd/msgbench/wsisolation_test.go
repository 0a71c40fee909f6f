package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/internal/testbin"
	"github.com/msgbench/msgbench/results"
)

// TestRunOverWebSocketIsolated: Mosquitto's websockets listener binds every address, so a local
// run over WebSocket without a network profile runs broker and clients in a namespace of their
// own. While the run lasts the broker is in another network namespace, its ws port listens there
// and not in this one (the host's); delivery stays exact, the broker's CPU and memory are
// measured, the result names no emulated network; neither the end of the run nor Ctrl-C leaves a
// process in that namespace.
func TestRunOverWebSocketIsolated(t *testing.T) {
	needRoot(t)
	if _, err := mosquitto.Binary(); err != nil {
		t.Skip(err)
	}
	bin := testbin.Msgbench(t)
	for _, tc := range []struct {
		name      string
		set       []string
		interrupt bool
	}{
		{"to the end", []string{"workload.messages=600", "workload.rate=200", "workload.warmup=0s"}, false},
		{"Ctrl-C", []string{"workload.duration=30s", "workload.rate=200"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			args := []string{"run", "-f", repo("config", "samples", "mqtt-qos1.yaml"), "--out", out, "--name", "ws-isolated",
				"--set", "mqtt.transport=websocket", "--set", "workload.publishers=2", "--set", "workload.subscribers=2",
				"--set", "workload.topics=2", "--set", "workload.payloadBytes=64", "--set", "timeout=2m"}
			for _, s := range tc.set {
				args = append(args, "--set", s)
			}
			cmd := exec.Command(bin, args...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if cmd.ProcessState == nil {
					_ = cmd.Process.Kill()
					_ = cmd.Wait()
				}
			})
			kill := time.AfterFunc(90*time.Second, func() { _ = cmd.Process.Kill() })
			defer kill.Stop()
			var log strings.Builder
			lines := bufio.NewScanner(stderr)
			pidRe := regexp.MustCompile(`broker: mosquitto .*\(pid (\d+)\)`)
			wsRe := regexp.MustCompile(`MQTT over WebSocket at 127\.0\.0\.1:(\d+)/`)
			pid, port := 0, 0
			for (pid == 0 || port == 0) && lines.Scan() {
				log.WriteString(lines.Text() + "\n")
				if m := pidRe.FindStringSubmatch(lines.Text()); m != nil {
					pid, _ = strconv.Atoi(m[1])
				}
				if m := wsRe.FindStringSubmatch(lines.Text()); m != nil {
					port, _ = strconv.Atoi(m[1])
				}
			}
			if pid == 0 || port == 0 {
				t.Fatalf("no broker pid or ws port in the log:\n%s", log.String())
			}
			self, _ := os.Readlink("/proc/self/ns/net")
			brokerNS, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
			if err != nil || brokerNS == self {
				t.Fatalf("broker pid %d network namespace %q (%v), this test's %q: want another", pid, brokerNS, err, self)
			}
			if !listening(t, fmt.Sprintf("/proc/%d/net", pid), port) {
				t.Errorf("the broker's ws port %d does not listen in its own namespace", port)
			}
			if listening(t, "/proc/self/net", port) {
				t.Errorf("port %d listens in the host's network namespace", port)
			}
			if tc.interrupt {
				time.Sleep(time.Second)
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) // as a terminal does
			}
			go func() {
				for lines.Scan() {
				}
			}()
			err = cmd.Wait()
			if tc.interrupt == (err == nil) {
				t.Errorf("exit %v; interrupted %v", err, tc.interrupt)
			}
			if left := inNamespace(brokerNS); len(left) > 0 {
				t.Errorf("processes %v still in the run's namespace %s", left, brokerNS)
			}
			if tc.interrupt {
				return
			}
			r, err := results.ReadFile(filepath.Join(out, "ws-isolated", "latest", "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			checkSanity(t, r)
			if r.Sent != 600 || r.Received != 600 {
				t.Errorf("sent %d, received %d: want 600 each", r.Sent, r.Received)
			}
			if r.Network != nil {
				t.Errorf("network %v in the result: nothing was emulated", r.Network)
			}
			if res := r.Resources; res.BrokerCPUSeconds == nil || *res.BrokerCPUSeconds <= 0 || res.BrokerMaxRSSBytes == nil || *res.BrokerMaxRSSBytes <= 0 {
				t.Errorf("broker resources %+v: want its CPU and RSS", res)
			}
		})
	}
}

// listening reports whether a LISTEN socket for port is in the tcp or tcp6 table under dir
// (/proc/<pid>/net shows that process's network namespace).
func listening(t *testing.T, dir string, port int) bool {
	t.Helper()
	suffix := fmt.Sprintf(":%04X", port)
	for _, table := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile(filepath.Join(dir, table))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			if f := strings.Fields(line); len(f) > 3 && strings.HasSuffix(f[1], suffix) && f[3] == "0A" {
				return true
			}
		}
	}
	return false
}

// inNamespace lists the processes whose network namespace is ns ("net:[inode]").
func inNamespace(ns string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if link, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid)); err == nil && link == ns {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestRunOverWebSocketWithoutPrivileges: without the capabilities for a namespace (setpriv drops
// them from a root msgbench), a WebSocket run stays on the host's loopback, says in one warning
// line that the ws port is open to the network, and delivers exactly.
func TestRunOverWebSocketWithoutPrivileges(t *testing.T) {
	needRoot(t)
	if _, err := mosquitto.Binary(); err != nil {
		t.Skip(err)
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip(err)
	}
	bin := testbin.Msgbench(t)
	out := t.TempDir()
	cmd := exec.Command(setpriv, "--inh-caps=-all", "--bounding-set=-net_admin,-sys_admin", bin, "run", "-q",
		"-f", repo("config", "samples", "mqtt-qos1.yaml"), "--out", out, "--name", "ws-exposed",
		"--set", "mqtt.transport=websocket", "--set", "workload.publishers=2", "--set", "workload.subscribers=2",
		"--set", "workload.topics=2", "--set", "workload.messages=200", "--set", "workload.rate=200", "--set", "workload.warmup=0s")
	stderr, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	var warnings []string
	for _, line := range strings.Split(string(stderr), "\n") {
		if strings.Contains(line, "warning:") {
			warnings = append(warnings, line)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "binds every address") || !strings.Contains(warnings[0], "accepts anonymous MQTT from the network") {
		t.Errorf("warnings %q, want one naming the exposed ws port", warnings)
	}
	r, err := results.ReadFile(filepath.Join(out, "ws-exposed", "latest", "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkSanity(t, r)
	if r.Sent != 200 || r.Received != 200 || r.Network != nil {
		t.Errorf("sent %d, received %d, network %v: want 200 each and none", r.Sent, r.Received, r.Network)
	}
}
