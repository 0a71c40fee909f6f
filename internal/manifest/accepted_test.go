package manifest_test

// One rule for the API: a spec that admission (manifest.Parse, the API server's own schema and
// CEL rules) accepts must run. This file generates specs across the schema — every protocol with
// every QoS, TLS setting, protocol version, MQTT-SN topic id type and gateway mode, broker type,
// Kafka compression, network profile and edge values of the network and workload — parses each
// like `msgbench run` and the API server do, and runs every decision the later steps make about
// an accepted spec: the worker (drivers.New, the plan and each client's topic), the gateway's
// configuration, the broker's configuration (local and on Kubernetes), the emulated network
// (netem.Resolve, the Chaos Mesh objects) and the operator's objects (resources.Render, shared
// with `msgbench render`). None of them may refuse a spec admission accepted.
//
// It lives here, next to Parse, because it states a property of admission: everything Parse
// accepts, the rest of msgbench can run. The checks are pure: nothing is started.

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/artemis"
	"github.com/msgbench/msgbench/brokers/kafka"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/brokers/rabbitmq"
	"github.com/msgbench/msgbench/config/crd"
	"github.com/msgbench/msgbench/controllers/resources"
	gwhttp "github.com/msgbench/msgbench/gateway/http"
	gwmqttsn "github.com/msgbench/msgbench/gateway/mqttsn"
	gwquic "github.com/msgbench/msgbench/gateway/quic"
	"github.com/msgbench/msgbench/internal/manifest"
	sn "github.com/msgbench/msgbench/internal/mqttsn"
	"github.com/msgbench/msgbench/loadgen/drivers"
	_ "github.com/msgbench/msgbench/loadgen/drivers/all"
	kafkadrv "github.com/msgbench/msgbench/loadgen/drivers/kafka"
	"github.com/msgbench/msgbench/netem"
	runplan "github.com/msgbench/msgbench/plan"
)

// option is one value of an axis: --set overrides (paths relative to spec).
type option []string

