package mqttsn

import (
	"net"
	"net/netip"
	"testing"
	"time"

	sn "github.com/msgbench/msgbench/internal/mqttsn"
)

// benchClient connects a real MQTT-SN client and returns the gateway's session of it.
func benchClient(b *testing.B, mode Mode) (*Gateway, *client, *rawClient) {
	br := startBroker(b)
	g := startGateway(b, br.Addr, "127.0.0.1:0", Config{Mode: mode})
	r := dialRaw(b, g.Addr())
	r.connect("bench", 60)
	from := r.conn.LocalAddr().(*net.UDPAddr).AddrPort()
	g.mu.RLock()
	c := g.byAddr[netip.AddrPortFrom(from.Addr().Unmap(), from.Port())]
	g.mu.RUnlock()
	if c == nil {
		b.Fatal("no session")
	}
	return g, c, r
}

// BenchmarkHandlePublish is the client-to-broker hot path: a 255-byte QoS 0 PUBLISH datagram
// decoded, its predefined topic looked up and the MQTT PUBLISH written to the broker connection
// (flushed every 64 datagrams, as the reader does under load).
func BenchmarkHandlePublish(b *testing.B) {
	for _, mode := range []Mode{Transparent, Aggregating} {
		b.Run(string(mode), func(b *testing.B) {
			g, c, _ := benchClient(b, mode)
			dg, _ := sn.AppendPublish(nil, sn.Flags(0).WithTopicIDType(sn.TopicPredefined), 1, 0, make([]byte, 255))
			b.ReportAllocs()
			b.SetBytes(255)
			for i := 0; b.Loop(); i++ {
				g.handle(c.addr, dg)
				if i%64 == 63 {
					g.flushDirty()
				}
			}
			g.flushDirty()
		})
	}
}

// BenchmarkDeliver is the broker-to-client hot path: a 255-byte QoS 0 message encoded as an
// MQTT-SN PUBLISH and sent to the client's UDP address.
func BenchmarkDeliver(b *testing.B) {
	g, c, r := benchClient(b, Transparent)
	go func() { // keep the client's socket drained
		buf := make([]byte, 2048)
		for {
			_ = r.conn.SetReadDeadline(time.Now().Add(time.Hour))
			if _, err := r.conn.Read(buf); err != nil {
				return
			}
		}
	}()
	tp := g.topics.get(1)
	c.mu.Lock()
	c.pre.set(1) // as after SUBSCRIBE with predefined id 1
	c.mu.Unlock()
	data := make([]byte, 255)
	before := g.Stats()
	b.ReportAllocs()
	b.SetBytes(255)
	n := 0
	for b.Loop() {
		c.deliver(tp, data, 0, false)
		n++
	}
	if st := g.Stats(); st.DatagramsOut-before.DatagramsOut != uint64(n) {
		b.Fatalf("%d datagrams sent for %d messages (drops %v)", st.DatagramsOut-before.DatagramsOut, n, st.Drops)
	}
}

// BenchmarkTopicLookup: the broker's topic name of a benchmark topic to its id.
func BenchmarkTopicLookup(b *testing.B) {
	preds := map[uint16]string{}
	for i := range 1000 {
		preds[uint16(i+1)] = "msgbench-" + itoa(i)
	}
	tt := newTopicTable(preds, 0xFFFF, "msgbench-", 1000)
	name := []byte("msgbench-517")
	b.ReportAllocs()
	for b.Loop() {
		if tp := tt.lookup(name); tp == nil || tp.id != 518 {
			b.Fatal(tp)
		}
	}
}

func itoa(i int) string { return string(appendInt(nil, i)) }

func appendInt(b []byte, i int) []byte {
	if i >= 10 {
		b = appendInt(b, i/10)
	}
	return append(b, byte('0'+i%10))
}
