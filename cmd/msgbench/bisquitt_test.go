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

// bisquittTopics are the run's two topics (topicPrefix bisquitt/) with the ids bisquitt is
// started with for every client (its client id "*"): what predefined-id clients name.
var bisquittTopics = map[string]uint16{"bisquitt/0": 100, "bisquitt/1": 7}

const bisquittPredefined = `topicIdType: predefined, predefinedTopicIds: {"bisquitt/0": 100, "bisquitt/1": 7}`

// bisquittManifest is an MQTT-SN run through the gateway at gw to the broker at broker: two
// publishers and two subscribers, all MQTT-SN through the gateway, one subscriber per topic, so
// every message sent is expected once. mqttsn is the inside of the spec.mqttsn block.
func bisquittManifest(t *testing.T, name string, qos int, mqttsn, gw, broker string) string {
	return writeManifest(t, name, fmt.Sprintf(`apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata:
  name: %s
spec:
  protocol: mqtt-sn
  qos: %d
  mqttsn: {%s}
  broker:
    type: external
    external: {address: %q}
  gateway:
    external: {address: %q}
  workload:
    publishers: 2
    subscribers: 2
    topics: 2
    payloadBytes: 128
    rate: 200
    duration: 3s
    warmup: 500ms
    topicPrefix: bisquitt/
`, name, qos, mqttsn, broker, gw))
}

// bisquittPublishManifest is the same load with the subscriber on the broker instead (one MQTT
// device group subscribed to bisquitt/+): MQTT-SN publishers through the gateway, so every
// message sent is expected once.
func bisquittPublishManifest(t *testing.T, name string, qos int, gw, broker string) string {
	return writeManifest(t, name, fmt.Sprintf(`apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata:
  name: %s
spec:
  protocol: mqtt-sn
  qos: %d
  broker:
    type: external
    external: {address: %q}
  gateway:
    external: {address: %q}
  workload: {duration: 3s, warmup: 500ms}
  topics:
    - {name: readings, pattern: "bisquitt/{device}", devices: sensors}
  groups:
    - name: sensors
      count: 2
      publish: {topics: readings, payloadBytes: 128, interval: 10ms}
    - name: backend
      count: 1
      protocol: mqtt
      subscribe: {filter: bisquitt/+}
`, name, qos, broker, gw))
}