var (
	protocols = []string{"mqtt", "mqtt-sn", "http", "mqtt-quic", "kafka"}
	qoses     = []option{{"qos=-1"}, {"qos=0"}, {"qos=1"}, {"qos=2"}}
	tlses     = []option{{}, {"tls.enabled=false"}, {"tls.enabled=true", `tls.version="1.2"`}, {"tls.enabled=true", `tls.version="1.3"`}}
	brokers   = []option{{"broker.type=mosquitto"}, {"broker.type=kafka"}, {"broker.type=external", "broker.external.address=127.0.0.1:1883"},
		{"broker.type=rabbitmq"}, {"broker.type=artemis"}, {"broker.type=emqx"}, {"broker.type=nanomq"}, {"broker.type=hivemq-ce"},
		{"broker.type=vernemq", `broker.config.accept_eula="yes"`}}
	// the protocol's own enums
	variants = map[string][]option{
		"mqtt": {{`mqtt.version="3.1.1"`}, {`mqtt.version="5"`, "mqtt.transport=tcp"},
			{`mqtt.version="3.1.1"`, "mqtt.transport=websocket"}, {`mqtt.version="5"`, "mqtt.transport=websocket", `mqtt.webSocketPath="/ws/mqtt"`}},
		"mqtt-quic": {{`mqtt.version="3.1.1"`}, {`mqtt.version="5"`}},
		"http": {{`http.version="1.1"`}, {`http.version="2"`}, {`http.version="3"`}, {`http.version="1.1"`, "http.keepAlive=false"},
			// an endpoint of the user's own (publish-only: no subscribers)
			{`http.version="1.1"`, `http.endpoint.url="http://127.0.0.1:8080/in/{device}"`, "http.endpoint.method=POST", "workload.subscribers=0"},
			{`http.version="2"`, `http.endpoint.url="http://127.0.0.1:8080/in/{device}?n={seq}"`, "http.endpoint.method=PUT", "workload.subscribers=0"},
			{`http.version="3"`, `http.endpoint.url="https://127.0.0.1:8443/in"`, "http.endpoint.method=PATCH", "workload.subscribers=0"}},
		"mqtt-sn": {
			{"mqttsn.topicIdType=normal", "mqttsn.gatewayMode=transparent"}, {"mqttsn.topicIdType=predefined", "mqttsn.gatewayMode=transparent"},
			{"mqttsn.topicIdType=short", "mqttsn.gatewayMode=transparent"}, {"mqttsn.topicIdType=normal", "mqttsn.gatewayMode=aggregating"},
			{"mqttsn.topicIdType=predefined", "mqttsn.gatewayMode=aggregating", `mqtt.version="5"`},
			{"mqttsn.topicIdType=short", "mqttsn.gatewayMode=aggregating", "mqttsn.maxRetries=0"},
			// gateway discovery: by the gateway's address, and by broadcast with every setting
			{"mqttsn.topicIdType=normal", "mqttsn.discovery.radius=1"},
			{"mqttsn.topicIdType=predefined", `mqttsn.discovery.address="255.255.255.255"`, "mqttsn.discovery.radius=0",
				"mqttsn.discovery.interval=200ms", "mqttsn.discovery.timeout=2s"},
		},
		"kafka": {{"kafka.compression=none"}, {"kafka.compression=gzip"}, {"kafka.compression=snappy"}, {"kafka.compression=lz4"},
			{"kafka.compression=zstd", "kafka.partitions=16", "kafka.batchBytes=1"}},
	}
	networks = []option{
		{"network.profile=none"},
		{"network.profile=nb-iot"}, {"network.profile=lte-m"}, {"network.profile=lte"}, {"network.profile=5g-sa"},
		{"network.profile=5g-urban"}, {"network.profile=cell-edge"}, {"network.profile=congested"}, {"network.profile=3g"},
		{"network.profile=wifi"}, {"network.profile=satellite"},
		{"network.profile=custom"},
		{"network.profile=custom", "network.delay=0s"},
		{"network.profile=custom", "network.delay=50ms", "network.jitter=5ms", "network.lossPercent=100", "network.bandwidth=0bit"},
		{"network.profile=custom", `network.lossPercent="0.00000001"`},
		{"network.profile=custom", `network.duplicatePercent="99.9999999"`, `network.corruptPercent="0.5"`},
		{"network.profile=custom", `network.reorderPercent="5"`},
		{"network.profile=custom", "network.delay=10ms", `network.reorderPercent="5"`},
		{"network.profile=custom", "network.jitter=5ms"},
		{"network.profile=custom", "network.bandwidth=0.1bit"},
		{"network.profile=custom", "network.bandwidth=0.5bit"},
		{"network.profile=custom", "network.bandwidth=2000gbit"},
		{"network.profile=custom", "network.bandwidth=1000gbit"},
		{"network.profile=custom", "network.delay=2h"},
		{"network.profile=custom", "network.up.jitter=1h"},
		{"network.profile=custom", "network.up.delay=10ms"},
		{"network.profile=custom", "network.down.delay=10ms", "network.direction=to"},
		{"network.profile=lte", "network.delay=0s"},
		{"network.profile=lte", "network.delay=0s", "network.jitter=0s"},
		{"network.profile=nb-iot", "network.up.delay=0s"},
		{"network.profile=lte", "network.direction=to"},
		{"network.profile=lte", "network.direction=from"},
		{"network.profile=nb-iot", "network.radio.psmAfter=10s", "network.radio.energy.model=nb-iot", "network.radio.energy.batteryMilliampHours=5000"},
		{"network.profile=lte-m", "network.radio.energy.model=lte-m", `network.radio.energy.milliwatts.transmit="800.5"`, `network.radio.energy.voltage="3.3"`},
		{"network.profile=lte", "network.radio.energy.model=lte", "network.radio.pagingCycle=0s"},
		{"network.profile=custom", "network.radio.inactivityTimer=5s", "network.radio.promotionDelay=100ms", "network.radio.energy.model=5g-sa", "network.radio.energy.pagingOnDuration=2h"},
		{"network.profile=5g-sa", "network.radio.energy.batteryMilliampHours=10000000", `network.radio.energy.milliwatts.psm="0"`},
		{"network.profile=wifi", "network.radio.inactivityTimer=50ms", "network.radio.promotionDelay=1ms", "network.radio.pagingCycle=102.4ms", "network.radio.energy.model=wifi", "network.radio.energy.pagingOnDuration=3.052ms"},
		{"network.profile=nb-iot", "network.mtuBytes=68"},
		{"network.profile=satellite", "network.mtuBytes=65535", `network.down.reorderPercent="1"`},
	}
	workloads = []option{
		{},
		{"workload.publishers=0", "workload.subscribers=4"},
		{"workload.subscribers=0"},
		{"workload.publishers=8", "workload.subscribers=8", "workload.topics=64"},
		{"workload.payloadBytes=0"},
		{"workload.payloadBytes=15"},
		{"workload.payloadBytes=16"},
		{"workload.payloadBytes=65498"},
		{"workload.payloadBytes=16777216"},
		{"workload.rate=0"},
		{"workload.rate=100000000"},
		{"workload.rate=1", "workload.duration=1s", "workload.warmup=0s"},
		{"workload.messages=100", "workload.duration=5s", "workload.warmup=5s", "workload.rate=2000"},
		{"workload.messages=100", "workload.warmup=0s", "workload.rate=2000"},
		{"workload.messages=20000", "workload.warmup=5s", "workload.rate=2000"},
		{"workload.messages=3", "workload.publishers=8", "workload.topics=8", "workload.warmup=0s"},
		{"workload.messages=1", "workload.warmup=0s"},
		{"workload.warmup=60s", "workload.duration=1s"},
		{"workload.duration=0s", "workload.messages=10", "workload.warmup=0s"},
		{"workers.replicas=4", "workload.publishers=4", "workload.topics=4", "workload.subscribers=1"},
		{"workers.replicas=3", "workload.publishers=0", "workload.subscribers=2", "workload.topics=3"},
		{`workload.topicPrefix=""`},
		{`workload.topicPrefix="a/b c?%&"`},
		{"workload.connectRate=1", "workload.timelineInterval=100ms", "cleanup=OnSuccess"},
		{"cleanup=Never", "network.profile=lte", "network.direction=both"},
		{"cleanup=OnCompletion"},
		{"mqtt.inflight=65535", "mqtt.keepAliveSeconds=0", "mqtt.cleanSession=false"},
		{`broker.config={"max_connections": "10"}`},
		{`broker.config={"listener": "1883"}`},
		{`broker.config={"log.dirs": "/tmp/x"}`},
		{`broker.config={"num.network.threads": "4"}`},
		{`broker.config={"ssl.client.auth": "required"}`},
		{`broker.config={"bad key": "x"}`},
		{"tls.enabled=true", "tls.clientCertificates.keyType=ecdsa-p256"},
		{"tls.enabled=true", "tls.clientCertificates.keyType=rsa-2048", `tls.clientCertificates.commonName="dev-{clientId}"`},
	}
	// big workloads: slow to check (a plan per client, a KafkaTopic per topic), so each is
	// combined with every protocol and its own enums on the unimpaired network only
	bigWorkloads = []option{
		{"workload.topics=3844", "workload.publishers=3844"},
		{"workload.topics=3845", "workload.publishers=3845"},
		{"workload.topics=65534", "workload.publishers=65534"},
		{"workload.topics=70000", "workload.publishers=70000"},
		{"workload.publishers=6000", "workload.subscribers=6000", "workload.topics=100"},
		{"workload.publishers=150000", "workload.subscribers=1", "workload.topics=1"},
	}
)

