// Package kafka is the load generator's Kafka driver, on franz-go (github.com/twmb/franz-go), a
// pure-Go client chosen by measurement (docs/benchmarks-kafka.md).
//
// Every msgbench client is one franz-go client with its own connections. Publishers produce
// keyed by their client id, so one publisher's messages land in one partition and stay in order;
// QoS 0, 1 and 2 map to acks=0, acks=1 and acks=all with the idempotent producer. Subscribers
// consume their topic's partitions directly (no consumer group), each from the end offsets it
// read when it subscribed, so every subscriber sees every message published after it was ready.
// The payload is msgbench's own, header included, so delivery and end-to-end latency are
// measured exactly as for MQTT.
package kafka

import (
	"context"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/plan"
)

func init() {
	drivers.Register(string(v1alpha1.ProtocolKafka), New)
}

// BufferedBytes also bounds the bytes a publisher keeps produced but not yet acknowledged: the
// Java producer's default buffer.memory.
const BufferedBytes = 32 << 20

// MaxInflightRequests is how many produce requests a publisher keeps in flight per broker: the
// Java producer's default, and the most the idempotent producer allows.
const MaxInflightRequests = 5

// recordOverhead is room for a record's framing, key and batch header when sizing batches.
const recordOverhead = 512

type driver struct {
	drivers.TLSSeen // the handshake of the clients' TLS connections
	cfg             drivers.Config
	o               *plan.KafkaOptions
	payloadBytes    int32
	clientTLS       *drivers.ClientTLS // each client's own session cache with spec.tls.resumption
	// ensured remembers the topics this worker has created or found, so a topic is set up once.
	ensured sync.Map // topic → struct{}
}

// New returns the Kafka driver for cfg.Group (its Kafka options; plan.Compile checked its QoS
// mapping and compression).
func New(cfg drivers.Config) (drivers.Driver, error) {
	g := cfg.Group
	if g == nil || g.Kafka == nil {
		return nil, drivers.NoOptions(cfg, string(v1alpha1.ProtocolKafka))
	}
	return &driver{cfg: cfg, o: g.Kafka, payloadBytes: g.PayloadBytes, clientTLS: drivers.NewClientTLS(cfg.TLS, cfg)}, nil
}

// commonOpts are the options of every client: seed broker, client id, counted dialer.
func (d *driver) commonOpts(c drivers.Client, cs *conns) []kgo.Opt {
	return []kgo.Opt{
		kgo.SeedBrokers(d.cfg.Address),
		kgo.ClientID(c.ID),
		kgo.Dialer(cs.dialer(drivers.ForClient(d.cfg.Dialer(), c.ID), d.clientTLS.For(c.ID), d.Note)),
		// franz-go never asks the broker to auto-create topics (it would use the broker's own
		// partition count): topics come from ensureTopic or from Strimzi's KafkaTopics.
	}
}

