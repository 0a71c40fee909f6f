package fleetlimits

import (
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/plan"
)

// thisMachine is the CI machine's limits: 20,000 files, the default port range, 23 GB free.
var thisMachine = Machine{NoFileSoft: 20000, NoFileHard: 20000, PortRange: 28232, MemAvailable: 23 << 30}

// split is localrun's rule: one process per worker unless the link is emulated.
// split is localrun's workerProcesses: over an emulated link too, the workers run as processes
// (in the link's device namespace).
func split(s *v1alpha1.MessagingBenchmarkSpec) bool { return s.Workers.Replicas > 1 }

// planned is in with its spec compiled, as localrun gives it.
func planned(t testing.TB, in Input) Input {
	t.Helper()
	p, err := plan.Compile(in.Spec, plan.Admitted)
	if err != nil {
		t.Fatal(err)
	}
	in.Plan = p
	return in
}

type specOpt func(*v1alpha1.MessagingBenchmarkSpec)

func spec(p, s, topics, workers int32, opts ...specOpt) *v1alpha1.MessagingBenchmarkSpec {
	sp := &v1alpha1.MessagingBenchmarkSpec{Protocol: v1alpha1.ProtocolMQTT, Broker: v1alpha1.BrokerSpec{Type: v1alpha1.BrokerMosquitto}}
	sp.Workload.Publishers, sp.Workload.Subscribers, sp.Workload.Topics = p, s, topics
	sp.Workers.Replicas = workers
	for _, o := range opts {
		o(sp)
	}
	return sp
}

func protocol(p v1alpha1.Protocol) specOpt {
	return func(s *v1alpha1.MessagingBenchmarkSpec) {
		s.Protocol = p
		if p == v1alpha1.ProtocolKafka {
			s.Broker.Type = v1alpha1.BrokerKafka
		}
	}
}

func impaired(s *v1alpha1.MessagingBenchmarkSpec) { s.Network.Profile = "lte" }

func TestNeeds(t *testing.T) {
	type want struct{ runner, worker0, broker, brokerConns int }
	for _, c := range []struct {
		name     string
		spec     *v1alpha1.MessagingBenchmarkSpec
		embedded bool
		want     want
	}{
		{"mqtt in-process", spec(1000, 1000, 10, 1), false, want{runner: BaseFiles + 2000, broker: BrokerBaseFiles + 2000, brokerConns: 2000}},
		{"mqtt two worker processes", spec(1000, 1000, 10, 2), false, want{runner: BaseFiles, worker0: BaseFiles + 1000, broker: BrokerBaseFiles + 2000, brokerConns: 2000}},
		{"mqtt over a link: worker processes too", spec(1000, 1000, 10, 2, impaired), false, want{runner: BaseFiles + EmulatorFiles, worker0: BaseFiles + 1000, broker: BrokerBaseFiles + 2000, brokerConns: 2000}},
		{"kafka: 4 connections a client", spec(100, 100, 4, 1, protocol(v1alpha1.ProtocolKafka)), false, want{runner: BaseFiles + 800, broker: JVMBrokerBaseFiles + 800, brokerConns: 800}},
		{"mqtt-sn transparent: a broker connection a client", spec(500, 500, 4, 1, protocol(v1alpha1.ProtocolMQTTSN)), false,
			want{runner: BaseFiles + 1000 + GatewayBaseFiles + 1000, broker: BrokerBaseFiles + 1000, brokerConns: 1000}},
		{"mqtt-sn aggregating: a pool", spec(500, 500, 4, 1, protocol(v1alpha1.ProtocolMQTTSN), func(s *v1alpha1.MessagingBenchmarkSpec) {
			s.MQTTSN.GatewayMode = v1alpha1.GatewayAggregating
		}), false, want{runner: BaseFiles + 1000 + GatewayBaseFiles + 4, broker: BrokerBaseFiles + 4, brokerConns: 4}},
		{"quic gateway: a TCP connection a session", spec(500, 500, 4, 1, protocol(v1alpha1.ProtocolMQTTQUIC)), false,
			want{runner: BaseFiles + 1000 + GatewayBaseFiles + 1000, broker: BrokerBaseFiles + 1000, brokerConns: 1000}},
		{"http/1.1: accepted sockets, a publisher pool, a connection a subscription", spec(500, 300, 4, 1, protocol(v1alpha1.ProtocolHTTP)), false,
			want{runner: BaseFiles + 800 + GatewayBaseFiles + 800 + 4 + 300, broker: BrokerBaseFiles + 304, brokerConns: 304}},
		{"http/3 shares one UDP socket", spec(500, 300, 4, 1, protocol(v1alpha1.ProtocolHTTP), func(s *v1alpha1.MessagingBenchmarkSpec) {
			s.HTTP.Version = v1alpha1.HTTP3
		}), false, want{runner: BaseFiles + 800 + GatewayBaseFiles + 4 + 300, broker: BrokerBaseFiles + 304, brokerConns: 304}},
		{"embedded broker in msgbench", spec(1000, 1000, 10, 1), true, want{runner: BaseFiles + 2000 + 1 + 2000, brokerConns: 2000}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ps := Needs(planned(t, Input{Spec: c.spec, WorkerProcesses: split, EmbeddedBroker: c.embedded, SpreadSources: true}))
			var got want
			for _, p := range ps {
				switch {
				case p.Role == Runner:
					got.runner = p.Files
					if c.embedded {
						got.brokerConns = p.Connections
					}
				case p.Name == "worker process 0":
					got.worker0 = p.Files
				case p.Role == Broker:
					got.broker, got.brokerConns = p.Files, p.Connections
				}
			}
			if got != c.want {
				t.Errorf("files %+v, want %+v", got, c.want)
			}
		})
	}
}