// spec generates the matrix: every protocol × QoS × TLS × broker × the protocol's own enums in
// full, each combined with one network and one workload (stepping through both so that each
// protocol meets every one), then every protocol × network × workload with the defaults, then
// the big workloads with each protocol's enums.
func specs() [][]string {
	var out [][]string
	add := func(parts ...option) {
		var set []string
		for _, p := range parts {
			set = append(set, p...)
		}
		out = append(out, set)
	}
	for _, proto := range protocols {
		p := option{"protocol=" + proto}
		i := 0
		for _, q := range qoses {
			for _, t := range tlses {
				for _, b := range brokers {
					for _, v := range variants[proto] {
						add(p, q, t, b, v, networks[i%len(networks)], workloads[(i/len(networks)+i)%len(workloads)])
						i++
					}
				}
			}
		}
		broker := option{"broker.type=mosquitto"}
		if proto == "kafka" {
			broker = option{"broker.type=kafka"}
		}
		for _, n := range networks {
			for j, w := range workloads {
				add(p, broker, variants[proto][j%len(variants[proto])], n, w)
			}
		}
		for _, v := range variants[proto] {
			for _, w := range bigWorkloads {
				add(p, broker, v, w)
			}
		}
	}
	// Kafka devices with credentials, each SASL mechanism with and without TLS: on an external
	// Kafka, since on Kubernetes msgbench's Strimzi Kafka refuses them (a Kubernetes-only rule).
	for _, m := range []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"} {
		for _, t := range tlses {
			add(option{"protocol=kafka", "broker.type=external", "broker.external.address=127.0.0.1:9092",
				`identity.username="dev-{index}"`, `identity.password="pw-{index}"`, "identity.saslMechanism=" + m}, t)
		}
	}
	return out
}

