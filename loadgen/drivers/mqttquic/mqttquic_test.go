package mqttquic_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/gateway"
	_ "github.com/msgbench/msgbench/gateway/quic"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/certs/certstest"
	"github.com/msgbench/msgbench/loadgen"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/loadgen/drivers/driverstest"
	"github.com/msgbench/msgbench/loadgen/drivers/mqttquic"
	"github.com/msgbench/msgbench/plan"
)

func spec(qos int32) *v1alpha1.MessagingBenchmarkSpec {
	return &v1alpha1.MessagingBenchmarkSpec{
		Protocol: v1alpha1.ProtocolMQTTQUIC,
		QoS:      qos,
		MQTT:     v1alpha1.MQTTSpec{Version: v1alpha1.MQTT311, Inflight: 20},
		Workers:  v1alpha1.WorkersSpec{Replicas: 1},
		Workload: v1alpha1.WorkloadSpec{
			Publishers: 2, Subscribers: 2, Topics: 2, TopicPrefix: "mq-", PayloadBytes: 256, Rate: 400,
			Duration: metav1.Duration{Duration: time.Second}, Warmup: metav1.Duration{Duration: 200 * time.Millisecond},
			TimelineInterval: metav1.Duration{Duration: 100 * time.Millisecond},
		},
	}
}

// gatewayGroups are the groups of s's compiled plan that the gateway of mode serves.
func gatewayGroups(t testing.TB, s *v1alpha1.MessagingBenchmarkSpec, mode string) []plan.Group {
	t.Helper()
	p, err := plan.Compile(s, plan.Admitted)
	if err != nil {
		t.Fatal(err)
	}
	return p.GatewayGroups(mode)
}

// setup starts Mosquitto and the QUIC gateway in front of it and returns the gateway's address
// and the client TLS configuration that trusts it.
func setup(t *testing.T) (string, *certs.Bundle) {
	t.Helper()
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{MaxInflight: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	bundle, srv := certstest.Loopback(t)
	gw, err := gateway.Start(context.Background(), "quic", gateway.Options{Listen: "127.0.0.1:0", Broker: b.Addr, TLS: srv, Groups: gatewayGroups(t, spec(1), "quic")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Close() })
	return gw.Addr().String(), bundle
}

func TestDeliveryByQoS(t *testing.T) {
	addr, bundle := setup(t)
	for _, qos := range []int32{0, 1, 2} {
		s := spec(qos)
		tlsConf, err := certs.ClientTLS(bundle.CACert, "127.0.0.1", "1.3")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		res, err := loadgen.Run(ctx, loadgen.Options{Name: "mqtt-quic", Spec: s, Address: addr, TLS: tlsConf})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("qos %d: phase %s sent %d received %d lost %d dups %d datagrams %v/%v bytes %d/%d, connect p50 %d µs", qos, res.Phase, res.Sent, res.Received,
			*res.Lost, *res.Duplicates, res.Wire.DatagramsSent, res.Wire.DatagramsReceived, res.Wire.BytesSent, res.Wire.BytesReceived, res.Latency.Connect.P50Micros)
		if res.Phase != "Succeeded" || res.Sent < 350 {
			t.Fatalf("qos %d: phase %s, sent %d: %s", qos, res.Phase, res.Sent, res.Message)
		}
		if qos > 0 && (*res.Lost != 0 || res.Acked != res.Sent) {
			t.Errorf("qos %d: lost %d, acked %d of %d", qos, *res.Lost, res.Acked, res.Sent)
		}
		if qos == 2 && *res.Duplicates != 0 {
			t.Errorf("qos 2: %d duplicates", *res.Duplicates)
		}
		// Wire figures are UDP datagrams below QUIC (several messages may share one): both
		// directions counted, each datagram a plausible QUIC packet (20 bytes to one MTU).
		if res.Wire.DatagramsSent == nil || *res.Wire.DatagramsSent == 0 || *res.Wire.DatagramsReceived == 0 {
			t.Fatalf("qos %d: datagrams %v/%v", qos, res.Wire.DatagramsSent, res.Wire.DatagramsReceived)
		}
		for dir, per := range map[string]int64{"sent": res.Wire.BytesSent / *res.Wire.DatagramsSent, "received": res.Wire.BytesReceived / *res.Wire.DatagramsReceived} {
			if per < 20 || per > 1500 {
				t.Errorf("qos %d: %d bytes per datagram %s", qos, per, dir)
			}
		}
		// A 256-byte payload is encrypted in QUIC packets: each message costs more than the payload.
		if res.Wire.BytesSent < res.Sent*256 {
			t.Errorf("qos %d: %d bytes sent for %d messages of 256 bytes", qos, res.Wire.BytesSent, res.Sent)
		}
	}
}

// TestZeroRTT: a client's second connection resumes with its session ticket and its CONNECT
// rides in 0-RTT packets; the gateway accepts it and the session works. Another client (another
// device) has no ticket of its own: its first connection takes the full handshake.
func TestZeroRTT(t *testing.T) {
	addr, bundle := setup(t)
	tlsConf, err := certs.ClientTLS(bundle.CACert, "127.0.0.1", "1.3")
	if err != nil {
		t.Fatal(err)
	}
	tr := mqttquic.Transport(drivers.Config{Group: driverstest.Group(t, spec(1)), Address: addr, TLS: tlsConf}, mqttquic.Options{ZeroRTT: true})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i, step := range []struct {
		client string
		want   bool
	}{{"z", false}, {"z", true}, {"y", false}} {
		want := step.want
		nc, _, err := tr(ctx, drivers.Client{ID: step.client})
		if err != nil {
			t.Fatal(err)
		}
		// CONNECT (MQTT 3.1.1, clean session, client id "z") and wait for CONNACK.
		if _, err := nc.Write([]byte{0x10, 13, 0, 4, 'M', 'Q', 'T', 'T', 4, 2, 0, 60, 0, 1, 'z'}); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4)
		if err := nc.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, err := nc.Read(buf); err != nil || buf[0] != 0x20 || buf[3] != 0 {
			t.Fatalf("connection %d: CONNACK % x, %v", i, buf, err)
		}
		used := nc.(interface{ Used0RTT() bool }).Used0RTT()
		if used != want {
			t.Errorf("connection %d: used 0-RTT %v, want %v", i, used, want)
		}
		_ = nc.Close()
		time.Sleep(50 * time.Millisecond) // the session ticket arrives after the handshake
	}
}
