package mqtt_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/loadgen/drivers/driverstest"
)

// BenchmarkIdleConnectionMemory holds MSGBENCH_IDLE_CONNS (default 2,000) idle MQTT connections
// to a real Mosquitto through the driver — half subscribed subscribers, half connected
// publishers that have not published — and reports what each costs the load generator: Go heap
// and goroutine stacks (runtime.MemStats after a GC) and the process's RSS growth, per
// connection. docs/benchmarks.md ("Fleets") has the figures; the goal is ≤ 8 KB.
//
//	go test -run '^$' -bench IdleConnectionMemory -benchtime 1x ./loadgen/drivers/mqtt/
func BenchmarkIdleConnectionMemory(b *testing.B) {
	n := 2000
	if s := os.Getenv("MSGBENCH_IDLE_CONNS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatalf("MSGBENCH_IDLE_CONNS=%q: %v", s, err)
		}
	}
	br, err := mosquitto.Start(context.Background(), mosquitto.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = br.Stop() }()
	spec := &v1alpha1.MessagingBenchmarkSpec{Protocol: v1alpha1.ProtocolMQTT, QoS: 1,
		MQTT:     v1alpha1.MQTTSpec{Version: v1alpha1.MQTT311, Inflight: 20},
		Workload: v1alpha1.WorkloadSpec{PayloadBytes: 256}}
	drv, err := drivers.New(string(v1alpha1.ProtocolMQTT), drivers.Config{Group: driverstest.Group(b, spec), Address: br.Addr,
		Now: func() int64 { return time.Now().UnixNano() }})
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		before, rss0 := memNow()
		sessions := make([]drivers.Session, 0, n)
		for i := range n {
			c := drivers.Client{ID: fmt.Sprintf("idle-%d", i), Topic: fmt.Sprintf("idle/%d", i/2), Role: drivers.Role(i % 2)}
			s, err := drv.Connect(context.Background(), c, nopHandler{})
			if err != nil {
				b.Fatal(err)
			}
			if c.Role == drivers.Subscriber {
				if err := s.Subscribe(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			sessions = append(sessions, s)
		}
		time.Sleep(200 * time.Millisecond) // let readers settle into their blocking read
		after, rss1 := memNow()
		if path := os.Getenv("MSGBENCH_IDLE_HEAPPROFILE"); path != "" { // what the heap holds
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			_ = pprof.WriteHeapProfile(f)
			_ = f.Close()
		}
		heap := float64(after.HeapInuse) - float64(before.HeapInuse)
		stack := float64(after.StackInuse) - float64(before.StackInuse)
		b.ReportMetric(heap/float64(n), "heap-B/conn")
		b.ReportMetric(stack/float64(n), "stack-B/conn")
		b.ReportMetric((heap+stack)/float64(n), "go-B/conn")
		b.ReportMetric(float64(rss1-rss0)/float64(n), "rss-B/conn")
		b.ReportMetric(float64(after.NumGC), "gcs")
		// Allocated while connecting, live or not: garbage makes the heap, and the RSS, grow
		// past the live connections until the next GC.
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(n), "alloc-B/conn")
		for _, s := range sessions {
			_ = s.Close()
		}
		runtime.KeepAlive(sessions)
	}
}

// memNow is the runtime's memory after a full GC, and the process's resident set in bytes.
func memNow() (runtime.MemStats, int64) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m, rssBytes()
}

func rssBytes() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
