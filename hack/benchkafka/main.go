// Command benchkafka measures the msgbench Kafka driver on one local broker (docs/benchmarks-kafka.md):
//
//   - clients: franz-go against sarama (hack/kafkaclients), for the choice of client;
//   - perf: msgbench's producer against Kafka's own ProducerPerformance, and msgbench's subscriber
//     against ConsumerPerformance, back to back at equal record size, acks and batching;
//   - grid: the SINETStream study's grid (1024/10240/102400 bytes × 1/2/4/8 threads) for Kafka
//     and for MQTT on Mosquitto, from the study's suite (config/samples/studies) without network emulation.
//
// It starts the brokers itself (brokers/kafka, brokers/mosquitto) and stops them by PID.
//
//	go run ./hack/benchkafka [-mode clients|perf|grid|all] [-records 200000] [-repeat 3]
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/kafka"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/internal/proc"
	"github.com/msgbench/msgbench/loadgen"
	_ "github.com/msgbench/msgbench/loadgen/drivers/all"
	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/suite"
)

func main() {
	mode := flag.String("mode", "all", "clients, perf, grid or all")
	records := flag.Int("records", 200000, "records per producer comparison run")
	repeat := flag.Int("repeat", 3, "runs of each side, alternating")
	sizes := flag.String("sizes", "100,1024,10240", "record sizes of the perf comparison")
	flag.Parse()
	if err := run(*mode, *records, *repeat, *sizes); err != nil {
		fmt.Fprintln(os.Stderr, "benchkafka:", err)
		os.Exit(1)
	}
}

func run(mode string, records, repeat int, sizes string) error {
	ctx := context.Background()
	libs, err := kafka.Libs()
	if err != nil {
		return err
	}
	b, err := kafka.Start(ctx, kafka.Options{Libs: libs, HeapMB: 1024})
	if err != nil {
		return err
	}
	defer func() { _ = b.Stop() }()
	broker = b
	fmt.Printf("# machine: %d CPUs (%s), %s, Kafka %s (java -Xmx1g), broker %s\n", runtime.NumCPU(), cpuModel(), runtime.Version(), b.Version, b.Addr)
	if mode == "clients" || mode == "all" {
		// The client comparison lives in its own module (hack/kafkaclients), so its second
		// client never becomes a dependency of msgbench.
		fmt.Printf("\n## pure-Go producers, 1024-byte records, acks=1, linger 5 ms, 16 KiB batches\n")
		cmd := exec.Command("go", "run", ".", "-addr", b.Addr, "-records", strconv.Itoa(records), "-size", "1024", "-repeat", strconv.Itoa(repeat))
		cmd.Dir = filepath.Join("hack", "kafkaclients")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("hack/kafkaclients: %w", err)
		}
	}
	if mode == "perf" || mode == "all" {
		for _, s := range strings.Split(sizes, ",") {
			size, _ := strconv.Atoi(s)
			if err := perf(ctx, b, libs, size, records, repeat); err != nil {
				return err
			}
		}
	}
	if mode == "grid" || mode == "all" {
		return grid(ctx, b)
	}
	return nil
}

// Producer settings both sides use: acks=1, no compression, batch.size 16384, linger.ms 5
// (Kafka 4's default), at most 10000 records outstanding (msgbench's spec.mqtt.inflight; Java
// bounds by buffer.memory, 32 MiB).
const (
	acks   = 1
	linger = 5
	batch  = 16384
	window = 10000
)