func writeManifest(t *testing.T, name, m string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(f, []byte(m), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// runBisquitt runs manifest f (metadata.name name) and returns its result.json and the run's error.
func runBisquitt(t *testing.T, name, f string) (*results.Result, error) {
	t.Helper()
	out := t.TempDir()
	stdout, err := msgbench(t, "run", "-q", "--out", out, "--run-id", "r", "-f", f)
	r, rerr := results.ReadFile(filepath.Join(out, name, "r", "result.json"))
	if rerr != nil {
		t.Fatalf("no result.json (run: %v): %v\n%s", err, rerr, stdout)
	}
	t.Logf("%s: phase %s, sent %d, acked %d, expected %d, received %d, lost %s, duplicates %s, out of order %s, errors %d, unsent %d; %s",
		name, r.Phase, r.Sent, r.Acked, r.Expected, r.Received, optCount(r.Lost), optCount(r.Duplicates), optCount(r.OutOfOrder), r.Errors, r.Unsent, r.Message)
	return r, err
}

// TestAgainstBisquitt runs `msgbench run` through bisquitt, an MQTT-SN 1.2 gateway not written
// here, as spec.gateway.external, to aedes, an MQTT broker not written here, as
// spec.broker.external: every message sent must be delivered exactly once. QoS 0 goes both ways
// through bisquitt (with topic names, and with predefined ids from the ports
// spec.mqttsn.sourcePort gives); at QoS 1 and 2 the publishers go through bisquitt and the subscriber is on
// aedes, because bisquitt 0.6.0's SUBACK says QoS 0 whatever it granted
// (TestBisquittSubackGrantsQoS0). QoS -1 through bisquitt reaches no broker
// (TestBisquittQoSMinus1ReachesNoBroker).
func TestAgainstBisquitt(t *testing.T) {
	aedes := testenv.StartAedes(t)
	gw := testenv.StartBisquitt(t, aedes.Addr, bisquittTopics)
	t.Logf("bisquitt %s on %s, aedes %s on %s", gw.Version, gw.Addr, aedes.Version, aedes.Addr)
	for _, tc := range []struct {
		name       string
		qos        int
		mqttsn     string // spec.mqttsn; "-" for the MQTT subscriber on aedes
		sourcePort bool   // spec.mqttsn.sourcePort: each client from a port of its own
	}{
		{"qos0", 0, "", false},
		{"qos0-predefined", 0, bisquittPredefined, true},
		{"qos1", 1, "-", false},
		{"qos2", 2, "-", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "bisquitt-" + tc.name
			f := bisquittPublishManifest(t, name, tc.qos, gw.Addr, aedes.Addr)
			if tc.sourcePort {
				tc.mqttsn += fmt.Sprintf(", sourcePort: %d", testenv.FreeUDPPorts(t, 4))
			}
			if tc.mqttsn != "-" {
				f = bisquittManifest(t, name, tc.qos, tc.mqttsn, gw.Addr, aedes.Addr)
			}
			r, err := runBisquitt(t, name, f)
			if err != nil {
				t.Fatalf("msgbench run through bisquitt %s: %v\nbisquitt: %s\naedes: %s", gw.Version, err, gw.Log(), aedes.Stderr())
			}
			// Not unsent: on a loaded machine a publisher may fall behind its schedule (logged
			// above); what it sent is what the gateway must deliver.
			checkExactRun(t, r, tc.qos)
		})
	}
}

// TestBisquittSubackGrantsQoS0: bisquitt 0.6.0 answers every SUBSCRIBE with a SUBACK whose QoS
// flags are 0, whatever QoS the broker granted. MQTT-SN 1.2 §5.4.16 puts the granted QoS there;
// bisquitt copies the QoS bits of the MQTT SUBACK's fixed header (always 0) instead of the MQTT
// SUBACK's return code (gateway/subscribe_transaction.go: NewSuback(t.topicID, returnCode,
// mqSuback.Qos)). msgbench's MQTT-SN subscriber refuses a subscription granted below the run's
// QoS, as its MQTT subscriber does, so a QoS 1 or 2 run with subscribers through bisquitt fails
// before measuring, naming the grant.
func TestBisquittSubackGrantsQoS0(t *testing.T) {
	aedes := testenv.StartAedes(t)
	gw := testenv.StartBisquitt(t, aedes.Addr, bisquittTopics)
	for _, qos := range []int{1, 2} {
		t.Run(fmt.Sprintf("qos%d", qos), func(t *testing.T) {
			name := fmt.Sprintf("bisquitt-suback-qos%d", qos)
			r, err := runBisquitt(t, name, bisquittManifest(t, name, qos, "", gw.Addr, aedes.Addr))
			want := fmt.Sprintf("gateway granted QoS 0, the benchmark asks for %d", qos)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("run error %v; want one naming %q", err, want)
			}
			if r.Phase != "Failed" || r.Sent != 0 {
				t.Errorf("phase %q, sent %d; want Failed before sending", r.Phase, r.Sent)
			}
		})
	}
}

// TestBisquittQoSMinus1ReachesNoBroker: bisquitt 0.6.0 admits QoS -1 PUBLISHes with predefined
// ids without CONNECT (MQTT-SN 1.2 §6.8), but it forwards them on the MQTT connection it opened
// for that client address without ever sending an MQTT CONNECT there (gateway/handler1.go:
// handleClientPublish on a handler in the disconnected state). An MQTT 3.1.1 broker must close a
// connection whose first packet is not CONNECT (MQTT 3.1.1 §3.1.0-1): aedes does ("connection
// error: Invalid protocol"), so nothing published at QoS -1 through bisquitt arrives. msgbench
// measures exactly that: every message sent is lost and the run fails.
func TestBisquittQoSMinus1ReachesNoBroker(t *testing.T) {
	aedes := testenv.StartAedes(t)
	gw := testenv.StartBisquitt(t, aedes.Addr, bisquittTopics)
	name := "bisquitt-qos-1"
	r, err := runBisquitt(t, name, bisquittManifest(t, name, -1, bisquittPredefined, gw.Addr, aedes.Addr))
	if err == nil || r.Phase != "Failed" {
		t.Fatalf("a QoS -1 run through bisquitt: phase %s, error %v; want it to fail", r.Phase, err)
	}
	if r.Sent < 300 || r.Received != 0 || r.Lost == nil || *r.Lost != r.Expected || r.Expected != r.Sent {
		t.Errorf("sent %d, expected %d, received %d, lost %s; want about 600 sent, all expected and all lost",
			r.Sent, r.Expected, r.Received, optCount(r.Lost))
	}
	if !strings.Contains(aedes.Stderr(), "Invalid protocol") {
		t.Errorf("aedes did not refuse bisquitt's connection; its stderr:\n%s", aedes.Stderr())
	}
}
