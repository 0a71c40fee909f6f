package kafka_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/loadgen"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/loadgen/drivers/driverstest"
	kafkadriver "github.com/msgbench/msgbench/loadgen/drivers/kafka"
	"github.com/msgbench/msgbench/plan"
)

// TestProducerSettings checks each QoS maps to the producer settings the docs promise, on a
// real client: acks, idempotence, linger, batch limit and compression.
func TestProducerSettings(t *testing.T) {
	cases := []struct {
		qos        int32
		acks       kgo.Acks
		idempotent bool
	}{
		{0, kgo.NoAck(), false},
		{1, kgo.LeaderAck(), false},
		{2, kgo.AllISRAcks(), true},
	}
	for _, c := range cases {
		spec := kafkaSpec("settings-")
		spec.QoS = c.qos
		spec.Kafka.LingerMs, spec.Kafka.BatchBytes, spec.Kafka.Compression = 7, 32768, "zstd"
		opts, err := kafkadriver.ProducerOpts(driverstest.Group(t, spec))
		if err != nil {
			t.Fatal(err)
		}
		cl, err := kgo.NewClient(append(opts, kgo.SeedBrokers(broker.Addr))...)
		if err != nil {
			t.Fatalf("qos %d: %v", c.qos, err)
		}
		if got := cl.OptValue(kgo.RequiredAcks); got != c.acks {
			t.Errorf("qos %d: acks %v, want %v", c.qos, got, c.acks)
		}
		if got := cl.OptValue(kgo.DisableIdempotentWrite).(bool); got == c.idempotent {
			t.Errorf("qos %d: idempotence disabled = %v, want idempotent %v", c.qos, got, c.idempotent)
		}
		if got := cl.OptValue(kgo.MaxProduceRequestsInflightPerBroker).(int); !c.idempotent && got != kafkadriver.MaxInflightRequests {
			t.Errorf("qos %d: %d produce requests in flight, want %d like Java", c.qos, got, kafkadriver.MaxInflightRequests)
		}
		if got := cl.OptValue(kgo.ProducerLinger).(time.Duration); got != 7*time.Millisecond {
			t.Errorf("qos %d: linger %v, want 7ms (spec.kafka.lingerMs)", c.qos, got)
		}
		if got := cl.OptValue(kgo.ProducerBatchCompression).([]kgo.CompressionCodec); len(got) != 1 || got[0] != kgo.ZstdCompression() {
			t.Errorf("qos %d: compression %v, want zstd only", c.qos, got)
		}
		cl.Close()
	}
	// A record larger than batchBytes still goes out (in a batch of its own, as Java does).
	spec := kafkaSpec("settings-")
	spec.Workload.PayloadBytes = 102400
	opts, _ := kafkadriver.ProducerOpts(driverstest.Group(t, spec))
	cl, _ := kgo.NewClient(append(opts, kgo.SeedBrokers(broker.Addr))...)
	defer cl.Close()
	if fn := cl.OptValue(kgo.ProducerBatchMaxBytesFn).(func(string) int32); fn("x") < 102400 {
		t.Errorf("batch limit %d cannot hold a 100 KB record", fn("x"))
	}
	// QoS -1 has no mapping: the plan refuses it, and the driver takes no group without Kafka
	// options.
	bad := kafkaSpec("settings-")
	bad.QoS = -1
	if _, err := plan.Compile(bad, plan.Admitted); err == nil || !strings.Contains(err.Error(), "spec.qos: -1 (publish without a connection) exists only for protocol mqtt-sn") {
		t.Errorf("qos -1: %v", err)
	}
	if _, err := kafkadriver.New(drivers.Config{Group: &plan.Group{Protocol: v1alpha1.ProtocolMQTT, QoS: 1}}); err == nil {
		t.Error("a group without Kafka options accepted")
	}
}

