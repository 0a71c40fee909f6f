package fleetlimits

import (
	"fmt"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/plan"
)

// Open files. Each figure is what the code holds open, read from it (the file named).
const (
	// BaseFiles is a msgbench process's own: stdio, the Go runtime's epoll and its wake-up
	// descriptor, logs, the metrics and control listeners, certificates being read. A local MQTT
	// run held 13 besides its 5,000 client connections (ls /proc/PID/fd); the rest is room for
	// what other runs open (TLS, WebSocket, metrics).
	BaseFiles = 32
	// BrokerBaseFiles is Mosquitto's own besides its connections: its listeners (MQTT, MQTTS,
	// WebSocket), log, configuration, stdio. It held 8 besides 5,000 connections.
	BrokerBaseFiles = 16
	// EmulatorFiles is the link emulator's (netem/emulator): two TUN devices and two namespace
	// descriptors, the spawner's pipes. The forwarder moves IP packets between the TUNs: it
	// holds no socket per flow.
	EmulatorFiles = 16
	// GatewayBaseFiles is an in-process gateway's listeners: one UDP socket for MQTT-SN and
	// QUIC (all clients share it), TCP and UDP (HTTP/3) for HTTP.
	GatewayBaseFiles = 4
	// KafkaConnsPerClient is the TCP connections one franz-go client holds to a one-node
	// cluster: the seed broker's, and the discovered broker's for metadata and for produce (a
	// publisher) or fetch and list-offsets (a subscriber), as franz-go keeps a connection per
	// request kind. A local run of 20 + 20 Kafka clients held 140 (3.5 a client; ss -tnp).
	KafkaConnsPerClient = 4
	// JVMBrokerBaseFiles is a Kafka, Artemis or RabbitMQ broker's own: the JVM's (or Erlang's)
	// jars and libraries, log segments and indexes. The local Kafka node held 98 before any
	// client, 121 after a run.
	JVMBrokerBaseFiles = 256
	// GatewayPoolConns is the MQTT connections the MQTT-SN gateway in aggregating mode, and the
	// HTTP gateway for all its publishers, share (gateway/mqttsn, gateway/http: PoolSize 4).
	GatewayPoolConns = 4
)

// Memory, estimated per connection.
const (
	// LoadgenBytesPerClient is the load generator's memory per idle client, with margin: after
	// #22 fleets of 5,000–19,900 measured 5.8–7.9 KB RSS each and small fleets up to 9.6 KB
	// (docs/benchmarks.md, Fleets); the estimate keeps 10 KB.
	LoadgenBytesPerClient = 10 << 10
	// GatewayBytesPerSession is an in-process gateway's per client: a broker connection with
	// its reader and buffers, taken as the load generator's (not measured separately).
	GatewayBytesPerSession = 10 << 10
	// MosquittoBytesPerConnection is Mosquitto 2.0.11's resident memory per idle MQTT 3.1.1
	// connection: 750 bytes (RSS delta over 2,000 and over 8,000 connections, clean session, no
	// subscription, measured on this project's CI machine), rounded up.
	MosquittoBytesPerConnection = 1 << 10
	// BaseBytes is a Go process's or broker's memory before any connection.
	BaseBytes = 32 << 20
)

// Input is what a local run's needs follow from.
type Input struct {
	Spec *v1alpha1.MessagingBenchmarkSpec
	// Plan is Spec compiled: how its clients reach the broker (protocol, gateway).
	Plan *plan.Plan
	// WorkerProcesses reports whether a spec's workers run as processes of their own (else in
	// msgbench's); nil: never.
	WorkerProcesses func(*v1alpha1.MessagingBenchmarkSpec) bool
	// EmbeddedBroker is set when the MQTT broker runs inside msgbench (Mosquitto not installed).
	EmbeddedBroker bool
	// SpreadSources is set when the clients dial a loopback destination with the default
	// dialer, which spreads them over source addresses of 127.0.0.0/8 (drivers/sourceaddr.go).
	SpreadSources bool
}

// Role is what a process is to the run.
type Role int

// Roles.
const (
	// Runner is the msgbench process: the local runner, with whatever runs in it.
	Runner Role = iota
	// Worker is a load-generator process of its own.
	Worker
	// Broker is the broker's process.
	Broker
)

// Process is what one process of a run needs.
type Process struct {
	Name string // "the msgbench process", "worker process 2", "the broker process (Mosquitto)"
	Role Role
	// Parts say what holds the files, in order (load generator, gateway, broker, emulator).
	Parts []Part
	// Clients are the load generator's clients in it; Connections the broker's (or embedded
	// broker's) connections.
	Clients, Connections int
	Files                int
	Memory               int64
	// Dials are the connections it opens, each needing an ephemeral port.
	Dials []Dial
}

// Part is one component's share of a process's files.
type Part struct {
	What  string // "load generator", "mqtt-sn gateway", …
	Files int
}

// Dial is a process's connections to one destination.
type Dial struct {
	To    string // "the broker", "the gateway"
	Conns int
	// Spread: the connections may use many source addresses of 127.0.0.0/8.
	Spread bool
}

func (p *Process) add(what string, files int, mem int64) {
	if files == 0 && mem == 0 {
		return
	}
	p.Parts = append(p.Parts, Part{What: what, Files: files})
	p.Files += files
	p.Memory += mem
}

