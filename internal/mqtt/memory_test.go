package mqtt_test

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/msgbench/msgbench/internal/mqtt"
)

// An idle connection holds neither a publisher's write buffer nor, with Options.Raw, a read
// buffer: 200 connections with WriteBufferSize 16 KiB and ReadBufferSize 4 KiB cost under 4.5 KB
// of heap each until they publish (over 20 KB each when both were allocated at Connect).
func TestIdleConnectionsStaySmall(t *testing.T) {
	b := startBroker(t, false)
	const n = 200
	heap := func() uint64 {
		runtime.GC()
		runtime.GC() // buffers in the pool go at the second
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	before := heap()
	conns := make([]*mqtt.Conn, n)
	for i := range conns {
		nc, err := net.Dial("tcp", b.Addr)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := nc.(*net.TCPConn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		conns[i], err = mqtt.Connect(context.Background(), nc, mqtt.Options{Connect: mqtt.ConnectOptions{ClientID: fmt.Sprintf("idle-%d", i)},
			WriteBufferSize: 16 << 10, ReadBufferSize: 4 << 10, Raw: raw})
		if err != nil {
			t.Fatal(err)
		}
		defer conns[i].Close() //nolint:errcheck
	}
	time.Sleep(50 * time.Millisecond) // the readers reach their wait
	per := float64(heap()-before) / n
	runtime.KeepAlive(conns)
	if per > 4500 {
		t.Fatalf("%.0f bytes of heap per idle connection, want under 4500", per)
	}
	t.Logf("%.0f bytes of heap per idle connection", per)
}

// The buffer grows at the first PUBLISH; from then on publishing allocates nothing.
func TestPublishAllocatesNothing(t *testing.T) {
	b := startBroker(t, false)
	c := dial(t, b.Addr, nil, mqtt.Options{Connect: mqtt.ConnectOptions{ClientID: "allocs"}, WriteBufferSize: 16 << 10})
	payload := make([]byte, 256)
	for _, qos := range []byte{0, 1} {
		if _, err := c.Publish("allocs/t", payload, qos, false, true); err != nil { // grows the buffer
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(500, func() {
			if _, err := c.Publish("allocs/t", payload, qos, false, true); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("QoS %d: %.2f allocations per publish, want 0", qos, allocs)
		}
	}
}
