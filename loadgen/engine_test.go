package loadgen_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/loadgen"
	_ "github.com/msgbench/msgbench/loadgen/drivers/mqtt"
	"github.com/msgbench/msgbench/results"
)

// baseSpec is a defaulted spec, as the API server (or manifest.Load) would produce it.
func baseSpec() *v1alpha1.MessagingBenchmarkSpec {
	return &v1alpha1.MessagingBenchmarkSpec{
		Protocol: v1alpha1.ProtocolMQTT,
		QoS:      1,
		MQTT:     v1alpha1.MQTTSpec{Version: v1alpha1.MQTT311, CleanSession: true, KeepAliveSeconds: 60, Inflight: 20},
		Broker:   v1alpha1.BrokerSpec{Type: v1alpha1.BrokerMosquitto},
		Workers:  v1alpha1.WorkersSpec{Replicas: 1},
		Workload: v1alpha1.WorkloadSpec{
			Publishers: 2, Subscribers: 2, Topics: 2, TopicPrefix: "msgbench-", PayloadBytes: 64,
			Duration: metav1.Duration{Duration: 2 * time.Second}, Warmup: metav1.Duration{Duration: 500 * time.Millisecond},
			TimelineInterval: metav1.Duration{Duration: 100 * time.Millisecond},
		},
	}
}

func startMosquitto(t testing.TB, tlsVersion string) *mosquitto.Process {
	t.Helper()
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{TLS: tlsVersion != "", TLSVersion: tlsVersion, MaxInflight: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	return b
}

func run(t testing.TB, spec *v1alpha1.MessagingBenchmarkSpec, o loadgen.Options) *results.Result {
	t.Helper()
	o.Spec, o.Name = spec, "test"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
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

func TestQoS1And2DeliverEverything(t *testing.T) {
	b := startMosquitto(t, "")
	for _, qos := range []int32{1, 2} {
		for _, rate := range []int32{0, 400} {
			spec := baseSpec()
			spec.QoS = qos
			spec.Workload.Rate = rate
			res := run(t, spec, loadgen.Options{Address: b.Addr, BrokerUsage: nil})
			t.Logf("qos %d rate %d: sent %d received %d expected %d lost %d dups %d e2e p99 %v", qos, rate, res.Sent, res.Received, res.Expected, *res.Lost, *res.Duplicates, res.Latency.EndToEnd)
			if res.Sent == 0 || res.Received == 0 {
				t.Fatalf("nothing moved: %+v", res)
			}
			if *res.Lost != 0 {
				t.Errorf("qos %d rate %d lost %d", qos, rate, *res.Lost)
			}
			if qos == 2 && *res.Duplicates != 0 {
				t.Errorf("qos 2 duplicates %d", *res.Duplicates)
			}
			if res.Expected != res.Sent { // one subscriber per topic
				t.Errorf("expected %d, sent %d", res.Expected, res.Sent)
			}
			var tlSent, tlRecv int64
			for _, p := range res.Timeline {
				tlSent += p.Sent
				tlRecv += p.Received
			}
			if tlSent != res.Sent || tlRecv != res.Received {
				t.Errorf("timeline sums %d/%d, totals %d/%d", tlSent, tlRecv, res.Sent, res.Received)
			}
			if res.Acked != res.Sent {
				t.Errorf("acked %d of %d", res.Acked, res.Sent)
			}
		}
	}
}
