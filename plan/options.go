package plan

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
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
	// Offer is the groups and TLS 1.2 suites the clients offer (spec.tls.groups, cipherSuites).
	Offer devicetls.Offer
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
	// Predefined is spec.mqttsn.predefinedTopicIds, topic name to id; nil: topic i has id i+1.
	Predefined map[string]uint16
	// SourcePort is spec.mqttsn.sourcePort: client i sends from SourcePort + i (ClientPort); 0:
	// ports the system chooses.
	SourcePort int
	// Discovery is spec.mqttsn.discovery: each client searches for its gateway before CONNECT;
	// nil: the clients are given the gateway's address.
	Discovery *MQTTSNDiscovery
}

// MQTTSNDiscovery is spec.mqttsn.discovery, checked and defaulted: how a client finds its
// gateway with SEARCHGW and GWINFO (MQTT-SN 1.2 §6.1).
type MQTTSNDiscovery struct {
	// Address is where SEARCHGW goes, host:port, or an IP address alone (the gateway's port);
	// "": the gateway's address.
	Address string
	// Radius is SEARCHGW's Radius field.
	Radius uint8
	// Interval is T_SEARCHGW: the first wait for GWINFO before SEARCHGW is sent again, doubled
	// at each retransmission (5 s when unset).
	Interval time.Duration
	// Timeout bounds the search (30 s when unset).
	Timeout time.Duration
}

// Defaults of spec.mqttsn.discovery (MQTT-SN 1.2's T_SEARCHGW is 5 s).
const (
	DefaultSearchRadius   = 1
	DefaultSearchInterval = 5 * time.Second
	DefaultSearchTimeout  = 30 * time.Second
)

// SearchAddress is where a client whose gateway is at gateway (host:port) sends SEARCHGW:
// Address, with gateway's port when Address has none; gateway when Address is "".
func (d *MQTTSNDiscovery) SearchAddress(gateway string) (string, error) {
	if d.Address == "" {
		return gateway, nil
	}
	if hasPort(d.Address) {
		return d.Address, nil
	}
	_, port, err := net.SplitHostPort(gateway)
	if err != nil {
		return "", fmt.Errorf("spec.mqttsn.discovery.address %s has no port and the gateway's address %q none either: %w", d.Address, gateway, err)
	}
	return net.JoinHostPort(strings.Trim(d.Address, "[]"), port), nil
}

// hasPort reports whether a is host:port rather than a host or an IP address alone (an IPv6
// address without brackets has colons and no port).
func hasPort(a string) bool {
	if _, err := netip.ParseAddr(strings.Trim(a, "[]")); err == nil {
		return false
	}
	return strings.Contains(a, ":")
}

// compileDiscovery checks spec.mqttsn.discovery and fills in its defaults.
func compileDiscovery(ds *v1alpha1.MQTTSNDiscoverySpec) (*MQTTSNDiscovery, error) {
	d := &MQTTSNDiscovery{Address: ds.Address, Radius: DefaultSearchRadius, Interval: ds.Interval.Duration, Timeout: ds.Timeout.Duration}
	if ds.Radius != nil {
		if *ds.Radius < 0 || *ds.Radius > 255 {
			return nil, fmt.Errorf("spec.mqttsn.discovery.radius: %d is not a SEARCHGW radius (0 to 255)", *ds.Radius)
		}
		d.Radius = uint8(*ds.Radius)
	}
	if d.Interval < 0 {
		return nil, fmt.Errorf("spec.mqttsn.discovery.interval: T_SEARCHGW must be above 0s")
	}
	if d.Timeout < 0 {
		return nil, fmt.Errorf("spec.mqttsn.discovery.timeout: a search needs time to be answered: set it above 0s")
	}
	if d.Interval == 0 {
		d.Interval = DefaultSearchInterval
	}
	if d.Timeout == 0 {
		d.Timeout = DefaultSearchTimeout
	}
	if a := d.Address; a != "" && hasPort(a) {
		host, port, err := net.SplitHostPort(a)
		if err != nil || host == "" {
			return nil, fmt.Errorf("spec.mqttsn.discovery.address: %q is neither an address nor host:port", a)
		}
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return nil, fmt.Errorf("spec.mqttsn.discovery.address: %q: port %q is not 1 to 65535", a, port)
		}
	}
	return d, nil
}

