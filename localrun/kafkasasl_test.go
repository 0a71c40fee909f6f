package localrun

import (
	"context"
	"strings"
	"testing"

	"github.com/msgbench/msgbench/brokers/kafka"
	"github.com/msgbench/msgbench/internal/manifest"
	_ "github.com/msgbench/msgbench/loadgen/drivers/kafka" // registers protocol kafka, as cmd/msgbench does
)

// The Kafka msgbench run starts gets a SASL listener whose users are the devices' (patterns
// holding the run's id, which the broker must know before it starts): SASL_PLAINTEXT with PLAIN,
// SASL_SSL with SCRAM-SHA-512 and TLS. Every message arrives exactly once, through that listener.
func TestLocalKafkaSASL(t *testing.T) {
	if _, err := kafka.Libs(); err != nil {
		t.Skip(err)
	}
	for _, c := range []struct{ name, extra, want string }{
		{"SASL_PLAINTEXT PLAIN", `
  identity: {clientId: "meter-{index}", username: "dev-{run}-{index}", password: "pw-{index}-{clientId}"}`, "SASL PLAIN, 4 users"},
		{"SASL_SSL SCRAM-SHA-512", `
  tls: {enabled: true, version: "1.3"}
  identity: {clientId: "meter-{index}", username: "dev@{run}/{index}", password: "pw {index}", saslMechanism: SCRAM-SHA-512}`, "SASL SCRAM-SHA-512, 4 users"},
	} {
		t.Run(c.name, func(t *testing.T) {
			mb, err := manifest.Parse([]byte(`
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: kafka-sasl}
spec:
  protocol: kafka
  qos: 1
  broker: {type: kafka}
  workload: {publishers: 2, subscribers: 2, topics: 1, payloadBytes: 64, rate: 200, messages: 40, warmup: 0s}` + c.extra + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(context.Background(), mb, Options{Logf: t.Logf, NoEmbedded: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Phase != "Succeeded" || res.Sent != 40 || res.Received != 80 || *res.Lost != 0 || *res.Duplicates != 0 || res.Errors != 0 {
				t.Fatalf("phase %s (%s): sent %d, received %d (want 40, 80), lost %d, duplicates %d, errors %d", res.Phase, res.Message, res.Sent, res.Received, *res.Lost, *res.Duplicates, res.Errors)
			}
			if !strings.Contains(res.Environment.Broker, c.want) {
				t.Errorf("environment broker %q: want the SASL listener (%s)", res.Environment.Broker, c.want)
			}
		})
	}
}
