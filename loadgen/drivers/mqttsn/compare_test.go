package mqttsn_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/msgbench/msgbench/api/v1alpha1"
	_ "github.com/msgbench/msgbench/loadgen/drivers/mqtt"
	"github.com/msgbench/msgbench/results"
)

// TestCompareWithDirectMQTT is the side-by-side benchmark of docs/benchmarks-mqttsn.md: on one
// Mosquitto, MQTT-SN through the gateway against MQTT straight to the broker, 255-byte payloads,
// QoS 0/1/2, 1/4/16 publisher–subscriber pairs (one topic each), closed loop. It runs only with
// MSGBENCH_COMPARE=1 (about three minutes):
//
//	MSGBENCH_COMPARE=1 go test -run TestCompareWithDirectMQTT -v -timeout 20m ./loadgen/drivers/mqttsn/
//
// MSGBENCH_COMPARE_SECONDS sets each run's measured duration (default 3);
// MSGBENCH_COMPARE_QOS and MSGBENCH_COMPARE_CLIENTS (comma-separated) pick the cells;
// MSGBENCH_COMPARE_MODE=aggregating runs msgbench's gateway in aggregating mode (shared broker
// connections) instead of transparent mode. With
// PAHO_MQTTSN_GATEWAY set to an Eclipse Paho MQTT-SNGateway binary (built by you from its public
// source, eclipse/paho.mqtt-sn.embedded-c, `MQTTSNGateway/build.sh udp`), each cell also runs
// through that gateway, on the same broker.
func TestCompareWithDirectMQTT(t *testing.T) {
	if os.Getenv("MSGBENCH_COMPARE") == "" {
		t.Skip("set MSGBENCH_COMPARE=1 to run the MQTT-SN vs MQTT benchmark")
	}
	secs := 3
	if v := os.Getenv("MSGBENCH_COMPARE_SECONDS"); v != "" {
		_, _ = fmt.Sscan(v, &secs)
	}
	b := startBroker(t)
	var table strings.Builder
	paho := os.Getenv("PAHO_MQTTSN_GATEWAY")
	header := "| QoS | clients | MQTT direct (inflight 20) | MQTT direct (inflight 1) | MQTT-SN via gateway | SN / MQTT (20) | SN / MQTT (1) | SN lost | SN publish-ack p50 µs |"
	rule := "|---|---|---|---|---|---|---|---|---|"
	if paho != "" {
		header += " MQTT-SN via Paho gateway | Paho lost |"
		rule += "---|---|"
	}
	table.WriteString(header + "\n" + rule + "\n")
	for _, qos := range envInts(t, "MSGBENCH_COMPARE_QOS", 0, 1, 2) {
		for _, n := range envInts(t, "MSGBENCH_COMPARE_CLIENTS", 1, 4, 16) {
			direct20 := compareRun(t, b.Addr, "mqtt", qos, n, 20, secs)
			direct1 := direct20
			if qos > 0 {
				direct1 = compareRun(t, b.Addr, "mqtt", qos, n, 1, secs)
			}
			s := compareSpec("mqtt-sn", qos, n, 20, secs)
			if os.Getenv("MSGBENCH_COMPARE_MODE") == "aggregating" {
				s.MQTTSN.GatewayMode = v1alpha1.GatewayAggregating
			}
			if qos == 0 {
				// UDP has no flow control: a closed-loop QoS 0 publisher floods the gateway and
				// measures how much the receivers drop. Offer 80 % of what direct MQTT received
				// instead, open loop: the gateway path meets the target when it delivers that.
				s.Workload.Rate = int32(0.8 * direct20.Throughput.ReceivedPerSecond)
			}
			g := startGateway(t, b.Addr, "127.0.0.1:0", s)
			snRes := runResult(t, s, g.Addr().String())
			_ = g.Close()
			d20, d1, sr := direct20.Throughput.ReceivedPerSecond, direct1.Throughput.ReceivedPerSecond, snRes.Throughput.ReceivedPerSecond
			lost := 0.0
			if snRes.Expected > 0 {
				lost = 100 * float64(*snRes.Lost) / float64(snRes.Expected)
			}
			one := "—"
			if qos > 0 {
				one = fmt.Sprintf("%.0f", d1)
			}
			ack := "—"
			if snRes.Latency.PublishAck != nil && qos > 0 {
				ack = fmt.Sprint(snRes.Latency.PublishAck.P50Micros)
			}
			fmt.Fprintf(&table, "| %d | %d | %.0f | %s | %.0f | %.0f %% | %.0f %% | %.1f %% | %s |", qos, n, d20, one, sr, 100*sr/d20, 100*sr/d1, lost, ack)
			if paho != "" {
				addr := startPahoGateway(t, paho, b.Addr)
				ps := *s
				ps.Workload.TopicPrefix = comparePrefix()
				pr := runResult(t, &ps, addr)
				fmt.Fprintf(&table, " %.0f | %.1f %% |", pr.Throughput.ReceivedPerSecond, 100*float64(*pr.Lost)/float64(max(pr.Expected, 1)))
			}
			table.WriteString("\n")
		}
	}
	t.Logf("received messages per second, %d s closed loop each, GOMAXPROCS %d, Mosquitto %s:\n%s", secs, runtime.GOMAXPROCS(0), b.Version, table.String())
	if out := os.Getenv("MSGBENCH_COMPARE_OUT"); out != "" {
		_ = os.WriteFile(out, []byte(table.String()), 0o644)
	}
}