func perf(ctx context.Context, b *kafka.Process, libs string, size, records, repeat int) error {
	// About 256 MiB per run (at most `records`): long enough for both JVMs' JIT to settle,
	// short enough not to fill the disk.
	records = max(1000, min(records, (256<<20)/max(size, 1)))
	// Warm-up, not reported: the broker's JIT compiles its produce and fetch paths.
	warm := fmt.Sprintf("warm-%d-%d", size, time.Now().UnixNano()%1e6)
	if err := createTopic(libs, b.Addr, warm); err != nil {
		return err
	}
	if _, _, err := java(libs, "org.apache.kafka.tools.ProducerPerformance", "--topic", warm, "--num-records", strconv.Itoa(records/2),
		"--record-size", strconv.Itoa(size), "--throughput", "-1", "--producer-props", "bootstrap.servers="+b.Addr); err != nil {
		return err
	}
	if _, _, err := msgbench(ctx, b.Addr, size, records/2, 1, 1); err != nil {
		return err
	}
	fmt.Printf("\n## producer and consumer, %d-byte records, %d records, acks=%d linger.ms=%d batch.size=%d\n", size, records, acks, linger, batch)
	fmt.Println("| run | tool | records/s | MiB/s | tool CPU s | broker CPU s |")
	fmt.Println("| --- | --- | ---: | ---: | ---: | ---: |")
	for i := 1; i <= repeat; i++ {
		topic := fmt.Sprintf("perf-%d-%d-%d", size, i, time.Now().UnixNano()%1e6)
		// Java producer (ProducerPerformance creates nothing: make the topic first).
		if err := createTopic(libs, b.Addr, topic); err != nil {
			return err
		}
		before, _ := b.Usage()
		out, cpu, err := java(libs, "org.apache.kafka.tools.ProducerPerformance", "--topic", topic, "--num-records", strconv.Itoa(records),
			"--record-size", strconv.Itoa(size), "--throughput", "-1", "--producer-props", "bootstrap.servers="+b.Addr,
			fmt.Sprintf("acks=%d", acks), fmt.Sprintf("linger.ms=%d", linger), fmt.Sprintf("batch.size=%d", batch), "compression.type=none")
		if err != nil {
			return err
		}
		after, _ := b.Usage()
		rps, mbps := parseProducer(out)
		fmt.Printf("| %d | kafka-producer-perf-test | %.0f | %.1f | %.1f | %.1f |\n", i, rps, mbps, cpu.Seconds(), (after.CPU - before.CPU).Seconds())

		// msgbench publisher, same settings, producer only. Its figure here is records over the
		// whole run's wall time — connect, topic creation and the wait for the last
		// acknowledgement included — so it cannot flatter msgbench (the engine's sent/s counts a
		// record when Publish returned, before its acknowledgement).
		res, wall, err := msgbench(ctx, b.Addr, size, records, 1, 0)
		if err != nil {
			return err
		}
		if res.Acked != int64(records) {
			return fmt.Errorf("msgbench: %d of %d records acknowledged", res.Acked, records)
		}
		rate := float64(records) / wall.Seconds()
		fmt.Printf("| %d | msgbench kafka publisher (acked, whole run) | %.0f | %.1f | %.1f | %.1f |\n", i, rate,
			rate*float64(size)/(1<<20), res.Resources.LoadgenCPUSeconds, deref(res.Resources.BrokerCPUSeconds))

		// Java consumer reading the records the Java producer wrote.
		before, _ = b.Usage()
		out, cpu, err = java(libs, "org.apache.kafka.tools.ConsumerPerformance", "--bootstrap-server", b.Addr, "--topic", topic,
			"--messages", strconv.Itoa(records), "--timeout", "60000")
		if err != nil {
			return err
		}
		after, _ = b.Usage()
		crps, cmbps := parseConsumer(out)
		fmt.Printf("| %d | kafka-consumer-perf-test (catch-up read) | %.0f | %.1f | %.1f | %.1f |\n", i, crps, cmbps, cpu.Seconds(), (after.CPU - before.CPU).Seconds())

		// msgbench publisher and subscriber together: the subscriber consumes live.
		res, _, err = msgbench(ctx, b.Addr, size, records, 1, 1)
		if err != nil {
			return err
		}
		fmt.Printf("| %d | msgbench kafka publisher + subscriber (live; received) | %.0f | %.1f | %.1f | %.1f |\n", i, res.Throughput.ReceivedPerSecond,
			res.Throughput.ReceivedBytesPerSecond/(1<<20), res.Resources.LoadgenCPUSeconds, deref(res.Resources.BrokerCPUSeconds))
	}
	return nil
}

func deref(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}

func msgbench(ctx context.Context, addr string, size, records, pubs, subs int) (*results.Result, time.Duration, error) {
	spec := &v1alpha1.MessagingBenchmarkSpec{
		Protocol: v1alpha1.ProtocolKafka, QoS: acks,
		MQTT:    v1alpha1.MQTTSpec{Inflight: window},
		Kafka:   v1alpha1.KafkaSpec{Partitions: 1, Replicas: 1, LingerMs: linger, BatchBytes: batch, Compression: "none"},
		Broker:  v1alpha1.BrokerSpec{Type: v1alpha1.BrokerKafka},
		Workers: v1alpha1.WorkersSpec{Replicas: 1},
		Workload: v1alpha1.WorkloadSpec{Publishers: int32(pubs), Subscribers: int32(subs), Topics: 1,
			TopicPrefix: fmt.Sprintf("mb-%d-", time.Now().UnixNano()%1e9), PayloadBytes: int32(size), Messages: int64(records),
			TimelineInterval: metav1.Duration{Duration: time.Second}},
	}
	b := broker
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	start := time.Now()
	res, err := loadgen.Run(ctx, loadgen.Options{Name: "perf", Spec: spec, Address: addr, BrokerUsage: b.Usage})
	wall := time.Since(start)
	if err != nil {
		return nil, 0, err
	}
	if res.Phase != "Succeeded" {
		return nil, 0, fmt.Errorf("msgbench run %s: %s", res.Phase, res.Message)
	}
	return res, wall, nil
}

// broker is the running Kafka, for usage figures.
var broker *kafka.Process

