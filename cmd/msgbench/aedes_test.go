package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgbench/msgbench/internal/testenv"
	"github.com/msgbench/msgbench/results"
)

// aedesManifest is a run against an external broker at addr: two publishers, two subscribers, one
// per topic, so every message sent is expected once.
func aedesManifest(t *testing.T, name, addr string, qos int, version string) string {
	t.Helper()
	m := fmt.Sprintf(`apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata:
  name: %s
spec:
  protocol: mqtt
  qos: %d
  mqtt:
    version: %q
  broker:
    type: external
    external:
      address: %s
  workload:
    publishers: 2
    subscribers: 2
    topics: 2
    payloadBytes: 128
    rate: 200
    duration: 3s
    warmup: 500ms
    topicPrefix: msgbench-aedes-
`, name, qos, version, addr)
	f := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(f, []byte(m), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestAgainstAedes runs `msgbench run` against aedes (npm), an MQTT broker not written here, as
// spec.broker.external: MQTT 3.1.1 at QoS 0, 1 and 2 must deliver exactly what was sent (received
// == expected == sent, lost 0, errors 0; no duplicates at QoS 2, nor at 0 and 1 on a loopback
// run that loses no connection). aedes speaks MQTT 3.1.1 only: TestAedesRefusesMQTT5 is what an
// MQTT 5 run against it does.
func TestAgainstAedes(t *testing.T) {
	aedes := testenv.StartAedes(t)
	t.Logf("aedes %s on %s", aedes.Version, aedes.Addr)
	for _, qos := range []int{0, 1, 2} {
		t.Run(fmt.Sprintf("qos%d", qos), func(t *testing.T) {
			name := fmt.Sprintf("aedes-qos%d", qos)
			out := t.TempDir()
			stdout, err := msgbench(t, "run", "-q", "--out", out, "--run-id", "r", "-f", aedesManifest(t, name, aedes.Addr, qos, "3.1.1"))
			if err != nil {
				t.Fatalf("msgbench run against aedes %s: %v\n%s\naedes: %s", aedes.Version, err, stdout, aedes.Stderr())
			}
			r, err := results.ReadFile(filepath.Join(out, name, "r", "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("QoS %d: sent %d, acked %d, expected %d, received %d, lost %s, duplicates %s, out of order %s, errors %d",
				qos, r.Sent, r.Acked, r.Expected, r.Received, optCount(r.Lost), optCount(r.Duplicates), optCount(r.OutOfOrder), r.Errors)
			checkExactRun(t, r, qos)
			if r.Unsent != 0 {
				t.Errorf("unsent %d; want none", r.Unsent)
			}
		})
	}
}

// checkExactRun: a run of 2 publishers at 200 msg/s for 3 s, one subscriber per topic, succeeded
// and delivered every message it sent exactly once (acknowledged at QoS > 0), with no error.
// Unsent is for the caller: on a loaded machine a publisher may fall behind its schedule.
func checkExactRun(t *testing.T, r *results.Result, qos int) {
	t.Helper()
	if r.Phase != "Succeeded" {
		t.Errorf("phase %q: %s", r.Phase, r.Message)
	}
	if r.Sent < 300 {
		t.Errorf("sent %d; want about 600 (200 msg/s for 3 s)", r.Sent)
	}
	if r.Expected != r.Sent || r.Received != r.Sent {
		t.Errorf("sent %d, expected %d, received %d; want all three equal (one subscriber per topic)", r.Sent, r.Expected, r.Received)
	}
	if qos > 0 && r.Acked != r.Sent {
		t.Errorf("acked %d of %d sent at QoS %d", r.Acked, r.Sent, qos)
	}
	if r.Lost == nil || *r.Lost != 0 || r.Duplicates == nil || *r.Duplicates != 0 {
		t.Errorf("lost %s, duplicates %s; want 0 and 0", optCount(r.Lost), optCount(r.Duplicates))
	}
	if r.Errors != 0 {
		t.Errorf("errors %d; want none", r.Errors)
	}
}

func optCount(p *int64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprint(*p)
}

// TestAedesRefusesMQTT5: aedes speaks MQTT 3.1.1 only (its README: "MQTT 5.0 (not support yet)").
// To an MQTT 5 CONNECT it answers a 3.1.1 CONNACK with return code 1, unacceptable protocol
// version (aedes logs "unacceptable protocol version"), so an MQTT 5 run against it must fail,
// before it sends anything, and keep a Failed result.json that says why. The wording of that
// message is loadgen/drivers/mqtt's; this test logs it and checks only that it names the CONNACK.
func TestAedesRefusesMQTT5(t *testing.T) {
	aedes := testenv.StartAedes(t)
	out := t.TempDir()
	stdout, err := msgbench(t, "run", "-q", "--out", out, "--run-id", "r", "-f", aedesManifest(t, "aedes-mqtt5", aedes.Addr, 1, "5"))
	t.Logf("msgbench run, MQTT 5 against aedes %s: error: %v\nstdout: %s\naedes stderr:\n%s", aedes.Version, err, stdout, aedes.Stderr())
	if err == nil {
		t.Fatal("an MQTT 5 run against aedes, which speaks 3.1.1 only, succeeded")
	}
	if !strings.Contains(aedes.Stderr(), "unacceptable protocol version") {
		t.Errorf("aedes did not refuse the protocol version; its stderr:\n%s", aedes.Stderr())
	}
	if !strings.Contains(err.Error(), "CONNACK return code 1") || !strings.Contains(err.Error(), `does not speak MQTT 5: set spec.mqtt.version to "3.1.1"`) {
		t.Errorf("error %q does not name the CONNACK that refused the run and why", err)
	}
	r, rerr := results.ReadFile(filepath.Join(out, "aedes-mqtt5", "r", "result.json"))
	if rerr != nil {
		t.Fatalf("no result.json kept: %v", rerr)
	}
	if r.Phase != "Failed" || r.Message != err.Error() || r.Sent != 0 || r.Received != 0 {
		t.Errorf("result.json: phase %q, message %q, sent %d, received %d; want Failed with the run's error and nothing sent",
			r.Phase, r.Message, r.Sent, r.Received)
	}
}