// TestQoSOnTheBroker checks the mapping where the broker sees it: only the idempotent producer
// (qos 2) leaves producer state on the partition; acks=0 produces no acknowledgement at all.
func TestQoSOnTheBroker(t *testing.T) {
	adm := kadm.NewClient(mustClient(t))
	for _, qos := range []int32{0, 1, 2} {
		spec := kafkaSpec(uniquePrefix(t))
		spec.QoS = qos
		spec.Workload.Rate = 500
		res := runBench(t, spec, loadgen.Options{})
		if res.Sent == 0 {
			t.Fatalf("qos %d: nothing sent", qos)
		}
		acks := int64(0)
		if res.Latency.PublishAck != nil {
			acks = res.Latency.PublishAck.Count
		}
		switch {
		case qos == 0 && (res.Acked != 0 || acks != 0):
			t.Errorf("qos 0 (acks=0): %d acknowledgements, want none", res.Acked)
		case qos > 0 && (res.Acked != res.Sent || acks != res.Sent):
			t.Errorf("qos %d: acked %d (histogram %d) of %d", qos, res.Acked, acks, res.Sent)
		}
		topic := spec.Workload.TopicName(0)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		described, err := adm.DescribeProducers(ctx, kadm.TopicsSet{topic: {0: {}}})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		producers := 0
		described.EachProducer(func(kadm.DescribedProducer) { producers++ })
		if want := map[bool]int{true: 1, false: 0}[qos == 2]; producers != want {
			t.Errorf("qos %d: %d idempotent producers on %s, want %d", qos, producers, topic, want)
		}
	}
}

// TestDelivery runs the study's payload sizes and thread counts through the engine: nothing is
// lost at acks ≥ 1, nothing duplicated with idempotence, every publisher's messages arrive in
// order, and the figures add up.
func TestDelivery(t *testing.T) {
	cases := []struct {
		name       string
		qos        int32
		payload    int32
		publishers int32
		rate       int32
		partitions int32
	}{
		{"qos1-1KB-1pub-closed", 1, 1024, 1, 0, 1},
		{"qos1-10KB-2pub-open", 1, 10240, 2, 400, 1},
		{"qos2-100KB-4pub-closed", 2, 102400, 4, 0, 1},
		{"qos2-1KB-8pub-open-3partitions", 2, 1024, 8, 2000, 3},
		{"qos0-1KB-2pub-open", 0, 1024, 2, 1000, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := kafkaSpec(uniquePrefix(t))
			spec.QoS, spec.Workload.PayloadBytes, spec.Kafka.Partitions, spec.Workload.Rate = c.qos, c.payload, c.partitions, c.rate
			// SINETStream's threads: one topic per publisher, each with a subscriber, and a second
			// subscriber on topic 0: every subscriber of a topic must get all of its messages.
			spec.Workload.Publishers, spec.Workload.Subscribers, spec.Workload.Topics = c.publishers, c.publishers+1, c.publishers
			res := runBench(t, spec, loadgen.Options{})
			t.Logf("sent %d received %d expected %d lost %d dups %d ooo %d, %.0f msg/s, e2e p50 %dµs p99 %dµs, %.0f wire bytes/msg",
				res.Sent, res.Received, res.Expected, *res.Lost, *res.Duplicates, *res.OutOfOrder, res.Throughput.ReceivedPerSecond,
				res.Latency.EndToEnd.P50Micros, res.Latency.EndToEnd.P99Micros, *res.Wire.PublishBytesPerMessage)
			if res.Sent == 0 || res.Received == 0 {
				t.Fatalf("nothing moved: %+v", res)
			}
			if res.Expected <= res.Sent || res.Expected >= 2*res.Sent+1 && c.publishers > 1 {
				t.Errorf("expected %d deliveries for %d sent: topic 0 has two subscribers, the others one", res.Expected, res.Sent)
			}
			if c.qos > 0 && *res.Lost != 0 {
				t.Errorf("lost %d at acks ≥ 1", *res.Lost)
			}
			if c.qos == 2 && *res.Duplicates != 0 {
				t.Errorf("%d duplicates with the idempotent producer", *res.Duplicates)
			}
			if *res.OutOfOrder != 0 {
				t.Errorf("%d out of order: a publisher's messages must stay in one partition, in order", *res.OutOfOrder)
			}
			if res.Latency.EndToEnd == nil || res.Latency.EndToEnd.Count != res.Received-*res.Duplicates {
				t.Errorf("end-to-end histogram %+v, received %d", res.Latency.EndToEnd, res.Received)
			}
			// A publisher writes at least the payload per message (plus Kafka's record framing).
			if got := *res.Wire.PublishBytesPerMessage; got < float64(c.payload) || got > float64(c.payload)+1000 {
				t.Errorf("%.1f bytes per message on the publishers' sockets for a %d-byte payload", got, c.payload)
			}
			if res.Resources.BrokerCPUSeconds == nil || *res.Resources.BrokerCPUSeconds <= 0 {
				t.Error("broker CPU not reported")
			}
		})
	}
}