// envInts is the comma-separated numbers in environment variable name, or defaults.
func envInts(t *testing.T, name string, defaults ...int32) []int32 {
	v := os.Getenv(name)
	if v == "" {
		return defaults
	}
	var out []int32
	for _, f := range strings.Split(v, ",") {
		var n int32
		if _, err := fmt.Sscan(strings.TrimSpace(f), &n); err != nil {
			t.Fatalf("%s: %q is not a number", name, f)
		}
		out = append(out, n)
	}
	return out
}

// compareRuns numbers the comparison's runs for their topic prefixes.
var compareRuns atomic.Int32

// comparePrefix is a topic prefix no earlier run of the comparison used: the runs share one
// broker, and a run that ends with a backlog (a QoS 0 flood) would otherwise hand its late
// messages to the next run's subscribers (seen as duplicates there).
func comparePrefix() string { return fmt.Sprintf("cmp%d-", compareRuns.Add(1)) }

func compareSpec(protocol string, qos, n, inflight int32, secs int) *v1alpha1.MessagingBenchmarkSpec {
	s := spec(qos, v1alpha1.TopicIDNormal, v1alpha1.GatewayTransparent)
	s.Workload.TopicPrefix = comparePrefix()
	s.Protocol = v1alpha1.Protocol(protocol)
	s.MQTT.Inflight = inflight
	s.MQTTSN.RetryInterval.Duration = time.Second
	s.MQTTSN.MaxRetries = ptr.To[int32](5)
	s.Workload.Publishers, s.Workload.Subscribers, s.Workload.Topics = n, n, n
	s.Workload.PayloadBytes, s.Workload.Rate = 255, 0
	s.Workload.Duration.Duration = time.Duration(secs) * time.Second
	s.Workload.Warmup.Duration = 500 * time.Millisecond
	s.Workload.TimelineInterval.Duration = time.Second
	return s
}

func compareRun(t *testing.T, broker, protocol string, qos, n, inflight int32, secs int) *results.Result {
	return runResult(t, compareSpec(protocol, qos, n, inflight, secs), broker)
}

// runResult runs the engine and returns the result even when a figure disappoints.
func runResult(t *testing.T, s *v1alpha1.MessagingBenchmarkSpec, addr string) *results.Result {
	t.Helper()
	res := run(t, s, addr)
	t.Logf("%s qos %d clients %d inflight %d: sent %d received %d (%.0f/s) lost %d dups %d", s.Protocol, s.QoS, s.Workload.Publishers, s.MQTT.Inflight, res.Sent, res.Received, res.Throughput.ReceivedPerSecond, *res.Lost, *res.Duplicates)
	return res
}

// startPahoGateway runs the Eclipse Paho MQTT-SN gateway (transparent, UDP) in front of broker
// on a free port and returns its address; it is stopped when the test ends. Its packet log goes
// to /dev/null.
func startPahoGateway(t *testing.T, bin, broker string) string {
	t.Helper()
	host, port, _ := net.SplitHostPort(broker)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gwPort := pc.LocalAddr().(*net.UDPAddr).Port
	_ = pc.Close()
	dir := t.TempDir()
	conf := fmt.Sprintf(`GatewayID=1
GatewayName=paho-compare
MaxNumberOfClients=200
KeepAlive=60
BrokerName=%s
BrokerPortNo=%s
BrokerSecurePortNo=8883
AggregatingGateway=NO
QoS-1=NO
Forwarder=NO
PredefinedTopic=NO
ClientAuthentication=NO
GatewayPortNo=%d
MulticastPortNo=%d
MulticastIP=225.1.1.1
MulticastTTL=1
ShearedMemory=NO
`, host, port, gwPort, gwPort+1)
	if err := os.WriteFile(filepath.Join(dir, "gateway.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-f", filepath.Join(dir, "gateway.conf"))
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	time.Sleep(time.Second) // it binds its port after reading the configuration
	return fmt.Sprintf("127.0.0.1:%d", gwPort)
}
