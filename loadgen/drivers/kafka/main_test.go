package kafka_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/kafka"
	"github.com/msgbench/msgbench/internal/testenv"
	"github.com/msgbench/msgbench/loadgen"
	"github.com/msgbench/msgbench/results"
)

// broker is one real Kafka (plain, TLS and SASL_SSL listeners) for the whole package: a JVM
// takes tens of seconds to start on a shared two-core machine.
var broker *kafka.Process

// saslUsers are the users of the broker's SASL_SSL listener (sasl_test.go), known to every
// mechanism: dev-0 … dev-3 with passwords pw-0 … pw-3 (the patterns dev-{index}, pw-{index}).
var saslUsers = &kafka.SASL{
	Mechanisms: []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"},
	Users:      map[string]string{"dev-0": "pw-0", "dev-1": "pw-1", "dev-2": "pw-2", "dev-3": "pw-3"},
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if _, err := kafka.Libs(); err != nil {
		// Fetch the pinned release once (Maven Central); later runs find it in bin/kafka.
		cmd := exec.Command(filepath.Join(testenv.RepoRoot(), "hack", "kafka.sh"))
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			fmt.Fprintf(os.Stderr, "hack/kafka.sh: %v\n", err)
			return 1
		}
		_ = os.Setenv(kafka.LibsEnv, strings.TrimSpace(string(out)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var err error
	broker, err = kafka.Start(ctx, kafka.Options{TLS: true, SASL: saslUsers, RequestLog: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start kafka:", err)
		return 1
	}
	code := m.Run()
	// Stop ends the JVM it started, by PID: a controlled shutdown, or SIGKILL when that takes
	// too long on a loaded machine (reported, not a failure); either way the process is gone.
	if err := broker.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop kafka:", err)
	}
	select {
	case <-broker.Exited():
	default:
		fmt.Fprintf(os.Stderr, "kafka (pid %d) still runs after Stop\n", broker.PID())
		return 1
	}
	return code
}

// kafkaSpec is a defaulted kafka spec, as the API server (or manifest.Load) would produce it.
func kafkaSpec(prefix string) *v1alpha1.MessagingBenchmarkSpec {
	return &v1alpha1.MessagingBenchmarkSpec{
		Protocol: v1alpha1.ProtocolKafka,
		QoS:      1,
		MQTT:     v1alpha1.MQTTSpec{Version: v1alpha1.MQTT311, Inflight: 20},
		Kafka:    v1alpha1.KafkaSpec{Partitions: 1, Replicas: 1, BatchBytes: 16384, Compression: "none"},
		Broker:   v1alpha1.BrokerSpec{Type: v1alpha1.BrokerKafka},
		Workers:  v1alpha1.WorkersSpec{Replicas: 1},
		Workload: v1alpha1.WorkloadSpec{
			Publishers: 1, Subscribers: 1, Topics: 1, TopicPrefix: prefix, PayloadBytes: 1024,
			Duration: metav1.Duration{Duration: time.Second}, Warmup: metav1.Duration{Duration: 300 * time.Millisecond},
			TimelineInterval: metav1.Duration{Duration: 100 * time.Millisecond},
		},
	}
}

// uniquePrefix keeps each test's topics apart on the shared broker.
func uniquePrefix(t testing.TB) string {
	name := strings.NewReplacer("/", "-", "_", "-", "=", "-").Replace(t.Name())
	return fmt.Sprintf("%s-%d-", strings.ToLower(name), time.Now().UnixNano()%1e6)
}

func runBench(t testing.TB, spec *v1alpha1.MessagingBenchmarkSpec, o loadgen.Options) *results.Result {
	t.Helper()
	if o.Address == "" {
		o.Address = broker.Addr
	}
	o.Spec, o.Name = spec, "test"
	o.BrokerUsage = broker.Usage
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := loadgen.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Phase != "Succeeded" {
		t.Fatalf("phase %s: %s", res.Phase, res.Message)
	}
	return res
}
