package main

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/msgbench/msgbench/internal/testbin"
	"github.com/msgbench/msgbench/results"
)

// TestLocalBrokers runs `msgbench run` against each broker a local run starts besides Mosquitto
// and Kafka (whose samples TestEverySampleRunsLocally runs), at each QoS it offers and over TLS:
// exact delivery counts (checkSanity: lost 0 where the QoS guarantees it, no duplicates at QoS
// 2), the broker and its version in the result, the broker's CPU and memory measured, the TLS
// version negotiated, and the broker process gone when the run ends. The samples
// broker-rabbitmq.yaml (QoS 1) and broker-artemis.yaml (QoS 2, MQTT 5) run in
// TestEverySampleRunsLocally.
func TestLocalBrokers(t *testing.T) {
	bin := testbin.Msgbench(t)
	for _, tc := range []struct {
		name, broker string
		set          []string
	}{
		{"rabbitmq-qos0", "rabbitmq 3.", []string{"broker.type=rabbitmq", "qos=0"}},
		{"rabbitmq-qos1-tls13", "rabbitmq 3.", []string{"broker.type=rabbitmq", "qos=1", "tls.enabled=true", "tls.version=1.3"}},
		{"artemis-qos0", "artemis 2.40", []string{"broker.type=artemis", "qos=0"}},
		{"artemis-qos1-tls12", "artemis 2.40", []string{"broker.type=artemis", "qos=1", "tls.enabled=true", "tls.version=1.2"}},
		{"artemis-qos2-mqtt311", "artemis 2.40", []string{"broker.type=artemis", "qos=2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Beside each other (go test's -parallel: two at a time on 2 cores): each run starts
			// its own broker on ports of its own, and what is checked are counts, names and the
			// broker's pid, not time (a fixed message count, so no open-loop rate to sustain).
			// Most of each run is the broker booting (RabbitMQ about 10 s), mostly waiting.
			t.Parallel()
			out := t.TempDir()
			args := []string{"run", "-f", repo("config", "samples", "mqtt-qos1.yaml"), "--out", out, "--name", tc.name,
				"--set", "workload.publishers=2", "--set", "workload.subscribers=2", "--set", "workload.topics=2",
				"--set", "workload.rate=400", "--set", "workload.messages=600", "--set", "workload.warmup=0s", "--set", "timeout=3m"}
			for _, s := range tc.set {
				args = append(args, "--set", s)
			}
			cmd := exec.Command(bin, args...)
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var log strings.Builder
			pid := 0
			pidRe := regexp.MustCompile(`broker: .* \(pid (\d+)\)`)
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				log.WriteString(sc.Text() + "\n")
				if m := pidRe.FindStringSubmatch(sc.Text()); m != nil {
					pid, _ = strconv.Atoi(m[1])
				}
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("%v\n%s", err, log.String())
			}
			r, err := results.ReadFile(filepath.Join(out, tc.name, "latest", "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			checkSanity(t, r)
			if r.Sent != 600 || r.Received != 600 {
				t.Errorf("sent %d, received %d: want 600 each (2 subscribers of 2 topics)", r.Sent, r.Received)
			}
			if !strings.HasPrefix(r.Environment.Broker, tc.broker) {
				t.Errorf("broker %q, want %s…", r.Environment.Broker, tc.broker)
			}
			if c := r.Resources.BrokerCPUSeconds; c == nil || *c <= 0 || r.Resources.BrokerMaxRSSBytes == nil || *r.Resources.BrokerMaxRSSBytes < 20<<20 {
				t.Errorf("broker resources not measured: %+v", r.Resources)
			}
			if pid == 0 {
				t.Fatalf("no broker pid in the log:\n%s", log.String())
			}
			deadline := time.Now().Add(5 * time.Second)
			for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			if syscall.Kill(pid, 0) == nil {
				t.Errorf("broker pid %d still runs after the run ended", pid)
			}
		})
	}
}

// TestLocalBrokersRefuse: what a broker cannot do, or cannot do here, is refused before anything
// starts, with the reason and what to do instead.
func TestLocalBrokersRefuse(t *testing.T) {
	sample := repo("config", "samples", "mqtt-qos1.yaml")
	for _, tc := range []struct {
		name string
		set  []string
		want string
	}{
		{"rabbitmq-qos2", []string{"broker.type=rabbitmq", "qos=2"}, "spec.qos: RabbitMQ's MQTT plugin has no QoS 2"},
		{"rabbitmq-qos2-through-mqtt-sn", []string{"broker.type=rabbitmq", "qos=2", "protocol=mqtt-sn"}, "spec.qos: RabbitMQ's MQTT plugin has no QoS 2"},
		{"rabbitmq-mqtt5", []string{"broker.type=rabbitmq", "mqtt.version=5"}, "spec.mqtt.version: RabbitMQ 3.10"},
		{"rabbitmq-managed-key", []string{"broker.type=rabbitmq", "broker.config.listeners.tcp.default=5672"}, "spec.broker.config: a key is managed by msgbench"},
		{"artemis-managed-key", []string{"broker.type=artemis", "broker.config.acceptor.port=1884"}, "spec.broker.config: a key is managed by msgbench"},
		{"emqx", []string{"broker.type=emqx"}, "runs emqx only on Kubernetes"},
		{"nanomq", []string{"broker.type=nanomq"}, "broker.type=external"},
		{"hivemq-ce", []string{"broker.type=hivemq-ce"}, "runs hivemq-ce only on Kubernetes"},
		{"vernemq", []string{"broker.type=vernemq", `broker.config.accept_eula="yes"`}, "runs vernemq only on Kubernetes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"run", "-q", "-f", sample, "--out", t.TempDir()}
			for _, s := range tc.set {
				args = append(args, "--set", s)
			}
			start := time.Now()
			_, err := msgbench(t, args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want one containing %q", err, tc.want)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("refused after %s: something started first", took)
			}
		})
	}
}
