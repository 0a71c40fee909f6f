package plan

import (
	"errors"
	"fmt"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/devicetls"
	sn "github.com/msgbench/msgbench/internal/mqttsn"
)

// The options below are a group's typed share of the spec, defaulted and checked once: what the
// load generator's drivers (and the gateways) read instead of the spec. A group carries the
// options of its own protocol only (the others are nil), so that a run of several groups of
// different protocols gives each driver its own.

// TLSOptions are the clients' TLS settings beyond the *tls.Config the runner builds.
type TLSOptions struct {
	// Enabled is spec.tls.enabled: TCP connections are encrypted (QUIC always is).
	Enabled bool
	// Resumption gives each client its own session cache, so a reconnecting client resumes its
	// own TLS session: spec.tls.resumption, or spec.quic.zeroRTT (0-RTT needs a ticket).
	Resumption bool
}

// MQTTOptions are an MQTT group's (protocol mqtt or mqtt-quic) client settings (spec.mqtt).
type MQTTOptions struct {
	// Version is spec.mqtt.version, 3.1.1 when unset.
	Version v1alpha1.MQTTVersion
	// CleanSession is spec.mqtt.cleanSession (true when unset).
	CleanSession bool
	// KeepAlive is spec.mqtt.keepAliveSeconds (60 s when unset; 0 turns it off).
	KeepAlive time.Duration
	// Inflight is spec.mqtt.inflight: the most QoS 1/2 publishes a client keeps unacknowledged.
	Inflight int
	// WebSocket is spec.mqtt.transport websocket: MQTT over WebSocket at WebSocketPath.
	WebSocket bool
	// WebSocketPath is spec.mqtt.webSocketPath, /mqtt when unset.
	WebSocketPath string
}

// MQTTSNOptions are an MQTT-SN group's client settings (spec.mqttsn, and spec.mqtt's session
// settings).
type MQTTSNOptions struct {
	// RetryInterval is spec.mqttsn.retryInterval (T_retry), 10 s when unset.
	RetryInterval time.Duration
	// MaxRetries is spec.mqttsn.maxRetries (N_retry), 5 when unset.
	MaxRetries int
	// TopicIDType is spec.mqttsn.topicIdType (normal when unset).
	TopicIDType sn.TopicIDType
	// KeepAlive is spec.mqtt.keepAliveSeconds (60 s when unset; 0 turns it off).
	KeepAlive time.Duration
	// CleanSession is spec.mqtt.cleanSession (true when unset).
	CleanSession bool
}

// HTTPOptions are an HTTP group's client settings (spec.http).
type HTTPOptions struct {
	// Version is spec.http.version, 1.1 when unset.
	Version v1alpha1.HTTPVersion
	// KeepAlive is spec.http.keepAlive (true when unset): one connection per client, else one
	// per message.
	KeepAlive bool
	// Window is how many POSTs a publisher keeps in flight at once over HTTP/2 and HTTP/3, at
	// least 1. It comes from spec.mqtt.inflight today, the window every msgbench protocol uses.
	Window int
}

// QUICOptions are the settings of a group whose clients talk over QUIC (Group.QUIC: mqtt-quic,
// HTTP/3).
type QUICOptions struct {
	// ZeroRTT is spec.quic.zeroRTT: a client that holds a session ticket sends its first request
	// (mqtt-quic: CONNECT; HTTP/3: a subscriber's GET) in 0-RTT.
	ZeroRTT bool
}

// KafkaAcks is the producer's acks setting, from spec.qos.
type KafkaAcks int8

// The acks spec.qos maps to: 0 acks=0, 1 acks=1, 2 acks=all with the idempotent producer.
const (
	AcksNone   KafkaAcks = 0
	AcksLeader KafkaAcks = 1
	AcksAll    KafkaAcks = -1
)

// KafkaOptions are a Kafka group's producer, consumer and topic settings (spec.kafka).
type KafkaOptions struct {
	// Acks is spec.qos mapped: 0 acks=0, 1 acks=1, 2 acks=all.
	Acks KafkaAcks
	// Idempotent is the idempotent producer (spec.qos 2): a retried batch never duplicates.
	Idempotent bool
	// Compression is spec.kafka.compression, none when unset.
	Compression v1alpha1.KafkaCompression
	// Linger is spec.kafka.lingerMs.
	Linger time.Duration
	// BatchBytes is spec.kafka.batchBytes as written (the driver grows it to hold a record).
	BatchBytes int32
	// Partitions and Replicas are spec.kafka.partitions and replicas, for the topics the load
	// generator creates.
	Partitions, Replicas int32
	// Window is how many records a publisher keeps produced but not yet finished, at least 1:
	// spec.mqtt.inflight, the window every msgbench protocol uses.
	Window int
}

// TopicName is the name of the group's topic t (0-based): its prefix followed by t, as
// spec.workload.topicPrefix names them.
func (g *Group) TopicName(t int) string {
	w := v1alpha1.WorkloadSpec{TopicPrefix: g.TopicPrefix}
	return w.TopicName(t)
}