// TestEveryAcceptedSpecRuns admits every spec of the matrix and checks each accepted one. The
// specs are independent, so they are checked on every core, each result kept at its spec's index
// and read in the matrix's order (the report is the same as one at a time); under -race, that
// also checks that Parse and the later decisions may run side by side, as the operator runs them.
// Admission is the API server's own CEL evaluation, which allocates heavily: the collector runs
// less often meanwhile (at 4× the live heap, capped at 1 GiB).
func TestEveryAcceptedSpecRuns(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 30))
	all := specs()
	if testing.Short() || raceDetector {
		// The inner loop (make test-unit) and make test's -race pass check every 8th spec of the
		// matrix, in 20 s instead of 170 s under -race (enough for the race detector to see Parse
		// and the later decisions side by side); make test's second pass checks them all without
		// -race, in 30 s.
		var some [][]string
		for i := 0; i < len(all); i += 8 {
			some = append(some, all[i])
		}
		all = some
	}
	type outcome struct {
		accepted bool
		errs     []error // afterAdmission's refusals
	}
	outcomes := make([]outcome, len(all))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(all); i = int(next.Add(1)) - 1 {
				mb, err := manifest.Parse(doc("matrix", "{}"), all[i]...)
				if err != nil {
					continue
				}
				outcomes[i] = outcome{accepted: true, errs: afterAdmission(mb)}
			}
		})
	}
	wg.Wait()
	accepted := 0
	failures := map[string][]string{} // failing check and message → the specs
	for i, o := range outcomes {
		if !o.accepted {
			continue
		}
		accepted++
		for _, err := range o.errs {
			msg := err.Error()
			failures[msg] = append(failures[msg], "--set "+strings.Join(all[i], " --set "))
		}
	}
	t.Logf("%d specs generated, %d accepted", len(all), accepted)
	if accepted < len(all)/4 {
		t.Errorf("only %d of %d generated specs were accepted: the matrix tests little", accepted, len(all))
	}
	msgs := make([]string, 0, len(failures))
	for m := range failures {
		msgs = append(msgs, m)
	}
	sort.Strings(msgs)
	for _, m := range msgs {
		t.Errorf("accepted at admission, refused later (%d specs, e.g. %s):\n    %s", len(failures[m]), failures[m][0], m)
	}
}

// workers is how many workers the plan deals its clients to (none when it did not compile).
func workers(p *runplan.Plan) int {
	if p == nil {
		return 0
	}
	return p.Workers
}