// TestSubscribeIsPositioned: a record produced the moment Subscribe returned is delivered,
// and one produced before it is not (the subscriber starts at the end it read).
func TestSubscribeIsPositioned(t *testing.T) {
	spec := kafkaSpec(uniquePrefix(t))
	topic := spec.Workload.TopicName(0)
	drv, err := kafkadriver.New(drivers.Config{Group: driverstest.Group(t, spec), Address: broker.Addr, Now: func() int64 { return time.Now().UnixNano() }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	prod := mustClient(t)
	// The topic exists and holds an old record before the subscriber subscribes.
	if _, err := kadm.NewClient(prod).CreateTopic(ctx, 2, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	produce(t, prod, topic, "before")
	got := make(chan string, 10)
	sess, err := drv.Connect(ctx, drivers.Client{ID: "sub", Role: drivers.Subscriber, Topic: topic}, handler{got})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if err := sess.Subscribe(ctx); err != nil {
		t.Fatal(err)
	}
	produce(t, prod, topic, "after")
	select {
	case v := <-got:
		if v != "after" {
			t.Fatalf("first delivery %q, want the record produced after Subscribe", v)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the record produced right after Subscribe returned never arrived")
	}
	if sess.ConnectBytes() <= 0 || sess.Counters().BytesReceived <= sess.ConnectBytes() {
		t.Errorf("connect bytes %d, counters %+v: the fetch must have been counted", sess.ConnectBytes(), sess.Counters())
	}
}

// TestTLS runs a benchmark over the SSL listener with TLS 1.3 and 1.2: everything arrives, and
// the counted bytes are those below TLS (more than the same run in the clear). The rate is low
// so that each record goes in a request of its own in both runs, and each TLS record adds its
// overhead to every message.
func TestTLS(t *testing.T) {
	plainSpec := kafkaSpec(uniquePrefix(t))
	plainSpec.Workload.Rate = 50
	plain := runBench(t, plainSpec, loadgen.Options{})
	for _, version := range []string{"1.3", "1.2"} {
		spec := kafkaSpec(uniquePrefix(t) + version + "-")
		spec.Workload.Rate = 50
		spec.TLS = &v1alpha1.TLSSpec{Enabled: true, Version: v1alpha1.TLSVersion(version)}
		cfg, err := certs.ClientTLS(broker.CA, "127.0.0.1", version)
		if err != nil {
			t.Fatal(err)
		}
		res := runBench(t, spec, loadgen.Options{Address: broker.TLSAddr, TLS: cfg})
		if *res.Lost != 0 || res.Received == 0 {
			t.Errorf("TLS %s: received %d, lost %d", version, res.Received, *res.Lost)
		}
		if *res.Wire.ConnectBytes <= *plain.Wire.ConnectBytes+500 {
			t.Errorf("TLS %s: %.0f connect bytes, plain %.0f: the handshake must be counted", version, *res.Wire.ConnectBytes, *plain.Wire.ConnectBytes)
		}
		if *res.Wire.PublishBytesPerMessage <= *plain.Wire.PublishBytesPerMessage {
			t.Errorf("TLS %s: %.1f bytes per message, plain %.1f: TLS records must be counted", version, *res.Wire.PublishBytesPerMessage, *plain.Wire.PublishBytesPerMessage)
		}
	}
}

type handler struct{ got chan string }

func (h handler) Message(p []byte)      { h.got <- string(p) }
func (h handler) Completed(int64, bool) {}

func mustClient(t testing.TB) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker.Addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func produce(t testing.TB, cl *kgo.Client, topic, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(value)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}
