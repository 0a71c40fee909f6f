package mqtt_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/brokers/rabbitmq"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/loadgen/drivers/driverstest"
	_ "github.com/msgbench/msgbench/loadgen/drivers/mqtt"
)

// The broker says no (docs/brokers.md, "When the broker says no"): each test makes a real broker
// refuse and checks that the driver's error names the real cause and what to change, not "EOF".

func refusalSpec(version v1alpha1.MQTTVersion, payload int32) *v1alpha1.MessagingBenchmarkSpec {
	return &v1alpha1.MessagingBenchmarkSpec{
		Protocol: v1alpha1.ProtocolMQTT, QoS: 1,
		MQTT:     v1alpha1.MQTTSpec{Version: version, Inflight: 20},
		Workload: v1alpha1.WorkloadSpec{Publishers: 1, Subscribers: 1, Topics: 1, TopicPrefix: "refusal/", PayloadBytes: payload},
	}
}

// connect connects one client of spec to address (with clientTLS) and returns its session.
func connect(t *testing.T, spec *v1alpha1.MessagingBenchmarkSpec, address string, clientTLS *tls.Config, role drivers.Role) (drivers.Session, error) {
	t.Helper()
	d, err := drivers.New(string(v1alpha1.ProtocolMQTT), drivers.Config{Group: driverstest.Group(t, spec), Address: address, TLS: clientTLS})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := d.Connect(ctx, drivers.Client{ID: "refusal-" + role.String(), Role: role, Topic: "refusal/0"}, nopHandler{})
	if err == nil {
		t.Cleanup(func() { _ = s.Close() })
	}
	return s, err
}

func wantWords(t *testing.T, what string, err error, words ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: %q does not say %q", what, err, w)
		}
	}
}

// TestRefusedNotAuthorized: a Mosquitto that lets no anonymous client in refuses CONNECT with
// "not authorized" (3.1.1 return code 5, MQTT 5 reason code 0x87), in words with the advice.
func TestRefusedNotAuthorized(t *testing.T) {
	pwfile := t.TempDir() + "/passwd"
	if out, err := exec.Command("mosquitto_passwd", "-c", "-b", pwfile, "dev", "pw").CombinedOutput(); err != nil {
		t.Fatalf("mosquitto_passwd (Debian's mosquitto package): %v %s", err, out)
	}
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{Access: map[string]string{"password_file": pwfile, "allow_anonymous": "false"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	_, err = connect(t, refusalSpec(v1alpha1.MQTT311, 64), b.Addr, nil, drivers.Publisher)
	wantWords(t, "3.1.1", err, "broker refused CONNECT: not authorized (CONNACK return code 5)", "client refusal-publisher", "allow_anonymous true")
	_, err = connect(t, refusalSpec(v1alpha1.MQTT5, 64), b.Addr, nil, drivers.Subscriber)
	wantWords(t, "5", err, "broker refused CONNECT: not authorized (CONNACK reason code 0x87)", "client refusal-subscriber", "connect anonymously")
}

// TestRefusedPacketTooLarge: Mosquitto's max_packet_size, which an MQTT 5 CONNACK announces, is
// named with the payload before the first message; its message_size_limit refuses each PUBLISH
// with PUBACK 0x95, which Drain reports with the first refused packet; a 3.1.1 broker over
// max_packet_size only closes the connection, which is said so.
func TestRefusedPacketTooLarge(t *testing.T) {
	for _, key := range []string{"max_packet_size", "message_size_limit"} {
		b, err := mosquitto.Start(context.Background(), mosquitto.Options{Extra: map[string]string{key: "200"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Stop() })
		s, err := connect(t, refusalSpec(v1alpha1.MQTT5, 256), b.Addr, nil, drivers.Publisher)
		if key == "max_packet_size" {
			wantWords(t, key, err, "Maximum Packet Size is 200 bytes", "a PUBLISH of its 256-byte payload is 273 bytes", "lower spec.workload.payloadBytes to at most 183 bytes", "max_packet_size")
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Publish(make([]byte, 256), true); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = s.Drain(ctx)
		cancel()
		wantWords(t, key, err, "broker refused PUBLISH: packet too large (PUBACK reason code 0x95)", "client refusal-publisher, PUBLISH of 273 bytes to refusal/0", "message_size_limit")
	}
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{Extra: map[string]string{"max_packet_size": "200"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	s, err := connect(t, refusalSpec(v1alpha1.MQTT311, 256), b.Addr, nil, drivers.Publisher)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Publish(make([]byte, 256), true); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a 3.1.1 PUBLISH over max_packet_size: the broker kept the connection")
	}
	wantWords(t, "3.1.1 over max_packet_size", s.Err(), "closed the connection after the publisher's first PUBLISH, before acknowledging any",
		"PUBLISH of 272 bytes", "max_packet_size")
}

// TestTLSMismatch: a TLS client on Mosquitto's plain port and a plain client on its TLS port are
// told which it is and which field to change, not "connection reset by peer".
func TestTLSMismatch(t *testing.T) {
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{TLS: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	clientTLS, err := certs.ClientTLS(b.CA, "127.0.0.1", "1.3")
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []v1alpha1.MQTTVersion{v1alpha1.MQTT311, v1alpha1.MQTT5} {
		_, err = connect(t, refusalSpec(version, 64), b.Addr, clientTLS, drivers.Publisher)
		wantWords(t, "TLS client, plain port", err, "the TLS handshake with "+b.Addr+" got no TLS answer", "the port serves plain MQTT", "set spec.tls.enabled to false")
		_, err = connect(t, refusalSpec(version, 64), b.TLSAddr, nil, drivers.Subscriber)
		wantWords(t, "plain client, TLS port", err, "closed the connection right after a plain-text CONNECT: "+b.TLSAddr+" serves TLS", "set spec.tls.enabled to true")
	}
}

// TestNotMQTT5: RabbitMQ before 3.13 (Debian's rabbitmq-server 3.10) speaks MQTT 3.1.1 only and
// closes an MQTT 5 CONNECT without a CONNACK; the driver says so.
func TestNotMQTT5(t *testing.T) {
	if testing.Short() {
		t.Skip("-short (make test-unit): starts RabbitMQ")
	}
	r, err := rabbitmq.Start(context.Background(), rabbitmq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Stop() })
	var major, minor int
	if _, err := fmt.Sscanf(r.Version, "%d.%d", &major, &minor); err != nil {
		t.Fatalf("RabbitMQ version %q: %v", r.Version, err)
	}
	if major > 3 || major == 3 && minor >= 13 {
		t.Skipf("RabbitMQ %s speaks MQTT 5: this test needs one before 3.13", r.Version)
	}
	_, err = connect(t, refusalSpec(v1alpha1.MQTT5, 64), r.Addr, nil, drivers.Publisher)
	wantWords(t, "MQTT 5 to RabbitMQ "+r.Version, err, "closed the connection right after CONNECT with protocol version 5",
		"it accepts an MQTT 3.1.1 CONNECT on the same port, so it does not speak MQTT 5", `set spec.mqtt.version to "3.1.1"`)
}