// PersistentSession reports whether the group's clients keep their session on the broker across
// connections, so that a reconnecting subscriber gets what was queued meanwhile: an MQTT family
// protocol without a clean session, at QoS 1 or 2.
func (g *Group) PersistentSession() bool {
	if g.QoS < 1 {
		return false
	}
	switch {
	case g.MQTT != nil:
		return !g.MQTT.CleanSession
	case g.MQTTSN != nil:
		return !g.MQTTSN.CleanSession
	}
	return false
}

// compileOptions fills g's options from spec, defaulted, and refuses what the group's driver
// cannot run: the rules beyond the CRD's schema and CEL (a Go client's spec skips both) that each
// driver checked on its own before. Errors name the spec field.
func compileOptions(spec *v1alpha1.MessagingBenchmarkSpec, g *Group) error {
	g.PayloadBytes = spec.Workload.PayloadBytes
	g.TopicPrefix = spec.Workload.TopicPrefix
	g.TLS = TLSOptions{Enabled: spec.TLSEnabled(), Resumption: devicetls.Resumption(spec)}
	if g.QUIC() {
		g.QUICTransport = &QUICOptions{ZeroRTT: devicetls.ZeroRTT(spec)}
	}
	keepAlive := time.Duration(spec.MQTT.KeepAliveSecondsOrDefault()) * time.Second
	window := max(1, int(spec.MQTT.Inflight))
	switch g.Protocol {
	case v1alpha1.ProtocolMQTT, v1alpha1.ProtocolMQTTQUIC:
		if g.QoS < 0 || g.QoS > 2 {
			return fmt.Errorf("spec.qos: %d is not an MQTT QoS", g.QoS)
		}
		g.MQTT = &MQTTOptions{Version: v1alpha1.MQTT311, CleanSession: spec.MQTT.CleanSessionOrDefault(), KeepAlive: keepAlive,
			Inflight: int(spec.MQTT.Inflight), WebSocket: spec.MQTT.WebSocket(), WebSocketPath: spec.MQTT.WebSocketPathOrDefault()}
		if spec.MQTT.Version == v1alpha1.MQTT5 {
			g.MQTT.Version = v1alpha1.MQTT5
		}
	case v1alpha1.ProtocolMQTTSN:
		if g.QoS < -1 || g.QoS > 2 {
			return fmt.Errorf("spec.qos: %d is not an MQTT-SN QoS (-1..2)", g.QoS)
		}
		o := &MQTTSNOptions{RetryInterval: spec.MQTTSN.RetryInterval.Duration, MaxRetries: int(spec.MQTTSN.MaxRetriesOrDefault()),
			KeepAlive: keepAlive, CleanSession: spec.MQTT.CleanSessionOrDefault()}
		switch spec.MQTTSN.TopicIDType {
		case v1alpha1.TopicIDNormal, "":
			o.TopicIDType = sn.TopicNormal
		case v1alpha1.TopicIDPredefined:
			o.TopicIDType = sn.TopicPredefined
		case v1alpha1.TopicIDShort:
			o.TopicIDType = sn.TopicShort
		default:
			return fmt.Errorf("spec.mqttsn.topicIdType: %q is not normal, predefined or short", spec.MQTTSN.TopicIDType)
		}
		if g.QoS == -1 && o.TopicIDType == sn.TopicNormal {
			return errors.New("spec.mqttsn.topicIdType: QoS -1 publishes without a connection, so it needs predefined or short topic ids, not normal")
		}
		if o.RetryInterval <= 0 {
			o.RetryInterval = 10 * time.Second
		}
		if limit := int32(sn.MaxUDPPayload - sn.PublishOverhead); g.PayloadBytes > limit {
			return fmt.Errorf("spec.workload.payloadBytes: %d exceeds the %d bytes an MQTT-SN PUBLISH carries over UDP", g.PayloadBytes, limit)
		}
		g.MQTTSN = o
	case v1alpha1.ProtocolHTTP:
		if g.QoS < 0 || g.QoS > 2 {
			return fmt.Errorf("spec.qos: %d is not a QoS the HTTP gateway knows (0, 1 or 2)", g.QoS)
		}
		g.HTTP = &HTTPOptions{Version: v1alpha1.HTTP11, KeepAlive: spec.HTTP.KeepAliveOrDefault(), Window: window}
		if spec.HTTP.Version != "" {
			g.HTTP.Version = spec.HTTP.Version
		}
	case v1alpha1.ProtocolKafka:
		k := spec.Kafka
		o := &KafkaOptions{Compression: k.Compression, Linger: time.Duration(k.LingerMs) * time.Millisecond,
			BatchBytes: k.BatchBytes, Partitions: k.Partitions, Replicas: k.Replicas, Window: window}
		switch spec.QoS {
		case 0:
			o.Acks = AcksNone
		case 1:
			o.Acks = AcksLeader
		case 2:
			o.Acks, o.Idempotent = AcksAll, true
		default:
			return fmt.Errorf("spec.qos: %d has no Kafka mapping (0: acks=0, 1: acks=1, 2: acks=all with idempotence)", g.QoS)
		}
		switch o.Compression {
		case "":
			o.Compression = "none"
		case "none", "gzip", "snappy", "lz4", "zstd":
		default:
			return fmt.Errorf("spec.kafka.compression: %q is not none, gzip, snappy, lz4 or zstd", o.Compression)
		}
		g.Kafka = o
	}
	return nil
}
