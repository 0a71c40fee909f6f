package localrun

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
)

// TestBrokerWithoutTheGroupIsRefused: the local Mosquitto links OpenSSL 3.0, which has no ML-KEM,
// so groups [x25519mlkem768] alone cannot shake hands with it: the run is refused naming spec.tls
// before any client starts, and the same run with a group it supports succeeds.
func TestBrokerWithoutTheGroupIsRefused(t *testing.T) {
	if _, err := mosquitto.Binary(); err != nil {
		t.Skip(err)
	}
	mb := &v1alpha1.MessagingBenchmark{ObjectMeta: metav1.ObjectMeta{Name: "device-tls"}, Spec: v1alpha1.MessagingBenchmarkSpec{
		Protocol: v1alpha1.ProtocolMQTT, QoS: 1, Broker: v1alpha1.BrokerSpec{Type: v1alpha1.BrokerMosquitto},
		MQTT:    v1alpha1.MQTTSpec{Version: v1alpha1.MQTT311, Inflight: 10},
		Workers: v1alpha1.WorkersSpec{Replicas: 1},
		TLS:     &v1alpha1.TLSSpec{Enabled: true, Version: v1alpha1.TLS13, Groups: []v1alpha1.TLSGroup{v1alpha1.GroupX25519MLKEM768}},
		Workload: v1alpha1.WorkloadSpec{Publishers: 1, Subscribers: 1, Topics: 1, TopicPrefix: "dt-", PayloadBytes: 32, Rate: 20,
			Duration: metav1.Duration{Duration: time.Second}, Warmup: metav1.Duration{Duration: 200 * time.Millisecond},
			TimelineInterval: metav1.Duration{Duration: 100 * time.Millisecond}},
	}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Run(ctx, mb, Options{NoEmbedded: true})
	if err == nil || !strings.Contains(err.Error(), "spec.tls: mosquitto") || !strings.Contains(err.Error(), "x25519mlkem768") {
		t.Fatalf("got %v (result %v); want the handshake refused naming spec.tls and the group", err, res != nil)
	}
	t.Log(err)
	mb.Spec.TLS.Groups = []v1alpha1.TLSGroup{v1alpha1.GroupX25519MLKEM768, v1alpha1.GroupX25519}
	if res, err = Run(ctx, mb, Options{NoEmbedded: true}); err != nil || res.Phase != "Succeeded" || res.Environment.TLSGroup != "X25519" {
		t.Fatalf("with x25519 as well: %v %+v", err, res)
	}
}
