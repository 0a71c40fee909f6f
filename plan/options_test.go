package plan_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/devicetls"
	sn "github.com/msgbench/msgbench/internal/mqttsn"
	"github.com/msgbench/msgbench/plan"
)

// The rules the drivers checked on their own before the plan: each is refused by Compile, at every
// target (a worker compiles its spec as plan.Admitted, and must refuse what its driver cannot
// run), naming the field, with the message the driver gave or, where the CRD states the rule
// too, the CEL rule's (ProtocolQoS and the MQTT-SN tables; internal/manifest's
// TestCELRulesAgreeWithTheGoTables holds the two sides equal); its neighbour within the rule
// compiles. Each row changes the spec after it was read, as a Go client's spec could be (the
// CRD's schema and CEL refuse most of them).
func TestCompileChecksEachProtocolsRules(t *testing.T) {
	for _, c := range []struct {
		name   string
		sample string
		change func(*v1alpha1.MessagingBenchmarkSpec)
		want   string // "" compiles
	}{
		{"mqtt qos 2", "mqtt-qos1.yaml", func(s *v1alpha1.MessagingBenchmarkSpec) { s.QoS = 2 }, ""},
		{"mqtt qos 3", "mqtt-qos1.yaml", func(s *v1alpha1.MessagingBenchmarkSpec) { s.QoS = 3 }, "spec.qos: 3 is not an MQTT QoS"},
		{"mqtt qos -1", "mqtt-qos1.yaml", func(s *v1alpha1.MessagingBenchmarkSpec) { s.QoS = -1 }, "spec.qos: -1 (publish without a connection) exists only for protocol mqtt-sn"},
		{"mqtt-quic qos 3", "mqtt-quic.yaml", func(s *v1alpha1.MessagingBenchmarkSpec) { s.QoS = 3 }, "spec.qos: 3 is not an MQTT QoS"},
		{"mqtt-quic qos -1", "mqtt-quic.yaml", func(s *v1alpha1.MessagingBenchmarkSpec) { s.QoS = -1 }, "spec.qos: -1 (publish without a connection) exists only for protocol mqtt-sn"},

		{"mqtt-sn qos 2", "mqtt-sn-qos1.yaml", func(s *v1alpha1.MessagingBenchmarkSpec) { s.QoS = 2 }, ""},
		{"mqtt-sn qos 3", "mqtt-sn-qos1.yaml", func(s *v1alpha1.MessagingBenchmarkSpec) { s.QoS = 3 }, "spec.qos: 3 is not an MQTT-SN QoS (-1..2)"},
		{"mqtt-sn qos -2", "mqtt-sn-qos1.yaml", func(s *v1alpha1.MessagingBenchmarkSpec) { s.QoS = -2 }, "spec.qos: -2 is not an MQTT-SN QoS (-1..2)"},
		{"mqtt-sn topic id type", "mqtt-sn-qos1.yaml", func(s *v1alpha1.MessagingBenchmarkSpec) { s.MQTTSN.TopicIDType = "long" },
			`spec.mqttsn.topicIdType: "long" is not normal, predefined or short`},
		{"mqtt-sn qos -1 short", "mqtt-sn-qos1.yaml", func(s *v1alpha1.MessagingBenchmarkSpec) {
			s.QoS, s.MQTTSN.TopicIDType = -1, v1alpha1.TopicIDShort
		}, ""},
		{"mqtt-sn qos -1 normal", "mqtt-sn-qos1.yaml", func(s *v1alpha1.MessagingBenchmarkSpec) {
			s.QoS, s.MQTTSN.TopicIDType = -1, v1alpha1.TopicIDNormal
		}, "spec.mqttsn.topicIdType: QoS -1 publishes without a connection, so there is no REGISTER to learn a normal topic id: set topicIdType predefined or short"},
		{"mqtt-sn qos -1 unset", "mqtt-sn-qos1.yaml", func(s *v1alpha1.MessagingBenchmarkSpec) {
			s.QoS, s.MQTTSN.TopicIDType = -1, ""
		}, "spec.mqttsn.topicIdType: QoS -1 publishes without a connection"},
		{"mqtt-sn largest payload", "mqtt-sn-qos1.yaml", func(s *v1alpha1.MessagingBenchmarkSpec) { s.Workload.PayloadBytes = 65498 }, ""},
		{"mqtt-sn payload", "mqtt-sn-qos1.yaml", func(s *v1alpha1.MessagingBenchmarkSpec) { s.Workload.PayloadBytes = 65499 },
			"spec.workload.payloadBytes: an MQTT-SN 1.2 PUBLISH over UDP carries at most 65498 payload bytes (65507-byte IPv4 datagram minus the 9-byte PUBLISH header)"},

		{"http qos 0", "http-1-1.yaml", func(s *v1alpha1.MessagingBenchmarkSpec) { s.QoS = 0 }, ""},
		{"http qos 3", "http-1-1.yaml", func(s *v1alpha1.MessagingBenchmarkSpec) { s.QoS = 3 }, "spec.qos: 3 is not a QoS the HTTP gateway knows (0, 1 or 2)"},
		{"http qos -1", "http-1-1.yaml", func(s *v1alpha1.MessagingBenchmarkSpec) { s.QoS = -1 }, "spec.qos: -1 (publish without a connection) exists only for protocol mqtt-sn"},

		{"kafka qos 0", "kafka-acks1.yaml", func(s *v1alpha1.MessagingBenchmarkSpec) { s.QoS = 0 }, ""},
		{"kafka qos 3", "kafka-acks1.yaml", func(s *v1alpha1.MessagingBenchmarkSpec) { s.QoS = 3 },
			"spec.qos: 3 has no Kafka mapping (0: acks=0, 1: acks=1, 2: acks=all with idempotence)"},
		{"kafka qos -1", "kafka-acks1.yaml", func(s *v1alpha1.MessagingBenchmarkSpec) { s.QoS = -1 }, "spec.qos: -1 (publish without a connection) exists only for protocol mqtt-sn"},
		{"kafka zstd", "kafka-acks1.yaml", func(s *v1alpha1.MessagingBenchmarkSpec) { s.Kafka.Compression = "zstd" }, ""},
		{"kafka compression", "kafka-acks1.yaml", func(s *v1alpha1.MessagingBenchmarkSpec) { s.Kafka.Compression = "brotli" },
			`spec.kafka.compression: "brotli" is not none, gzip, snappy, lz4 or zstd`},
	} {
		for _, target := range []plan.Target{plan.Local, plan.Kubernetes, plan.Admitted} {
			spec := read(t, c.sample)
			c.change(spec)
			_, err := plan.Compile(spec, target)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("%s for %s: %v", c.name, target, err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("%s for %s: %v, want %q", c.name, target, err, c.want)
			}
		}
	}
}