// PredefinedID is the predefined topic id of the group's topic index i, named name.
func (o *MQTTSNOptions) PredefinedID(name string, i int) (uint16, error) {
	if o.Predefined == nil {
		return sn.PredefinedTopicID(i)
	}
	id, ok := o.Predefined[name]
	if !ok {
		return 0, fmt.Errorf("spec.mqttsn.predefinedTopicIds: topic %q has no id", name)
	}
	return id, nil
}

// ClientPort is the source port of the group's publisher (or, subscriber) with index i among
// the group's publishers (subscribers), 0 without spec.mqttsn.sourcePort: publishers from
// SourcePort on, then the subscribers.
func (o *MQTTSNOptions) ClientPort(g *Group, subscriber bool, i int) int {
	if o.SourcePort == 0 {
		return 0
	}
	if subscriber {
		i += int(g.Publishers)
	}
	return o.SourcePort + i
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
	// Endpoint is spec.http.endpoint, the user's own endpoint the publishers send to; nil: msgbench's
	// gateway and its topics API.
	Endpoint *HTTPEndpoint
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

// The rules below are the per-protocol rules that the CRD also states, as CEL rules and schema
// bounds (api/v1alpha1), for `kubectl apply` and `msgbench run`; Compile states them again for a
// spec built in Go, which skips admission. They are written here once, as tables: the numbers,
// the allowed combinations and the refusal each gives. internal/manifest's
// TestCELRulesAgreeWithTheGoTables evaluates the generated CRD, with the API server's own CEL
// libraries, on every case these tables span (every protocol and broker, every QoS from below to
// above the ranges, every topic id type, the payload limit and one byte more) and requires the
// CRD and Compile to accept and refuse the same cases with the same message: a rule added on one
// side only fails it. See docs/plan.md, "Rules written twice".

// QoSRange is the spec.qos values a protocol has, both ends included, and what a value outside
// them is told.
type QoSRange struct {
	Min, Max int32
	// MinusOne is the refusal of qos -1 where the protocol has no -1: the schema's bounds let -1
	// through (MQTT-SN has it), and a CEL rule refuses it with this message.
	MinusOne string
	// Outside is the refusal (a format of the value) of the other values outside Min..Max, which
	// the schema's bounds (the union of the ranges) refuse before any CEL rule.
	Outside string
}

// qosMinusOneOnlyMQTTSN is the CEL rule's refusal of qos -1 on a protocol other than mqtt-sn.
const qosMinusOneOnlyMQTTSN = "spec.qos: -1 (publish without a connection) exists only for protocol mqtt-sn"

// ProtocolQoS is the QoS each protocol has. The CRD's spec.qos is bounded by their union
// (-1..2) and its CEL rule "self.qos != -1 || self.protocol == 'mqtt-sn'" refuses -1 elsewhere.
var ProtocolQoS = map[v1alpha1.Protocol]QoSRange{
	v1alpha1.ProtocolMQTT:     {Min: 0, Max: 2, MinusOne: qosMinusOneOnlyMQTTSN, Outside: "spec.qos: %d is not an MQTT QoS"},
	v1alpha1.ProtocolMQTTQUIC: {Min: 0, Max: 2, MinusOne: qosMinusOneOnlyMQTTSN, Outside: "spec.qos: %d is not an MQTT QoS"},
	v1alpha1.ProtocolMQTTSN:   {Min: -1, Max: 2, Outside: "spec.qos: %d is not an MQTT-SN QoS (-1..2)"},
	v1alpha1.ProtocolHTTP:     {Min: 0, Max: 2, MinusOne: qosMinusOneOnlyMQTTSN, Outside: "spec.qos: %d is not a QoS the HTTP gateway knows (0, 1 or 2)"},
	// 0: acks=0, 1: acks=1, 2: acks=all with the idempotent producer (compileOptions maps them).
	v1alpha1.ProtocolKafka: {Min: 0, Max: 2, MinusOne: qosMinusOneOnlyMQTTSN,
		Outside: "spec.qos: %d has no Kafka mapping (0: acks=0, 1: acks=1, 2: acks=all with idempotence)"},
}

// CheckQoS refuses a qos that protocol p does not have (ProtocolQoS); a protocol not in the
// table is not checked here.
func CheckQoS(p v1alpha1.Protocol, qos int32) error {
	r, ok := ProtocolQoS[p]
	switch {
	case !ok || qos >= r.Min && qos <= r.Max:
		return nil
	case qos == -1 && r.MinusOne != "":
		return errors.New(r.MinusOne)
	}
	return fmt.Errorf(r.Outside, qos)
}

// MQTTSNMaxPayload is the most payload bytes an MQTT-SN PUBLISH carries over UDP: the largest
// IPv4 UDP payload minus the PUBLISH header (65498). The CRD's CEL rule on
// spec.workload.payloadBytes writes the number out.
const MQTTSNMaxPayload = sn.MaxUDPPayload - sn.PublishOverhead

// mqttsnPayloadRefusal is the refusal of a payload above MQTTSNMaxPayload, the CEL rule's message.
var mqttsnPayloadRefusal = fmt.Sprintf("spec.workload.payloadBytes: an MQTT-SN 1.2 PUBLISH over UDP carries at most %d payload bytes (%d-byte IPv4 datagram minus the %d-byte PUBLISH header)",
	MQTTSNMaxPayload, sn.MaxUDPPayload, sn.PublishOverhead)

// ConnectionlessTopicIDTypes are the MQTT-SN topic id types QoS -1 can publish with: it sends
// without a connection, so there is no REGISTER to learn a normal topic id.
var ConnectionlessTopicIDTypes = []v1alpha1.MQTTSNTopicIDType{v1alpha1.TopicIDPredefined, v1alpha1.TopicIDShort}

// connectionlessRefusal is the refusal of QoS -1 with another topic id type, the CEL rule's message.
const connectionlessRefusal = "spec.mqttsn.topicIdType: QoS -1 publishes without a connection, so there is no REGISTER to learn a normal topic id: set topicIdType predefined or short"

// CheckMQTTSN refuses what an MQTT-SN client cannot send: a payload above MQTTSNMaxPayload, or
// QoS -1 with a topic id type not in ConnectionlessTopicIDTypes (t "" is normal, the default).
func CheckMQTTSN(qos int32, t v1alpha1.MQTTSNTopicIDType, payloadBytes int32) error {
	if t == "" {
		t = v1alpha1.TopicIDNormal
	}
	if qos == -1 && !slices.Contains(ConnectionlessTopicIDTypes, t) {
		return errors.New(connectionlessRefusal)
	}
	if payloadBytes > MQTTSNMaxPayload {
		return errors.New(mqttsnPayloadRefusal)
	}
	return nil
}

// compileOptions fills g's options from spec, defaulted, and refuses what the group's driver
// cannot run: the rules beyond the CRD's schema and CEL (a Go client's spec skips both) that each
// driver checked on its own before. Errors name the spec field.
func compileOptions(spec *v1alpha1.MessagingBenchmarkSpec, g *Group) error {
	g.PayloadBytes = spec.Workload.PayloadBytes
	g.TopicPrefix = spec.Workload.TopicPrefix
	g.TLS = TLSOptions{Enabled: spec.TLSEnabled(), Resumption: devicetls.Resumption(spec), Offer: devicetls.OfferOf(spec)}
	if g.QUIC() {
		g.QUICTransport = &QUICOptions{ZeroRTT: devicetls.ZeroRTT(spec)}
	}
	keepAlive := time.Duration(spec.MQTT.KeepAliveSecondsOrDefault()) * time.Second
	window := max(1, int(spec.MQTT.Inflight))
	if err := CheckQoS(g.Protocol, g.QoS); err != nil {
		return err
	}
	switch g.Protocol {
	case v1alpha1.ProtocolMQTT, v1alpha1.ProtocolMQTTQUIC:
		g.MQTT = &MQTTOptions{Version: v1alpha1.MQTT311, CleanSession: spec.MQTT.CleanSessionOrDefault(), KeepAlive: keepAlive,
			Inflight: int(spec.MQTT.Inflight), WebSocket: spec.MQTT.WebSocket(), WebSocketPath: spec.MQTT.WebSocketPathOrDefault()}
		if spec.MQTT.Version == v1alpha1.MQTT5 {
			g.MQTT.Version = v1alpha1.MQTT5
		}
	case v1alpha1.ProtocolMQTTSN:
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
		if err := CheckMQTTSN(g.QoS, spec.MQTTSN.TopicIDType, g.PayloadBytes); err != nil {
			return err
		}
		if o.RetryInterval <= 0 {
			o.RetryInterval = 10 * time.Second
		}
		if err := compilePredefined(spec, g, o); err != nil {
			return err
		}
		if p := spec.MQTTSN.SourcePort; p != nil {
			o.SourcePort = int(*p)
			if last := o.SourcePort + int(g.Publishers+g.Subscribers) - 1; last > 65535 {
				return fmt.Errorf("spec.mqttsn.sourcePort: %d clients from port %d would need port %d, above 65535", g.Publishers+g.Subscribers, o.SourcePort, last)
			}
		}
		if ds := spec.MQTTSN.Discovery; ds != nil {
			var err error
			if o.Discovery, err = compileDiscovery(ds); err != nil {
				return err
			}
		}
		g.MQTTSN = o
	case v1alpha1.ProtocolHTTP:
		g.HTTP = &HTTPOptions{Version: v1alpha1.HTTP11, KeepAlive: spec.HTTP.KeepAliveOrDefault(), Window: window}
		if spec.HTTP.Version != "" {
			g.HTTP.Version = spec.HTTP.Version
		}
		var err error
		if g.HTTP.Endpoint, err = compileEndpoint(spec, g); err != nil {
			return err
		}
		if g.HTTP.Endpoint != nil { // no gateway of msgbench's: the clients go to the endpoint
			g.ExternalGateway = g.HTTP.Endpoint.Address
		}
	case v1alpha1.ProtocolKafka:
		k := spec.Kafka
		o := &KafkaOptions{Compression: k.Compression, Linger: time.Duration(k.LingerMs) * time.Millisecond,
			BatchBytes: k.BatchBytes, Partitions: k.Partitions, Replicas: k.Replicas, Window: window}
		switch g.QoS { // CheckQoS held it to ProtocolQoS's 0..2
		case 0:
			o.Acks = AcksNone
		case 1:
			o.Acks = AcksLeader
		case 2:
			o.Acks, o.Idempotent = AcksAll, true
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

// compilePredefined resolves spec.mqttsn.predefinedTopicIds into o: ids unique (the CRD checks
// their range), and every topic of a predefined group named.
func compilePredefined(spec *v1alpha1.MessagingBenchmarkSpec, g *Group, o *MQTTSNOptions) error {
	ids := spec.MQTTSN.PredefinedTopicIDs
	if len(ids) == 0 {
		return nil
	}
	o.Predefined = make(map[string]uint16, len(ids))
	byID := map[int32]string{}
	for _, name := range slices.Sorted(maps.Keys(ids)) {
		id := ids[name]
		if id < 1 || id > 0xFFFE {
			return fmt.Errorf("spec.mqttsn.predefinedTopicIds: %q has id %d; an id is 1 to 65534 (0 and 0xFFFF are reserved by MQTT-SN 1.2)", name, id)
		}
		if other, ok := byID[id]; ok {
			return fmt.Errorf("spec.mqttsn.predefinedTopicIds: %q and %q have the same id %d", other, name, id)
		}
		byID[id], o.Predefined[name] = name, uint16(id)
	}
	if o.TopicIDType == sn.TopicPredefined {
		for t := range int(g.Topics) {
			if _, ok := o.Predefined[g.TopicName(t)]; !ok {
				return fmt.Errorf("spec.mqttsn.predefinedTopicIds: topic %q (of spec.workload.topics) has no id; a predefined publisher or subscriber names each of its topics by one", g.TopicName(t))
			}
		}
	}
	return nil
}