// afterAdmission runs every decision made about an accepted spec after admission, without
// starting anything, and returns the refusals, each prefixed with where it happens.
func afterAdmission(mb *v1alpha1.MessagingBenchmark) []error {
	var errs []error
	fail := func(where string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
		}
	}
	spec := &mb.Spec
	w := &spec.Workload

	// The worker: its driver, its share of the workload, each client's topic.
	compiled, err := runplan.Compile(spec, runplan.Admitted)
	fail("worker plan.Compile", err)
	if err == nil {
		g := &compiled.Groups[0]
		cfg := drivers.Config{Group: g, Address: "127.0.0.1:1", Now: func() int64 { return 0 }}
		if spec.GatewayTLS() || spec.BrokerTLS() {
			cfg.TLS = &tls.Config{}
		}
		_, err := drivers.New(string(g.Protocol), cfg)
		fail("worker drivers.New", err)
		if g.Protocol == v1alpha1.ProtocolKafka {
			_, err := kafkadrv.ProducerOpts(g)
			fail("worker kafka.ProducerOpts", err)
		}
	}
	for i := range workers(compiled) {
		share := compiled.Groups[0].Share(i, compiled.Workers)
		if len(share.Topics) == 0 {
			fail("worker plan", fmt.Errorf("worker %d of %d has no topic", i, compiled.Workers))
		}
		for _, p := range share.Publishers {
			if w.Messages > 0 && p.Quota == 0 {
				fail("worker plan", fmt.Errorf("publisher %d has no share of workload.messages %d and would publish until spec.timeout", p.Index, w.Messages))
				break
			}
		}
	}
	if spec.Protocol == v1alpha1.ProtocolMQTTSN {
		// each client's topic id (session setup); the ids grow with the topic, so the last decides
		last := int(w.Topics) - 1
		switch spec.MQTTSN.TopicIDType {
		case v1alpha1.TopicIDPredefined:
			_, err := sn.PredefinedTopicID(last)
			fail("worker mqtt-sn topic", err)
		case v1alpha1.TopicIDShort:
			_, err := sn.ShortTopicName(last)
			fail("worker mqtt-sn topic", err)
		}
	}
	if err := measuresNothing(spec); err != nil {
		fail("run", err)
	}

	// The gateway, given its groups of the plan.
	clients := int(w.Publishers) + int(w.Subscribers)
	var served []runplan.Group
	mode := spec.GatewayMode()
	if compiled != nil {
		served = compiled.GatewayGroups(mode)
		if compiled.ExternalGateway() != "" {
			mode = "" // no gateway of msgbench's: an external one, or the user's HTTP endpoint
		}
	}
	switch mode {
	case "mqtt-sn":
		c, err := gwmqttsn.ConfigFromGroups(served)
		if err == nil {
			err = c.Defaults()
		}
		fail("mqtt-sn gateway config", err)
		if err == nil && c.MaxClients < clients {
			fail("mqtt-sn gateway", fmt.Errorf("%d clients, the gateway admits %d (CONNECT rejected: congestion)", clients, c.MaxClients))
		}
		if spec.MQTTSN.TopicIDType != v1alpha1.TopicIDShort {
			// ids 1..0xFFFE: the gateway's topic table (normal) and its predefined ids
			if n := len(c.Predefined); n < int(w.Topics) {
				fail("mqtt-sn gateway", fmt.Errorf("%d topics, the gateway has ids for %d", w.Topics, n))
			}
		}
	case "http":
		if spec.HTTP.Version == v1alpha1.HTTP3 && !spec.GatewayTLS() {
			fail("http gateway", fmt.Errorf("HTTP/3 without a server certificate"))
		}
		l := gwhttp.Limits{}.WithDefaults(served)
		if l.MaxSubscriptions < int(w.Subscribers) {
			fail("http gateway", fmt.Errorf("%d subscribers, the gateway admits %d streams (503)", w.Subscribers, l.MaxSubscriptions))
		}
		if need := int(w.Publishers) * int(max(1, spec.MQTT.Inflight)); l.MaxPublishes < need {
			fail("http gateway", fmt.Errorf("%d publishers × inflight %d, the gateway admits %d publishes at once (429)", w.Publishers, spec.MQTT.Inflight, l.MaxPublishes))
		}
		if l.MaxBodyBytes < int64(w.PayloadBytes) {
			fail("http gateway", fmt.Errorf("payload %d above the body limit %d", w.PayloadBytes, l.MaxBodyBytes))
		}
	case "quic":
		if !spec.GatewayTLS() {
			fail("quic gateway", fmt.Errorf("QUIC without a server certificate"))
		}
		if n := gwquic.SessionLimit(served); n < clients {
			fail("quic gateway", fmt.Errorf("%d clients, the gateway admits %d sessions", clients, n))
		}
	}

	// The broker, as `msgbench run` starts it.
	switch spec.Broker.Type {
	case v1alpha1.BrokerMosquitto:
		c := mosquitto.Config{Port: 1883, MaxInflight: int(spec.MQTT.Inflight), Extra: spec.Broker.Config}
		if spec.BrokerTLS() {
			c.TLSPort, c.TLSVersion = 8883, spec.ClientTLSVersion()
		}
		_, err := c.Render()
		fail("local mosquitto.conf", err)
	case v1alpha1.BrokerKafka:
		c := kafka.Config{Host: "127.0.0.1", Port: 9092, ControllerPort: 9093, DataDir: "/tmp/x", Extra: spec.Broker.Config}
		if spec.BrokerTLS() {
			c.TLSPort, c.TLSVersion = 9094, spec.ClientTLSVersion()
		}
		_, err := c.Render()
		fail("local server.properties", err)
	case v1alpha1.BrokerRabbitMQ:
		c := rabbitmq.Config{Port: 1883, MaxInflight: int(spec.MQTT.Inflight), Extra: spec.Broker.Config}
		if spec.BrokerTLS() {
			c.TLSPort, c.TLSVersion, c.CAFile, c.CertFile, c.KeyFile = 8883, spec.ClientTLSVersion(), "/x/ca.crt", "/x/tls.crt", "/x/tls.key"
		}
		_, err := c.Render()
		fail("local rabbitmq.conf", err)
	case v1alpha1.BrokerArtemis:
		c := artemis.Config{Layout: artemis.Layout{Home: "/opt/artemis", Instance: "/tmp/i", Etc: "/tmp/i/etc"}, Port: 1883, Extra: spec.Broker.Config}
		if spec.BrokerTLS() {
			c.TLSPort, c.TLSVersion, c.CertFile, c.KeyFile = 8883, spec.ClientTLSVersion(), "/x/tls.crt", "/x/tls.key"
		}
		_, err := c.Render()
		fail("local Artemis instance files", err)
	}

	// The network, locally and through Chaos Mesh.
	if spec.Impaired() {
		_, err := netem.Resolve(spec.Network)
		fail("network netem.Resolve", err)
	}

	// The operator's objects (and `msgbench render`), Chaos Mesh's included.
	mb.Namespace = "bench"
	_, err = resources.Render(mb, resources.DefaultConfig())
	fail("operator resources.Render", err)
	return errs
}

