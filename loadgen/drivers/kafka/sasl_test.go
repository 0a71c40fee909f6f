package kafka_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/loadgen"
)

// saslSpec is a run of two publishers and two subscribers over TLS whose devices authenticate
// as dev-{index} (publishers 0–1, subscribers 2–3) with mechanism, publishing 40 messages.
func saslSpec(t *testing.T, mechanism v1alpha1.SASLMechanism, password string) (*v1alpha1.MessagingBenchmarkSpec, loadgen.Options) {
	t.Helper()
	spec := kafkaSpec(uniquePrefix(t))
	spec.Workload.Publishers, spec.Workload.Subscribers, spec.Workload.Topics = 2, 2, 1
	spec.Workload.Messages, spec.Workload.Rate, spec.Workload.Warmup.Duration = 40, 200, 0
	spec.TLS = &v1alpha1.TLSSpec{Enabled: true, Version: "1.3"}
	spec.Identity = &v1alpha1.IdentitySpec{ClientID: "sasl-" + strings.ToLower(string(mechanism)) + "-{index}",
		Username: "dev-{index}", Password: password, SASLMechanism: mechanism}
	cfg, err := certs.ClientTLS(broker.CA, "127.0.0.1", "1.3")
	if err != nil {
		t.Fatal(err)
	}
	return spec, loadgen.Options{Address: broker.SASLAddr, TLS: cfg}
}

// TestSASLDevicesAuthenticateAsTheirOwnUsers runs one benchmark per mechanism over the
// broker's SASL_SSL listener: every message arrives exactly once, and the broker's request log
// shows each client's requests made as its own user (client sasl-…-i as User:dev-i).
func TestSASLDevicesAuthenticateAsTheirOwnUsers(t *testing.T) {
	for _, mech := range []v1alpha1.SASLMechanism{v1alpha1.SASLPlain, v1alpha1.SASLScramSHA256, v1alpha1.SASLScramSHA512} {
		t.Run(string(mech), func(t *testing.T) {
			spec, o := saslSpec(t, mech, "pw-{index}")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := broker.LogRequests(ctx, true); err != nil {
				t.Fatal(err)
			}
			res := runBench(t, spec, o)
			if err := broker.LogRequests(ctx, false); err != nil {
				t.Fatal(err)
			}
			if res.Sent != 40 || res.Received != 80 || *res.Lost != 0 || *res.Duplicates != 0 {
				t.Fatalf("sent %d, received %d (want 40 and 80: two subscribers), lost %d, duplicates %d", res.Sent, res.Received, *res.Lost, *res.Duplicates)
			}
			log, err := os.ReadFile(broker.RequestLog)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 4 {
				id := fmt.Sprintf("sasl-%s-%d", strings.ToLower(string(mech)), i)
				users, lines := principals(string(log), id)
				if want := fmt.Sprintf("User:dev-%d", i); len(users) != 1 || !users[want] {
					t.Errorf("client %s made its %d requests on SASL_SSL as %v, want only %s", id, lines, users, want)
				}
			}
		})
	}
}

// TestSASLWrongPassword fails the run before measuring, naming the cause and the user.
func TestSASLWrongPassword(t *testing.T) {
	spec, o := saslSpec(t, v1alpha1.SASLScramSHA256, "wrong-{index}")
	o.Spec, o.Name, o.BrokerUsage = spec, "test", broker.Usage
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := loadgen.Run(ctx, o)
	msg := ""
	switch {
	case err != nil:
		msg = err.Error()
	case res.Phase != "Failed" || res.Sent != 0:
		t.Fatalf("phase %s, sent %d: want Failed before anything was published", res.Phase, res.Sent)
	default:
		msg = res.Message
	}
	for _, want := range []string{"Kafka broker refused SASL/SCRAM-SHA-256 authentication (SASL_AUTHENTICATION_FAILED) for ",
		"SASL authentication failed for user dev-", "spec.identity"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q\nlacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "wrong-") {
		t.Errorf("message %q quotes a password", msg)
	}
}

// principals are the users the broker's request log (kafka.request.logger, one JSON line per
// request) names for client id's requests on the SASL_SSL listener, and how many there were.
func principals(log, id string) (map[string]bool, int) {
	users := map[string]bool{}
	n := 0
	principal := regexp.MustCompile(`"principal":"(User:[^"]*)"`)
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, `"clientId":"`+id+`"`) || !strings.Contains(line, `"listener":"SASL_SSL"`) {
			continue
		}
		n++
		if m := principal.FindStringSubmatch(line); m != nil {
			users[m[1]] = true
		} else {
			users["?"] = true
		}
	}
	return users, n
}
