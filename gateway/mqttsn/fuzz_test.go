package mqttsn

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	sn "github.com/msgbench/msgbench/internal/mqttsn"
)

// fuzzSources are the client addresses a fuzz input's datagrams come from.
var fuzzSources = []netip.AddrPort{
	netip.MustParseAddrPort("127.0.0.1:9"), netip.MustParseAddrPort("127.0.0.1:10"),
	netip.MustParseAddrPort("[::1]:9"), netip.MustParseAddrPort("127.0.0.2:11"),
}

// splitDatagrams turns a fuzz input into (source, datagram) pairs: each record is a source
// index byte, a two-byte length and that many bytes.
func splitDatagrams(b []byte, yield func(netip.AddrPort, []byte)) {
	for len(b) >= 3 {
		src := fuzzSources[int(b[0])%len(fuzzSources)]
		n := min(int(binary.BigEndian.Uint16(b[1:3])), len(b)-3)
		yield(src, b[3:3+n])
		b = b[3+n:]
	}
}

func record(src byte, m sn.Message) []byte {
	d, _ := m.Append(nil)
	return append([]byte{src, byte(len(d) >> 8), byte(len(d))}, d...)
}

func seq(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// FuzzHandle feeds sequences of arbitrary datagrams from a few addresses to gateways (both
// modes) bridged to a real Mosquitto. The handler must never panic, and the state it keeps must
// stay within the configured bounds.
func FuzzHandle(f *testing.F) {
	connect := record(0, &sn.Connect{Flags: sn.FlagCleanSession, ProtocolID: 1, Duration: 30, ClientID: []byte("fz")})
	will := record(1, &sn.Connect{Flags: sn.FlagWill, ProtocolID: 1, Duration: 30, ClientID: []byte("fw")})
	f.Add(connect)
	f.Add(seq(connect, record(0, &sn.Register{MsgID: 1, TopicName: []byte("a/b")}), record(0, &sn.Publish{Flags: sn.Flags(0).WithQoS(1), TopicID: 4, MsgID: 2, Data: []byte("x")})))
	f.Add(seq(connect, record(0, &sn.Publish{Flags: sn.Flags(0).WithQoS(2).WithTopicIDType(sn.TopicPredefined), TopicID: 1, MsgID: 3}), record(0, &sn.Ack{T: sn.PUBREL, MsgID: 3})))
	f.Add(seq(connect, record(0, &sn.Subscribe{T: sn.SUBSCRIBE, Flags: sn.Flags(0).WithQoS(1), MsgID: 5, TopicName: []byte("a/+")}), record(0, &sn.Disconnect{HasDuration: true, Duration: 5}), record(0, &sn.Pingreq{ClientID: []byte("fz")})))
	f.Add(seq(will, record(1, &sn.WillTopic{T: sn.WILLTOPIC, Topic: []byte("w")}), record(1, &sn.WillMsg{T: sn.WILLMSG, Msg: []byte("bye")}), record(1, &sn.WillMsg{T: sn.WILLMSGUPD, Msg: []byte("b2")})))
	f.Add(record(2, &sn.Publish{Flags: sn.Flags(0).WithQoS(-1).WithTopicIDType(sn.TopicShort), TopicID: sn.ShortTopicID("ab"), Data: []byte("q")}))
	f.Add(seq(connect, record(0, &sn.Subscribe{T: sn.SUBSCRIBE, Flags: sn.Flags(0).WithTopicIDType(sn.TopicShort), MsgID: 6, TopicID: sn.ShortTopicID("zz")}), record(0, &sn.Subscribe{T: sn.UNSUBSCRIBE, Flags: sn.Flags(0).WithTopicIDType(sn.TopicShort), MsgID: 7, TopicID: sn.ShortTopicID("zz")})))
	f.Add([]byte{0, 0, 3, 0x01, 0x00, 0x03})
	f.Add([]byte{3, 0, 2, 2, 0x03, 1, 0, 4, 5, 0x0D, 0, 1})

	b := startBroker(f)
	cfg := Config{MaxClients: 3, MaxQueuedMessages: 4, MaxQueuedBytes: 256, MaxSubscriptions: 2, MaxTopics: 16, RetryInterval: time.Hour}
	// Silent: the fuzz target may not log through f, and replies to the made-up addresses fail.
	gws := []*Gateway{startGatewayLog(f, b.Addr, "127.0.0.1:0", cfg, nil)}
	cfg.Mode = Aggregating
	gws = append(gws, startGatewayLog(f, b.Addr, "127.0.0.1:0", cfg, nil))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		g := gws[int(in[0])%len(gws)]
		splitDatagrams(in[1:], g.handle)
		g.flushDirty()
		checkBounds(t, g)
		g.dropAll()
	})
}

// checkBounds fails when the gateway holds more state than its configuration allows.
func checkBounds(t *testing.T, g *Gateway) {
	t.Helper()
	g.mu.RLock()
	defer g.mu.RUnlock()
	cfg := g.cfg
	if len(g.byAddr) > cfg.MaxClients || len(g.byID) > cfg.MaxClients {
		t.Fatalf("%d/%d sessions, limit %d", len(g.byAddr), len(g.byID), cfg.MaxClients)
	}
	for _, c := range g.byAddr {
		c.mu.Lock()
		q := c.q
		subs, known, pre := len(c.subs), len(c.known), len(c.pre)
		c.mu.Unlock()
		if q.n > cfg.MaxQueuedMessages || len(q.buf)-q.head > cfg.MaxQueuedBytes || subs > cfg.MaxSubscriptions || known > 1024 || pre > 1024 {
			t.Fatalf("client %s: queue %d msgs %d bytes, %d subscriptions, bitsets %d/%d words", c.id, q.n, len(q.buf)-q.head, subs, known, pre)
		}
	}
	if n := len(g.topics.byName); n > cfg.MaxTopics+len(cfg.Predefined) {
		t.Fatalf("%d topics, limit %d", n, cfg.MaxTopics)
	}
}

// dropAll ends every session (between fuzz inputs).
func (g *Gateway) dropAll() {
	g.mu.RLock()
	all := make([]*client, 0, len(g.byAddr))
	for _, c := range g.byAddr {
		all = append(all, c)
	}
	g.mu.RUnlock()
	for _, c := range all {
		g.remove(c, endDisconnect)
	}
}