// measuresNothing says why a run of spec would predictably measure nothing, from the spec
// alone: no publisher, or (messages with an open-loop rate) every message scheduled inside the
// warm-up. Message k of the run is scheduled k/rate after the start, so the last one, at
// (messages-1)/rate, must fall at or after the warm-up's end.
func measuresNothing(spec *v1alpha1.MessagingBenchmarkSpec) error {
	w := &spec.Workload
	if w.Publishers == 0 {
		return fmt.Errorf("no publisher, so nothing is measured")
	}
	if w.Messages > 0 && w.Rate > 0 {
		lastAt := float64(w.Messages-1) / float64(w.Rate)
		if lastAt < w.Warmup.Seconds() {
			return fmt.Errorf("workload.messages %d at rate %d are all sent within the %v warm-up", w.Messages, w.Rate, w.Warmup.Duration)
		}
	}
	return nil
}

// TestMatrixCoversEveryEnumValue keeps the matrix honest when the API grows: every value of
// every enum in the CRD appears in it.
func TestMatrixCoversEveryEnumValue(t *testing.T) {
	var all []string
	for _, s := range specs() {
		all = append(all, s...)
	}
	joined := strings.Join(all, "\n") + "\n"
	crd := crdEnums(t)
	for path, values := range crd {
		for _, v := range values {
			if !strings.Contains(joined, path+"="+v+"\n") && !strings.Contains(joined, path+`="`+v+`"`+"\n") {
				t.Errorf("the matrix never sets %s=%s", path, v)
			}
		}
	}
}

// crdEnums lists every enum under spec in the embedded CRD, by --set path.
func crdEnums(t *testing.T) map[string][]string {
	t.Helper()
	var c apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(crd.MessagingBenchmark, &c); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	var walk func(path string, s apiextensionsv1.JSONSchemaProps)
	walk = func(path string, s apiextensionsv1.JSONSchemaProps) {
		for _, e := range s.Enum {
			var v string
			if err := json.Unmarshal(e.Raw, &v); err != nil {
				t.Fatalf("%s: enum value %s", path, e.Raw)
			}
			out[path] = append(out[path], v)
		}
		for name, p := range s.Properties {
			walk(strings.TrimPrefix(path+"."+name, "."), p)
		}
	}
	walk("", c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"])
	if len(out) < 8 {
		t.Fatalf("found only %d enums in the CRD: %v", len(out), out)
	}
	return out
}