// clientsOf counts each worker's share exactly as plan.Group.Share deals it, and maxShare, which
// splitInto searches with, is the largest.
func TestMaxShareIsShares(t *testing.T) {
	for _, w := range []v1alpha1.WorkloadSpec{
		{Publishers: 30000, Topics: 1}, {Publishers: 12000, Subscribers: 12000, Topics: 7}, {Publishers: 5, Subscribers: 3, Topics: 10},
		{Publishers: 10001, Subscribers: 9999, Topics: 100}, {Publishers: 1, Topics: 1}, {Publishers: 7, Subscribers: 2, Topics: 3},
	} {
		for k := 1; k <= 12; k++ {
			most := 0
			for i := 0; i < k; i++ {
				g := plan.Group{Publishers: w.Publishers, Subscribers: w.Subscribers, Topics: w.Topics}
				p := g.Share(i, k)
				n := len(p.Publishers) + len(p.Subscribers)
				if got := clientsOf(&w, i, k); got != n {
					t.Errorf("%d+%d clients on %d topics, worker %d of %d: clientsOf %d, Share %d", w.Publishers, w.Subscribers, w.Topics, i, k, got, n)
				}
				most = max(most, n)
			}
			if got := maxShare(&w, k); got != most {
				t.Errorf("%d+%d clients on %d topics, %d workers: maxShare %d, Share's largest %d", w.Publishers, w.Subscribers, w.Topics, k, got, most)
			}
		}
	}
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		name string
		spec *v1alpha1.MessagingBenchmarkSpec
		m    Machine
		want []string // substrings of the error, in order of lines; nil: fits
	}{
		{"fits", spec(5000, 5000, 100, 1), thisMachine, nil},
		{"fits split", spec(9000, 9000, 100, 2), thisMachine, nil},
		{"30,000 publishers in one worker", spec(30000, 0, 100, 1), thisMachine, []string{
			"spec.workload: 30,000 clients need 30,032 open files in the msgbench process (base 32, load generator 30,000), above this machine's hard limit of 20,000 (RLIMIT_NOFILE). Split the clients into 2 worker processes: --set workers.replicas=2; or raise the hard limit to 30,032",
			"30,000 clients need 30,016 open files in the broker process (Mosquitto)", "at most 19,984 connections with this limit",
		}},
		{"one topic cannot be split without topics", spec(30000, 0, 1, 1), thisMachine, []string{"--set workers.replicas=2 --set workload.topics=2"}},
		{"12,000 + 12,000 in two processes: the broker is the limit", spec(12000, 12000, 100, 2), thisMachine, []string{
			"spec.workload: 24,000 clients need 24,016 open files in the broker process (Mosquitto), above this machine's hard limit of 20,000 (RLIMIT_NOFILE). Mosquitto holds one file per connection: at most 19,984 connections",
		}},
		{"a worker process too big asks for more", spec(30000, 0, 100, 2, func(s *v1alpha1.MessagingBenchmarkSpec) {
			s.Broker.Type = v1alpha1.BrokerExternal
		}), Machine{NoFileSoft: 10000, NoFileHard: 10000, PortRange: 28232}, []string{
			"15,000 clients need 15,032 open files in worker process 0", "--set workers.replicas=4",
		}},
		{"soft below hard is named", spec(15000, 0, 100, 1), Machine{NoFileSoft: 1024, NoFileHard: 20000, PortRange: 28232}, []string{
			"the limit of 1,024 (RLIMIT_NOFILE; the hard limit is 20,000)",
		}},
		{"over an emulated link the workers split too", spec(25000, 0, 100, 1, impaired), thisMachine, []string{
			"Split the clients into 2 worker processes: --set workers.replicas=2",
		}},
		{"one device-side address runs out of ports", spec(15000, 15000, 100, 1, impaired), Machine{NoFileSoft: 100000, NoFileHard: 100000, PortRange: 28232}, []string{
			"spec.workload: 30,000 connections to the broker from one source address need as many ephemeral ports, above the 28,232 of net.ipv4.ip_local_port_range; the clients dial from the emulated link's device side",
		}},
		{"the transparent gateway's broker connections", spec(15000, 15000, 100, 4, protocol(v1alpha1.ProtocolMQTTSN)), Machine{NoFileSoft: 100000, NoFileHard: 100000, PortRange: 28232}, []string{
			"30,000 connections to the broker from one source address", "--set mqttsn.gatewayMode=aggregating",
		}},
		{"the gateway cannot be split", spec(6000, 6000, 100, 4, protocol(v1alpha1.ProtocolMQTTQUIC)), Machine{NoFileSoft: 10000, NoFileHard: 10000, PortRange: 28232}, []string{
			"open files in the msgbench process (base 32, quic gateway 12,004)", "The in-process parts cannot be split",
			"in the broker process (Mosquitto)",
		}},
		{"kafka clients count 4 files each in the broker", spec(2000, 2000, 100, 2, protocol(v1alpha1.ProtocolKafka)), Machine{NoFileSoft: 10000, NoFileHard: 10000, PortRange: 28232}, []string{
			"4,000 clients need 16,256 open files in the broker process (Kafka)", "each Kafka client has up to 4: at most 2,436 clients",
		}},
		{"memory", spec(50000, 50000, 100, 10), Machine{NoFileSoft: 1 << 20, NoFileHard: 1 << 20, PortRange: 28232, MemAvailable: 512 << 20}, []string{
			"spec.workload: 100,000 clients in 10 worker processes need about 1.5 GB of memory", "10 worker processes × 136.0 MB each = 1.4 GB",
			"above the 536.9 MB available (MemAvailable, /proc/meminfo)",
		}},
		{"spread clients use addresses of their own", spec(50000, 50000, 100, 10), Machine{NoFileSoft: 1 << 20, NoFileHard: 1 << 20, PortRange: 28232}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Check(planned(t, Input{Spec: c.spec, WorkerProcesses: split, SpreadSources: !c.spec.Impaired()}), c.m)
			if c.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestNum(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 20130: "20,130", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := num(n); got != want {
			t.Errorf("num(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestMemAvailable(t *testing.T) {
	in := "MemTotal:       24684092 kB\nMemFree:         1000 kB\nMemAvailable:   23698548 kB\n"
	if got := memAvailable([]byte(in)); got != 23698548<<10 {
		t.Errorf("memAvailable = %d", got)
	}
	if got := memAvailable([]byte("MemTotal: 1 kB\n")); got != 0 {
		t.Errorf("without the line: %d, want 0", got)
	}
}

// A million clients in 20 worker processes are worked out at once: the workers and their ports
// fit, the one broker process does not.
func TestCheckAMillionIsQuick(t *testing.T) {
	start := time.Now()
	err := Check(planned(t, Input{Spec: spec(500000, 500000, 1000, 20), WorkerProcesses: split, SpreadSources: true}),
		Machine{NoFileSoft: 1000000, NoFileHard: 1000000, PortRange: 28232, MemAvailable: 64 << 30})
	if err == nil || !strings.Contains(err.Error(), "1,000,000 clients need 1,000,016 open files in the broker process (Mosquitto)") ||
		strings.Contains(err.Error(), "worker process") || strings.Contains(err.Error(), "ephemeral") {
		t.Errorf("err = %v", err)
	}
	if took := time.Since(start); took > 100*time.Millisecond {
		t.Errorf("Check took %s", took)
	}
}

func TestSummary(t *testing.T) {
	got := Summary(planned(t, Input{Spec: spec(1000, 1000, 10, 2), WorkerProcesses: split}), thisMachine)
	want := "open files: the msgbench process 32, 2 worker processes × 1,032 each = 2,064, the broker process (Mosquitto) 2,016, of 20,000 (RLIMIT_NOFILE); memory about 0.2 GB of 24.7 GB available"
	if got != want {
		t.Errorf("Summary:\n got %s\nwant %s", got, want)
	}
}

// TestManyWorkersReadably: --set workers.replicas=1000 on a two-client sample was refused with
// 27 KB listing a thousand "worker process N 0.0 GB"; the message sums up the workers (N × each
// = total) against what the machine has, says what to change, and stays short however many.
func TestManyWorkersReadably(t *testing.T) {
	m := thisMachine
	for _, replicas := range []int32{1000, 100000} {
		err := Check(planned(t, Input{Spec: spec(1, 1, 1, replicas), WorkerProcesses: split, SpreadSources: true}), m)
		if err == nil {
			t.Fatalf("%d workers: accepted", replicas)
		}
		msg := err.Error()
		for _, w := range []string{num(int(replicas)) + " worker processes × 33.6 MB each = ", "above the 24.7 GB available",
			"--set workers.replicas="} {
			if !strings.Contains(msg, w) {
				t.Errorf("%d workers: the error lacks %q:\n%s", replicas, w, msg)
			}
		}
		if strings.Contains(msg, "0.0 GB") || strings.Contains(msg, "worker process 1 ") || len(msg) > 800 {
			t.Errorf("%d workers: %d bytes:\n%s", replicas, len(msg), msg)
		}
	}
	// Worker processes each above the open-files limit: one message for them all.
	err := Check(planned(t, Input{Spec: spec(200000, 0, 100, 4), WorkerProcesses: split, SpreadSources: true}), Machine{NoFileSoft: 20000, NoFileHard: 20000, PortRange: 28232})
	if err == nil || strings.Count(err.Error(), "open files in worker process") != 1 || !strings.Contains(err.Error(), "worker process 0 (and 3 more worker processes like it)") {
		t.Errorf("four workers above the limit: %v", err)
	}
	// The log's summary likewise.
	if s := Summary(planned(t, Input{Spec: spec(1, 1, 1, 1000), WorkerProcesses: split}), m); len(s) > 300 {
		t.Errorf("Summary of 1,000 workers: %d bytes: %s", len(s), s)
	}
}