// ProducerOpts maps a group's settings to franz-go producer options: acks and idempotence (from
// spec.qos), linger, batch size and compression (from spec.kafka), and flow control.
//
// Flow control is the options' Window (spec.mqtt.inflight, the window every msgbench protocol
// uses): a publisher keeps at most that many records produced but not yet finished
// (acknowledged; written, at acks=0), and at most BufferedBytes; Publish blocks beyond. In the closed loop (workload.rate 0) this is
// how hard a publisher pushes, and so how many records a batch can gather: raise it (up to
// 65535) for throughput runs. An unbounded buffer would turn the closed loop into a queue that
// grows for the whole warm-up and drains into the measured window.
func ProducerOpts(g *plan.Group) ([]kgo.Opt, error) {
	if g == nil || g.Kafka == nil {
		return nil, drivers.NoOptions(drivers.Config{Group: g}, string(v1alpha1.ProtocolKafka))
	}
	k := g.Kafka
	codec, err := compression(k.Compression)
	if err != nil {
		return nil, err
	}
	// franz-go refuses a record larger than the batch limit, while Java's batch.size only says
	// when a batch is full (a larger record goes in a batch of its own); the limit therefore
	// grows to hold one record.
	batch := max(k.BatchBytes, g.PayloadBytes+recordOverhead, 512)
	opts := []kgo.Opt{
		kgo.ProducerLinger(k.Linger),
		kgo.ProducerBatchMaxBytes(batch),
		kgo.ProducerBatchCompression(codec),
		kgo.MaxBufferedBytes(max(BufferedBytes, int(batch))),
		kgo.MaxBufferedRecords(k.Window),
	}
	// Without idempotence franz-go keeps one produce request in flight per broker unless told
	// otherwise; the Java producer keeps 5 (max.in.flight.requests.per.connection), and so does
	// msgbench. A retried request may then land after a later one: outOfOrder would show it.
	nonIdempotent := []kgo.Opt{kgo.DisableIdempotentWrite(), kgo.MaxProduceRequestsInflightPerBroker(MaxInflightRequests)}
	switch {
	case k.Acks == plan.AcksNone:
		opts = append(append(opts, kgo.RequiredAcks(kgo.NoAck())), nonIdempotent...)
	case k.Acks == plan.AcksLeader:
		opts = append(append(opts, kgo.RequiredAcks(kgo.LeaderAck())), nonIdempotent...)
	case k.Acks == plan.AcksAll && k.Idempotent:
		// Idempotence is franz-go's default with acks=all: the broker drops a retried batch it
		// already has, so retries never duplicate.
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	default:
		return nil, fmt.Errorf("kafka: acks %d (idempotent %v) is none of spec.qos's mappings", k.Acks, k.Idempotent)
	}
	return opts, nil
}

func compression(c v1alpha1.KafkaCompression) (kgo.CompressionCodec, error) {
	switch c {
	case "", "none":
		// franz-go's default is snappy; the benchmark asks for none.
		return kgo.NoCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	}
	return kgo.NoCompression(), fmt.Errorf("spec.kafka.compression: %q is not none, gzip, snappy, lz4 or zstd", c)
}

// Connect opens a client and returns once it is usable: the bootstrap broker answered a
// metadata request (TCP, TLS, ApiVersions, Metadata) and, for a publisher, a produce
// connection to every broker is open. A topic's partition leaders are looked up with the first
// produce, as the Java producer does.
func (d *driver) Connect(ctx context.Context, c drivers.Client, h drivers.Handler) (drivers.Session, error) {
	cs := newConns()
	opts := d.commonOpts(c, cs)
	sopts, err := d.saslOpts(c)
	if err != nil {
		return nil, err
	}
	opts = append(opts, sopts...)
	if c.Role == drivers.Publisher {
		popts, err := ProducerOpts(d.cfg.Group)
		if err != nil {
			return nil, err
		}
		opts = append(opts, popts...)
	} else {
		opts = append(opts, consumerOpts(d.payloadBytes)...)
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka client %s: %w", c.ID, err)
	}
	if err := cl.Ping(ctx); err != nil {
		cl.Close()
		return nil, fmt.Errorf("kafka %s: bootstrap %s: %w", c.ID, d.cfg.Address, d.refused(c, err))
	}
	if c.Role == drivers.Subscriber {
		return newSubscriber(d, cl, cs, c, h), nil
	}
	// A run without subscribers still needs its topics with spec.kafka.partitions.
	if err := d.ensureTopic(ctx, cl, c.Topic); err != nil {
		cl.Close()
		return nil, d.refused(c, err)
	}
	if err := cl.EnsureProduceConnectionIsOpen(ctx); err != nil {
		cl.Close()
		return nil, fmt.Errorf("kafka %s: open produce connections: %w", c.ID, d.refused(c, err))
	}
	return newPublisher(d, cl, cs, c, h), nil
}