// Each protocol's options, defaulted as its driver did, and only its own.
func TestGroupOptions(t *testing.T) {
	compile := func(sample string, set ...string) plan.Group {
		t.Helper()
		p, err := plan.Compile(read(t, sample, set...), plan.Admitted)
		if err != nil {
			t.Fatal(err)
		}
		return p.Groups[0]
	}
	only := func(name string, g plan.Group, mqtt, mqttsn, http, quic, kafka bool) {
		t.Helper()
		if (g.MQTT != nil) != mqtt || (g.MQTTSN != nil) != mqttsn || (g.HTTP != nil) != http || (g.QUICTransport != nil) != quic || (g.Kafka != nil) != kafka {
			t.Errorf("%s: options mqtt %v mqttsn %v http %v quic %v kafka %v", name, g.MQTT != nil, g.MQTTSN != nil, g.HTTP != nil, g.QUICTransport != nil, g.Kafka != nil)
		}
	}

	g := compile("mqtt-qos1.yaml", "mqtt.inflight=7", "workload.payloadBytes=300", "workload.topicPrefix=bench/t")
	only("mqtt", g, true, false, false, false, false)
	if want := (plan.MQTTOptions{Version: v1alpha1.MQTT311, CleanSession: true, KeepAlive: 60 * time.Second, Inflight: 7, WebSocketPath: "/mqtt"}); *g.MQTT != want {
		t.Errorf("mqtt: %+v, want %+v", *g.MQTT, want)
	}
	if g.PayloadBytes != 300 || g.TopicName(12) != "bench/t12" || !reflect.DeepEqual(g.TLS, plan.TLSOptions{}) || g.PersistentSession() {
		t.Errorf("mqtt: payload %d, topic %q, tls %+v, persistent %v", g.PayloadBytes, g.TopicName(12), g.TLS, g.PersistentSession())
	}
	g = compile("mqtt5-qos1.yaml", "mqtt.cleanSession=false", "mqtt.keepAliveSeconds=0", "mqtt.transport=websocket", "mqtt.webSocketPath=/ws")
	if o := g.MQTT; o.Version != v1alpha1.MQTT5 || o.CleanSession || o.KeepAlive != 0 || !o.WebSocket || o.WebSocketPath != "/ws" || !g.PersistentSession() {
		t.Errorf("mqtt 5: %+v, persistent %v", *o, g.PersistentSession())
	}
	if g := compile("mqtt-qos0.yaml", "mqtt.cleanSession=false"); g.PersistentSession() {
		t.Error("a QoS 0 session is persistent")
	}
	g = compile("mqtts-tls13.yaml", "tls.resumption=true")
	if !reflect.DeepEqual(g.TLS, plan.TLSOptions{Enabled: true, Resumption: true}) {
		t.Errorf("mqtts: tls %+v", g.TLS)
	}
	g = compile("mqtts-device-tls.yaml")
	if want := (devicetls.Offer{Groups: []v1alpha1.TLSGroup{v1alpha1.GroupX25519}, CipherSuites: []string{"TLS_CHACHA20_POLY1305_SHA256"}}); !reflect.DeepEqual(g.TLS.Offer, want) {
		t.Errorf("device tls: offer %+v, want %+v", g.TLS.Offer, want)
	}

	g = compile("mqtt-quic.yaml", "quic.zeroRTT=true")
	only("mqtt-quic", g, true, false, false, true, false)
	if !g.QUICTransport.ZeroRTT || !g.TLS.Resumption { // 0-RTT needs a session ticket: a cache per client
		t.Errorf("mqtt-quic: quic %+v, tls %+v", *g.QUICTransport, g.TLS)
	}

	g = compile("mqtt-sn-qos1.yaml", "mqttsn.topicIdType=predefined", "mqttsn.retryInterval=3s", "mqtt.keepAliveSeconds=30")
	only("mqtt-sn", g, false, true, false, false, false)
	if want := (plan.MQTTSNOptions{RetryInterval: 3 * time.Second, MaxRetries: 5, TopicIDType: sn.TopicPredefined, KeepAlive: 30 * time.Second, CleanSession: true}); !reflect.DeepEqual(*g.MQTTSN, want) {
		t.Errorf("mqtt-sn: %+v, want %+v", *g.MQTTSN, want)
	}
	spec := read(t, "mqtt-sn-qos1.yaml")
	spec.MQTTSN.RetryInterval.Duration, spec.MQTTSN.TopicIDType = 0, ""
	p, err := plan.Compile(spec, plan.Admitted)
	if err != nil {
		t.Fatal(err)
	}
	if o := p.Groups[0].MQTTSN; o.RetryInterval != 10*time.Second || o.TopicIDType != sn.TopicNormal {
		t.Errorf("mqtt-sn unset: retry %v, topic id type %d; want 10s, normal", o.RetryInterval, o.TopicIDType)
	}

	g = compile("http-2-tls.yaml", "mqtt.inflight=20", "http.keepAlive=false")
	only("http 2", g, false, false, true, false, false)
	if want := (plan.HTTPOptions{Version: v1alpha1.HTTP2, KeepAlive: false, Window: 20}); *g.HTTP != want || !g.TLS.Enabled {
		t.Errorf("http 2: %+v, want %+v; tls %+v", *g.HTTP, want, g.TLS)
	}
	g = compile("http-3.yaml", "quic.zeroRTT=true")
	only("http 3", g, false, false, true, true, false)
	if !g.HTTP.KeepAlive || !g.QUICTransport.ZeroRTT {
		t.Errorf("http 3: %+v, quic %+v", *g.HTTP, *g.QUICTransport)
	}
	spec = read(t, "http-3.yaml")
	spec.MQTT.Inflight = 0 // below the schema's minimum: a Go client's spec
	if p, err := plan.Compile(spec, plan.Admitted); err != nil || p.Groups[0].HTTP.Window != 1 {
		t.Errorf("http with inflight 0: %v, want a window of 1 request", err)
	}
	spec = read(t, "http-1-1.yaml")
	spec.HTTP.Version = ""
	if p, err := plan.Compile(spec, plan.Admitted); err != nil || p.Groups[0].HTTP.Version != v1alpha1.HTTP11 {
		t.Errorf("http without a version: %v", err)
	}

	for qos, want := range map[string]plan.KafkaOptions{
		"0": {Acks: plan.AcksNone},
		"1": {Acks: plan.AcksLeader},
		"2": {Acks: plan.AcksAll, Idempotent: true},
	} {
		g := compile("kafka-acks1.yaml", "qos="+qos, "kafka.lingerMs=7", "kafka.batchBytes=32768", "kafka.compression=zstd", "kafka.partitions=6", "mqtt.inflight=100")
		only("kafka", g, false, false, false, false, true)
		want.Compression, want.Linger, want.BatchBytes, want.Partitions, want.Replicas, want.Window = "zstd", 7*time.Millisecond, 32768, 6, g.Kafka.Replicas, 100
		if *g.Kafka != want {
			t.Errorf("kafka qos %s: %+v, want %+v", qos, *g.Kafka, want)
		}
	}
	spec = read(t, "kafka-acks1.yaml")
	spec.Kafka.Compression = ""
	if p, err := plan.Compile(spec, plan.Admitted); err != nil || p.Groups[0].Kafka.Compression != "none" {
		t.Errorf("kafka without compression: %v", err)
	}
}