func java(libs, class string, args ...string) (string, time.Duration, error) {
	cmd := exec.Command("java", append([]string{"-Xmx512m", "-Dlog4j2.level=WARN", "-cp", filepath.Join(libs, "*"), class}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", 0, fmt.Errorf("%s: %w: %s", class, err, out.String())
	}
	u := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return out.String(), u, nil
}

func createTopic(libs, addr, topic string) error {
	_, _, err := java(libs, "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", addr, "--create", "--topic", topic,
		"--partitions", "1", "--replication-factor", "1")
	return err
}

// parseProducer reads ProducerPerformance's summary: "N records sent, X records/sec (Y MB/sec), …".
func parseProducer(out string) (rps, mbps float64) {
	re := regexp.MustCompile(`records sent, ([0-9.]+) records/sec \(([0-9.]+) MB/sec\)`)
	m := re.FindAllStringSubmatch(out, -1)
	if len(m) == 0 {
		return 0, 0
	}
	last := m[len(m)-1]
	rps, _ = strconv.ParseFloat(last[1], 64)
	mbps, _ = strconv.ParseFloat(last[2], 64)
	return rps, mbps
}

// parseConsumer reads ConsumerPerformance's CSV line; fetch.nMsg.sec and fetch.MB.sec exclude
// the consumer group's join time.
func parseConsumer(out string) (rps, mbps float64) {
	sc := bufio.NewScanner(strings.NewReader(out))
	var header []string
	for sc.Scan() {
		f := strings.Split(sc.Text(), ",")
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		if len(f) > 5 && f[0] == "start.time" {
			header = f
			continue
		}
		if header != nil && len(f) == len(header) {
			for i, h := range header {
				v, _ := strconv.ParseFloat(f[i], 64)
				switch h {
				case "fetch.nMsg.sec":
					rps = v
				case "fetch.MB.sec":
					mbps = v
				}
			}
		}
	}
	return rps, mbps
}

// grid runs the SINETStream study's cells (the 5g-sa points of its suite, without the network
// profile) for Kafka on the local Kafka and MQTT on a local Mosquitto.
func grid(ctx context.Context, b *kafka.Process) error {
	m, err := mosquitto.Start(ctx, mosquitto.Options{MaxInflight: 20})
	if err != nil {
		return err
	}
	defer func() { _ = m.Stop() }()
	path := filepath.Join("config", "samples", "studies", "sinetstream-5g-sa-vs-lte.yaml")
	fmt.Printf("\n## SINETStream grid, local, no network emulation (Mosquitto %s, Kafka %s), qos 1, 1000 messages per thread\n", m.Version, b.Version)
	fmt.Println("| protocol | payload | threads | received msg/s | received MB/s (10^6) | e2e p50 ms | e2e p99 ms | lost | loadgen CPU s | broker CPU s |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, size := range []int{1024, 10240, 102400} {
		for _, threads := range []int{1, 2, 4, 8} {
			for _, proto := range []string{"kafka", "mqtt"} {
				mb, err := studyPoint(path, map[string]string{"network.profile": "5g-sa", "protocol": proto,
					"workload.payloadBytes": strconv.Itoa(size), "workload.publishers": strconv.Itoa(threads)},
					fmt.Sprintf("workload.topicPrefix=grid-%d-", time.Now().UnixNano()%1e9))
				if err != nil {
					return err
				}
				addr, usage := b.Addr, func() (proc.Usage, error) { return b.Usage() }
				if proto == "mqtt" {
					addr, usage = m.Addr, m.Usage
				}
				rctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
				res, err := loadgen.Run(rctx, loadgen.Options{Name: mb.Name, Spec: &mb.Spec, Address: addr, BrokerUsage: usage})
				cancel()
				if err != nil {
					return fmt.Errorf("%s: %w", path, err)
				}
				e2e := res.Latency.EndToEnd
				fmt.Printf("| %s | %d | %d | %.0f | %.2f | %.1f | %.1f | %d | %.2f | %.2f |\n", proto, size, threads, res.Throughput.ReceivedPerSecond,
					res.Throughput.ReceivedBytesPerSecond/1e6, float64(e2e.P50Micros)/1000, float64(e2e.P99Micros)/1000, *res.Lost,
					res.Resources.LoadgenCPUSeconds, deref(res.Resources.BrokerCPUSeconds))
			}
		}
	}
	return nil
}

// studyPoint is the first run of the suite's point with the given values, its network profile
// replaced by none.
func studyPoint(path string, values map[string]string, overrides ...string) (*v1alpha1.MessagingBenchmark, error) {
	d, err := manifest.ReadSuiteDoc(path, overrides...)
	if err != nil {
		return nil, err
	}
	points, err := suite.Expand(d.Suite, d.Template)
	if err != nil {
		return nil, err
	}
	for _, p := range points {
		text, match := p.Text(), true
		for f, v := range values {
			match = match && text[f] == v
		}
		if !match {
			continue
		}
		for i := range p.Values {
			if p.Values[i].Field == "network.profile" {
				p.Values[i].Value = string(v1alpha1.ProfileNone)
			}
		}
		return suite.Benchmark(d.Suite, d.Template, p, 1)
	}
	return nil, fmt.Errorf("%s: no point with %v", path, values)
}

func cpuModel() string {
	data, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
		}
	}
	return "unknown CPU"
}
