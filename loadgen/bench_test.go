package loadgen_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/loadgen"
)

// These benchmarks are `make bench`, not `make test`: each b.N iteration is a whole run.
//
//	go test -run '^$' -bench . -benchtime 1x ./loadgen/

func benchBroker(b *testing.B) *mosquitto.Process {
	br, err := mosquitto.Start(context.Background(), mosquitto.Options{MaxInflight: 20})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = br.Stop() })
	return br
}

// BenchmarkAgainstMosquitto: 8 publishers, 8 subscribers, 256-byte payloads, unthrottled, at
// QoS 0 and 1. Reports delivered msgs/s and the CPU each side spends per delivered message.
func BenchmarkAgainstMosquitto(b *testing.B) {
	for _, qos := range []int32{0, 1} {
		b.Run(fmt.Sprintf("qos%d", qos), func(b *testing.B) {
			br := benchBroker(b)
			for i := 0; i < b.N; i++ {
				spec := baseSpec()
				spec.QoS = qos
				spec.Workload.Publishers, spec.Workload.Subscribers, spec.Workload.Topics = 8, 8, 8
				spec.Workload.PayloadBytes = 256
				spec.Workload.Warmup.Duration = 2 * time.Second
				spec.Workload.Duration.Duration = 10 * time.Second
				spec.Workload.TimelineInterval.Duration = time.Second
				res := run(b, spec, loadgen.Options{Address: br.Addr, BrokerUsage: br.Usage})
				per := func(cpu float64) float64 { return cpu / float64(res.Received) * 1e6 }
				b.ReportMetric(res.Throughput.ReceivedPerSecond, "recv-msgs/s")
				b.ReportMetric(per(res.Resources.LoadgenCPUSeconds), "loadgen-cpu-µs/msg")
				b.ReportMetric(per(*res.Resources.BrokerCPUSeconds), "broker-cpu-µs/msg")
				b.ReportMetric(res.Resources.LoadgenCPUSeconds / *res.Resources.BrokerCPUSeconds, "loadgen/broker-cpu")
				b.ReportMetric(float64(*res.Lost), "lost")
			}
		})
	}
}

// BenchmarkTenThousandConnections holds 10,000 MQTT clients in one worker (9,990 subscribers and
// 10 publishers at 100 msg/s), ramped at 2,000 connections per second, and reports the resident
// memory each connection costs the load generator.
func BenchmarkTenThousandConnections(b *testing.B) {
	br := benchBroker(b)
	for i := 0; i < b.N; i++ {
		before := rss()
		var atReady int64
		spec := baseSpec()
		spec.QoS = 0
		spec.Workload.Publishers, spec.Workload.Subscribers, spec.Workload.Topics = 10, 9990, 10
		spec.Workload.ConnectRate = 2000
		spec.Workload.Rate = 100
		spec.Workload.Warmup.Duration = 0
		spec.Workload.Duration.Duration = 5 * time.Second
		res := run(b, spec, loadgen.Options{Address: br.Addr, Ready: func() { atReady = rss() }})
		conns := float64(res.Wire.Connections)
		b.ReportMetric(conns, "connections")
		b.ReportMetric(float64(atReady-before)/float64(spec.Workload.Subscribers), "rss-bytes/connection")
		b.ReportMetric(float64(res.Resources.LoadgenMaxRSSBytes)/(1<<20), "peak-rss-MiB")
		b.ReportMetric(float64(res.Latency.Connect.P99Micros)/1000, "connect-p99-ms")
	}
}

// rss is this process's resident set size now (VmRSS).
func rss() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	m := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindSubmatch(data)
	if m == nil {
		return 0
	}
	kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return kb * 1024
}

// BenchmarkVersusMQTTBenchmark runs krylovsk/mqtt-benchmark (a well-known Go MQTT load tool,
// built by you from its public source; set MQTT_BENCHMARK to its binary) and msgbench against
// the same Mosquitto at the same client count and QoS, publish-only as that tool works, and
// reports both publish rates. Skipped without MQTT_BENCHMARK.
func BenchmarkVersusMQTTBenchmark(b *testing.B) {
	tool := os.Getenv("MQTT_BENCHMARK")
	if tool == "" {
		b.Skip("set MQTT_BENCHMARK to a krylovsk/mqtt-benchmark binary")
	}
	for _, qos := range []int32{0, 1} {
		b.Run(fmt.Sprintf("qos%d", qos), func(b *testing.B) {
			br := benchBroker(b)
			for i := 0; i < b.N; i++ {
				const clients, count = 8, 20000
				start := time.Now()
				out, err := exec.Command(tool, "-broker", "tcp://"+br.Addr, "-clients", strconv.Itoa(clients), "-count", strconv.Itoa(count),
					"-qos", strconv.Itoa(int(qos)), "-size", "256", "-message-interval", "0", "-quiet", "-format", "text").CombinedOutput()
				if err != nil {
					b.Fatalf("%v\n%s", err, out)
				}
				elapsed := time.Since(start)
				m := regexp.MustCompile(`Total Bandwidth \(msg/sec\):\s+([0-9.]+)`).FindSubmatch(out)
				if m == nil {
					b.Fatalf("cannot read mqtt-benchmark's output:\n%s", out)
				}
				theirs, _ := strconv.ParseFloat(string(m[1]), 64)
				spec := baseSpec()
				spec.QoS = qos
				spec.Workload.Publishers, spec.Workload.Subscribers, spec.Workload.Topics = clients, 0, clients
				spec.Workload.PayloadBytes = 256
				spec.Workload.Messages = clients * count
				spec.Workload.Warmup.Duration = 0
				ours := run(b, spec, loadgen.Options{Address: br.Addr})
				b.ReportMetric(theirs, "mqtt-benchmark-msgs/s")
				b.ReportMetric(ours.Throughput.SentPerSecond, "msgbench-msgs/s")
				b.ReportMetric(ours.Throughput.SentPerSecond/theirs, "ratio")
				b.Logf("mqtt-benchmark took %s for %d messages", elapsed.Round(time.Millisecond), clients*count)
			}
		})
	}
}
