package mqtt_test

import (
	"runtime"
	"testing"

	"github.com/msgbench/msgbench/internal/mqtt"
)

// An idle connection does not hold a publisher's write buffer: 200 connections with
// WriteBufferSize 16 KiB cost under 8 KB of heap each until they publish (over 18 KB each
// when the buffer was allocated at Connect).
func TestIdleConnectionsStaySmall(t *testing.T) {
	b := startBroker(t, false)
	const n = 200
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	before := heap()
	conns := make([]*mqtt.Conn, n)
	for i := range conns {
		conns[i] = dial(t, b.Addr, nil, mqtt.Options{Connect: mqtt.ConnectOptions{ClientID: "idle-" + string(rune('a'+i%26)) + string(rune('a'+i/26))},
			WriteBufferSize: 16 << 10, ReadBufferSize: 512})
	}
	per := float64(heap()-before) / n
	runtime.KeepAlive(conns)
	if per > 8000 {
		t.Fatalf("%.0f bytes of heap per idle connection, want under 8000", per)
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