// clientFiles is the files (connections) one client of the plan holds: one TCP connection
// (MQTT, MQTTS, WebSocket, HTTP/1.1 and HTTP/2) or one connected UDP socket (MQTT-SN, QUIC,
// HTTP/3) per client, several for Kafka; the most of its groups'.
func clientFiles(p *plan.Plan) int {
	files := 1
	for _, g := range p.Groups {
		if g.Protocol == v1alpha1.ProtocolKafka {
			files = max(files, KafkaConnsPerClient)
		}
	}
	return files
}

// gatewayOf is the msgbench gateway the plan's clients go through ("" when they talk to the
// broker directly) and its group.
func gatewayOf(p *plan.Plan) (string, plan.Group) {
	for _, g := range p.Groups {
		if g.Gateway != "" {
			return g.Gateway, g
		}
	}
	return "", plan.Group{}
}

// workers is spec.workers.replicas, at least 1.
func workers(spec *v1alpha1.MessagingBenchmarkSpec) int { return max(1, int(spec.Workers.Replicas)) }

// clientsOf is worker i of n's share of the clients.
func clientsOf(w *v1alpha1.WorkloadSpec, i, n int) int { return w.ClientsOfWorker(i, n) }

// gatewayConns is the broker connections the gateway of group g holds (0 without one), and the
// files it holds towards its clients.
func gatewayConns(spec *v1alpha1.MessagingBenchmarkSpec, g plan.Group) (broker, clientSide int) {
	P, S := int(spec.Workload.Publishers), int(spec.Workload.Subscribers)
	switch g.Gateway {
	case "mqtt-sn": // one UDP socket for all clients; transparent: a broker connection each
		if spec.MQTTSN.GatewayMode == v1alpha1.GatewayAggregating {
			return GatewayPoolConns, 0
		}
		return P + S, 0
	case "quic": // one UDP socket; a TCP connection to the broker per session (gateway/quic/bridge.go)
		return P + S, 0
	case "http": // publishers share a pool, a subscription stream has its own (gateway/http/pool.go)
		pool := 0
		if P > 0 {
			pool = GatewayPoolConns
		}
		side := P + S // an accepted TCP connection per client; HTTP/3 shares the UDP socket
		if g.HTTPVersion == v1alpha1.HTTP3 {
			side = 0
		}
		return pool + S, side
	}
	return 0, 0
}

// brokerName is the broker's name in messages ("" when it is not a local process).
func brokerName(t v1alpha1.BrokerType) string {
	switch t {
	case v1alpha1.BrokerMosquitto, "":
		return "Mosquitto"
	case v1alpha1.BrokerKafka:
		return "Kafka"
	case v1alpha1.BrokerRabbitMQ:
		return "RabbitMQ"
	case v1alpha1.BrokerArtemis:
		return "Artemis"
	}
	return ""
}

// Needs works out every local process of the run and what it needs.
func Needs(in Input) []Process {
	spec := in.Spec
	n := workers(spec)
	own := in.WorkerProcesses != nil && in.WorkerProcesses(spec)
	perClient := clientFiles(in.Plan)
	mode, gw := gatewayOf(in.Plan)
	to := "the broker"
	if mode != "" {
		to = "the " + mode + " gateway"
	}

	runner := Process{Name: "the msgbench process", Role: Runner}
	runner.add("base", BaseFiles, BaseBytes)
	var procs []Process
	var inClients int
	for i := 0; i < n; i++ {
		c := clientsOf(&spec.Workload, i, n)
		if !own {
			inClients += c
			continue
		}
		w := Process{Name: fmt.Sprintf("worker process %d", i), Role: Worker, Clients: c,
			Dials: []Dial{{To: to, Conns: c * perClient, Spread: in.SpreadSources}}}
		w.add("base", BaseFiles, BaseBytes)
		w.add("load generator", c*perClient, int64(c)*LoadgenBytesPerClient)
		procs = append(procs, w)
	}
	if !own {
		runner.Clients = inClients
		runner.add("load generator", inClients*perClient, int64(inClients)*LoadgenBytesPerClient)
		runner.Dials = append(runner.Dials, Dial{To: to, Conns: inClients * perClient, Spread: in.SpreadSources})
	}
	brokerConns := int(spec.Workload.Publishers+spec.Workload.Subscribers) * perClient
	if mode != "" {
		b, side := gatewayConns(spec, gw)
		brokerConns = b
		runner.add(mode+" gateway", GatewayBaseFiles+side+b, int64(b+side)*GatewayBytesPerSession)
		runner.Dials = append(runner.Dials, Dial{To: "the broker", Conns: b})
	}
	if spec.Impaired() {
		runner.add("link emulator", EmulatorFiles, 0)
	}
	var broker *Process
	switch {
	case spec.Broker.Type == v1alpha1.BrokerExternal:
	case in.EmbeddedBroker:
		runner.Connections = brokerConns
		runner.add("embedded broker", 1+brokerConns, int64(brokerConns)*GatewayBytesPerSession)
	case brokerName(spec.Broker.Type) != "":
		name := brokerName(spec.Broker.Type)
		broker = &Process{Name: "the broker process (" + name + ")", Role: Broker, Connections: brokerConns}
		base := BrokerBaseFiles
		if name != "Mosquitto" {
			base = JVMBrokerBaseFiles
		}
		broker.add("base", base, BaseBytes)
		var mem int64
		if name == "Mosquitto" {
			mem = int64(brokerConns) * MosquittoBytesPerConnection
		}
		broker.add(name, brokerConns, mem)
	}
	out := append([]Process{runner}, procs...)
	if broker != nil {
		out = append(out, *broker)
	}
	return out
}
