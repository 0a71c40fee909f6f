package mqttsn

import (
	"fmt"
	"net"
	"testing"
	"time"

	sn "github.com/msgbench/msgbench/internal/mqttsn"
)

// connectWithWill does the CONNECT / WILLTOPICREQ / WILLTOPIC / WILLMSGREQ / WILLMSG / CONNACK
// exchange.
func (r *rawClient) connectWithWill(id string, keepAlive uint16, topic, msg string) {
	r.t.Helper()
	r.send(&sn.Connect{Flags: sn.FlagCleanSession | sn.FlagWill, ProtocolID: sn.ProtocolID, Duration: keepAlive, ClientID: []byte(id)})
	if e := expect[*sn.Empty](r, 2*time.Second); e.T != sn.WILLTOPICREQ {
		r.t.Fatalf("got %v, want WILLTOPICREQ", e.T)
	}
	r.send(&sn.WillTopic{T: sn.WILLTOPIC, Flags: sn.Flags(0).WithQoS(1), Topic: []byte(topic)})
	if e := expect[*sn.Empty](r, 2*time.Second); e.T != sn.WILLMSGREQ {
		r.t.Fatalf("got %v, want WILLMSGREQ", e.T)
	}
	r.send(&sn.WillMsg{T: sn.WILLMSG, Msg: []byte(msg)})
	if c := expect[*sn.Code](r, 5*time.Second); c.T != sn.CONNACK || c.ReturnCode != sn.Accepted {
		r.t.Fatalf("CONNACK %+v", c)
	}
}

// TestWillOnLoss: a client that stops sending (no PINGREQ within 1.5 × keep-alive) is lost and
// its will reaches an MQTT subscriber; a client that sends DISCONNECT leaves no will. In
// aggregating mode a will updated with WILLMSGUPD is the one published.
func TestWillOnLoss(t *testing.T) {
	b := startBroker(t)
	for _, mode := range []Mode{Transparent, Aggregating} {
		t.Run(string(mode), func(t *testing.T) {
			g := startGateway(t, b.Addr, "127.0.0.1:0", Config{Mode: mode})
			sub := dialMQTT(t, b.Addr, "will-sub-"+string(mode))
			sub.subscribe(t, "will/#", 1)

			polite := dialRaw(t, g.Addr())
			polite.connectWithWill("polite-"+string(mode), 1, "will/polite", "should not appear")
			polite.send(&sn.Disconnect{})
			expect[*sn.Disconnect](polite, 2*time.Second)

			r := dialRaw(t, g.Addr())
			r.connectWithWill("lost-"+string(mode), 1, "will/lost", "sensor gone")
			r.send(&sn.WillMsg{T: sn.WILLMSGUPD, Msg: []byte("sensor gone (updated)")})
			if c := expect[*sn.Code](r, 2*time.Second); c.T != sn.WILLMSGRESP || c.ReturnCode != sn.Accepted {
				t.Fatalf("WILLMSGRESP %+v", c)
			}
			start := time.Now()
			// The client now stays silent: no PINGREQ.
			p := sub.next(t, 5*time.Second)
			if string(p.Topic) != "will/lost" || string(p.Payload) != "sensor gone (updated)" {
				t.Fatalf("will %s %q", p.Topic, p.Payload)
			}
			if d := time.Since(start); d < time.Second {
				t.Errorf("will after %v: before 1.5 × the 1 s keep-alive", d)
			}
			sub.none(t, 300*time.Millisecond)
			if st := g.Stats(); st.Lost != 1 || st.Disconnects != 1 || st.Clients != 0 {
				t.Errorf("lost %d disconnects %d clients %d", st.Lost, st.Disconnects, st.Clients)
			}
		})
	}
}

// TestKeepAliveKeepsClient: PINGREQs within the keep-alive keep a client alive.
func TestKeepAliveKeepsClient(t *testing.T) {
	b := startBroker(t)
	g := startGateway(t, b.Addr, "127.0.0.1:0", Config{})
	r := dialRaw(t, g.Addr())
	r.connect("pinger", 1)
	for range 4 {
		time.Sleep(500 * time.Millisecond)
		r.send(&sn.Pingreq{})
		if e := expect[*sn.Empty](r, time.Second); e.T != sn.PINGRESP {
			t.Fatalf("got %v", e.T)
		}
	}
	if st := g.Stats(); st.Lost != 0 || st.Clients != 1 {
		t.Errorf("lost %d clients %d", st.Lost, st.Clients)
	}
}

// TestSleepingClient: messages for a sleeping client are buffered and delivered, in order, when
// it wakes with PINGREQ carrying its client id; PINGRESP follows the last one.
func TestSleepingClient(t *testing.T) {
	b := startBroker(t)
	pub := dialMQTT(t, b.Addr, "sleep-pub")
	for _, mode := range []Mode{Transparent, Aggregating} {
		t.Run(string(mode), func(t *testing.T) {
			g := startGateway(t, b.Addr, "127.0.0.1:0", Config{Mode: mode})
			r := dialRaw(t, g.Addr())
			id := "sleeper-" + string(mode)
			r.connect(id, 60)
			r.send(&sn.Subscribe{T: sn.SUBSCRIBE, Flags: sn.Flags(0).WithQoS(1).WithTopicIDType(sn.TopicPredefined), MsgID: 1, TopicID: 1})
			expect[*sn.Suback](r, 2*time.Second)
			r.send(&sn.Disconnect{HasDuration: true, Duration: 30})
			expect[*sn.Disconnect](r, 2*time.Second)
			for i := range 3 {
				if _, err := pub.conn.Publish("t/0", fmt.Appendf(nil, "m%d", i), byte(i%2), false, true); err != nil {
					t.Fatal(err)
				}
			}
			if m, err := r.tryRecv(300 * time.Millisecond); err == nil {
				t.Fatalf("asleep, yet got %v", m.Type())
			}
			r.send(&sn.Pingreq{ClientID: []byte(id)})
			for i := range 3 {
				p := expect[*sn.Publish](r, 2*time.Second)
				if string(p.Data) != fmt.Sprintf("m%d", i) || p.TopicID != 1 || p.Flags.TopicIDType() != sn.TopicPredefined {
					t.Fatalf("message %d: %+v", i, p)
				}
				if p.Flags.QoS() == 1 {
					r.send(&sn.IDAck{T: sn.PUBACK, TopicID: 1, MsgID: p.MsgID})
				}
			}
			if e := expect[*sn.Empty](r, 2*time.Second); e.T != sn.PINGRESP {
				t.Fatalf("got %v after the buffered messages, want PINGRESP", e.T)
			}
			// Asleep again: the next message waits for the next wake-up.
			if _, err := pub.conn.Publish("t/0", []byte("later"), 0, false, true); err != nil {
				t.Fatal(err)
			}
			if m, err := r.tryRecv(300 * time.Millisecond); err == nil {
				t.Fatalf("asleep again, yet got %v", m.Type())
			}
			r.send(&sn.Pingreq{ClientID: []byte(id)})
			if p := expect[*sn.Publish](r, 2*time.Second); string(p.Data) != "later" {
				t.Fatalf("got %q", p.Data)
			}
			expect[*sn.Empty](r, 2*time.Second)
		})
	}
}

// TestSleepBufferIsBounded: a sleeping client's buffer holds MaxQueuedMessages; the rest is
// dropped and counted.
func TestSleepBufferIsBounded(t *testing.T) {
	b := startBroker(t)
	pub := dialMQTT(t, b.Addr, "bound-pub")
	g := startGateway(t, b.Addr, "127.0.0.1:0", Config{MaxQueuedMessages: 5})
	r := dialRaw(t, g.Addr())
	r.connect("bounded", 60)
	r.send(&sn.Subscribe{T: sn.SUBSCRIBE, Flags: sn.Flags(0).WithTopicIDType(sn.TopicPredefined), MsgID: 1, TopicID: 2})
	expect[*sn.Suback](r, 2*time.Second)
	r.send(&sn.Disconnect{HasDuration: true, Duration: 30})
	expect[*sn.Disconnect](r, 2*time.Second)
	for i := range 20 {
		if _, err := pub.conn.Publish("t/1", fmt.Appendf(nil, "m%d", i), 0, false, true); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 2*time.Second, "15 drops", func() bool { return g.Stats().Drops[DropQueueFull.String()] == 15 })
	r.send(&sn.Pingreq{ClientID: []byte("bounded")})
	for i := range 5 {
		if p := expect[*sn.Publish](r, 2*time.Second); string(p.Data) != fmt.Sprintf("m%d", i) {
			t.Fatalf("got %q", p.Data)
		}
	}
	expect[*sn.Empty](r, 2*time.Second)
}

// TestWildcardRegistersTopics: on a wildcard subscription the gateway registers each new topic
// with the client (REGISTER/REGACK) before the first PUBLISH on it, once per topic.
func TestWildcardRegistersTopics(t *testing.T) {
	b := startBroker(t)
	pub := dialMQTT(t, b.Addr, "wild-pub")
	for _, mode := range []Mode{Transparent, Aggregating} {
		t.Run(string(mode), func(t *testing.T) {
			g := startGateway(t, b.Addr, "127.0.0.1:0", Config{Mode: mode})
			r := dialRaw(t, g.Addr())
			r.connect("wild-"+string(mode), 60)
			r.send(&sn.Subscribe{T: sn.SUBSCRIBE, Flags: sn.Flags(0).WithQoS(1), MsgID: 1, TopicName: []byte("w/+/temp")})
			if sa := expect[*sn.Suback](r, 2*time.Second); sa.TopicID != 0 || sa.ReturnCode != sn.Accepted {
				t.Fatalf("SUBACK %+v", sa)
			}
			ids := map[string]uint16{}
			for _, topic := range []string{"w/a/temp", "w/b/temp", "w/a/temp"} {
				if _, err := pub.conn.Publish(topic, []byte(topic), 1, false, true); err != nil {
					t.Fatal(err)
				}
				m := r.recv(2 * time.Second)
				if reg, ok := m.(*sn.Register); ok {
					if _, seen := ids[topic]; seen || string(reg.TopicName) != topic || reg.TopicID == 0 {
						t.Fatalf("REGISTER %+v for %s", reg, topic)
					}
					ids[topic] = reg.TopicID
					r.send(&sn.IDAck{T: sn.REGACK, TopicID: reg.TopicID, MsgID: reg.MsgID})
					m = r.recv(2 * time.Second)
				}
				p, ok := m.(*sn.Publish)
				if !ok || p.TopicID != ids[topic] || p.Flags.TopicIDType() != sn.TopicNormal || string(p.Data) != topic {
					t.Fatalf("%s: got %v %+v, want PUBLISH with id %d", topic, m.Type(), m, ids[topic])
				}
				r.send(&sn.IDAck{T: sn.PUBACK, TopicID: p.TopicID, MsgID: p.MsgID})
			}
			if len(ids) != 2 || ids["w/a/temp"] == ids["w/b/temp"] {
				t.Errorf("topic ids %v", ids)
			}
		})
	}
}

// TestRetransmissionAndDuplicates: the gateway sends an unacknowledged PUBLISH again after
// T_retry with DUP set; a client's retransmitted QoS 2 PUBLISH reaches the broker once.
func TestRetransmissionAndDuplicates(t *testing.T) {
	b := startBroker(t)
	g := startGateway(t, b.Addr, "127.0.0.1:0", Config{RetryInterval: 100 * time.Millisecond, MaxRetries: 3})
	pub := dialMQTT(t, b.Addr, "re-pub")
	sub := dialMQTT(t, b.Addr, "re-sub")
	sub.subscribe(t, "t/1", 2)

	r := dialRaw(t, g.Addr())
	r.connect("re", 60)
	r.send(&sn.Subscribe{T: sn.SUBSCRIBE, Flags: sn.Flags(0).WithQoS(1).WithTopicIDType(sn.TopicPredefined), MsgID: 1, TopicID: 1})
	expect[*sn.Suback](r, 2*time.Second)
	if _, err := pub.conn.Publish("t/0", []byte("again"), 1, false, true); err != nil {
		t.Fatal(err)
	}
	first := expect[*sn.Publish](r, 2*time.Second)
	start := time.Now()
	again := expect[*sn.Publish](r, 2*time.Second) // not acknowledged: sent again
	if d := time.Since(start); d < 80*time.Millisecond {
		t.Errorf("retransmitted after %v, T_retry is 100ms", d)
	}
	if first.Flags.DUP() || !again.Flags.DUP() || again.MsgID != first.MsgID || string(again.Data) != "again" {
		t.Fatalf("first %+v, retransmission %+v", first, again)
	}
	r.send(&sn.IDAck{T: sn.PUBACK, TopicID: 1, MsgID: first.MsgID})
	if m, err := r.tryRecv(300 * time.Millisecond); err == nil {
		t.Fatalf("after PUBACK: %v", m.Type())
	}

	// QoS 2 from the client, PUBLISH sent twice before PUBREL: one message at the broker.
	p := &sn.Publish{Flags: sn.Flags(0).WithQoS(2).WithTopicIDType(sn.TopicPredefined), TopicID: 2, MsgID: 9, Data: []byte("once")}
	r.send(p)
	expect[*sn.Ack](r, 2*time.Second)
	p.Flags |= sn.FlagDUP
	r.send(p)
	if a := expect[*sn.Ack](r, 2*time.Second); a.T != sn.PUBREC || a.MsgID != 9 {
		t.Fatalf("answer to the duplicate: %+v", a)
	}
	r.send(&sn.Ack{T: sn.PUBREL, MsgID: 9})
	expect[*sn.Ack](r, 2*time.Second)
	if m := sub.next(t, 2*time.Second); string(m.Payload) != "once" {
		t.Fatalf("got %q", m.Payload)
	}
	sub.none(t, 300*time.Millisecond)
	if st := g.Stats(); st.Retransmissions != 1 || st.Duplicates == 0 {
		t.Errorf("retransmissions %d duplicates %d", st.Retransmissions, st.Duplicates)
	}

	// A client that never answers is lost after N_retry retransmissions.
	if _, err := pub.conn.Publish("t/0", []byte("ignored"), 1, false, true); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Second, "client lost after N_retry", func() bool { return g.Stats().Lost == 1 })
}

// TestClientLimit: a CONNECT beyond MaxClients is answered "rejected: congestion".
func TestClientLimit(t *testing.T) {
	b := startBroker(t)
	g := startGateway(t, b.Addr, "127.0.0.1:0", Config{MaxClients: 1})
	dialRaw(t, g.Addr()).connect("first", 60)
	r := dialRaw(t, g.Addr())
	r.send(&sn.Connect{ProtocolID: sn.ProtocolID, Duration: 60, ClientID: []byte("second")})
	if c := expect[*sn.Code](r, 2*time.Second); c.T != sn.CONNACK || c.ReturnCode != sn.RejectedCongestion {
		t.Fatalf("CONNACK %+v, want rejected: congestion", c)
	}
	if st := g.Stats(); st.Rejected != 1 || st.Clients != 1 || st.ClientsPeak != 1 {
		t.Errorf("rejected %d clients %d peak %d", st.Rejected, st.Clients, st.ClientsPeak)
	}
}

// TestMalformedAndOutOfOrder: broken, truncated, oversized and out-of-order datagrams are
// answered as the specification says or dropped and counted, and the gateway serves on.
func TestMalformedAndOutOfOrder(t *testing.T) {
	b := startBroker(t)
	g := startGateway(t, b.Addr, "127.0.0.1:0", Config{})
	r := dialRaw(t, g.Addr())
	huge := make([]byte, 65000)
	huge[0], huge[1], huge[2], huge[3] = 0x01, 0xFF, 0xFF, byte(sn.PUBLISH) // claims 65535 bytes
	tests := []struct {
		name   string
		b      []byte
		reason DropReason
	}{
		{"one byte", []byte{7}, DropMalformed},
		{"length beyond datagram", []byte{9, byte(sn.PUBLISH), 0, 0, 1}, DropMalformed},
		{"truncated PUBLISH", []byte{5, byte(sn.PUBLISH), 0, 0, 1}, DropMalformed},
		{"oversized length field", huge, DropMalformed},
		{"reserved type", []byte{2, 0x03}, DropMalformed},
		{"encapsulated message", []byte{3, 0xFE, 0}, DropMalformed},
		{"PUBLISH without session", []byte{7, byte(sn.PUBLISH), 0, 0, 1, 0, 0}, DropNotConnected},
		{"SUBSCRIBE without session", []byte{6, byte(sn.SUBSCRIBE), 0, 0, 1, 'a'}, DropNotConnected},
		{"WILLMSG without session", []byte{3, byte(sn.WILLMSG), 'x'}, DropNotConnected},
		{"gateway-to-client type", []byte{3, byte(sn.CONNACK), 0}, DropUnexpected},
		{"CONNECT with another protocol id", []byte{7, byte(sn.CONNECT), 0, 2, 0, 10, 'c'}, DropUnsupported},
	}
	for _, tt := range tests {
		before := g.Stats().Drops[tt.reason.String()]
		r.sendRaw(tt.b)
		eventually(t, 2*time.Second, tt.name+" counted as "+tt.reason.String(), func() bool {
			return g.Stats().Drops[tt.reason.String()] == before+1
		})
	}
	// The CONNECT with a wrong protocol id was answered.
	if c := expect[*sn.Code](r, time.Second); c.ReturnCode != sn.RejectedNotSupported {
		t.Fatalf("CONNACK %+v", c)
	}
	r.connect("survivor", 60)
	// Out of order: PUBREL for nothing is answered with PUBCOMP (the client's PUBCOMP may have
	// been lost); PUBACK for nothing is dropped; WILLMSG outside a will exchange is dropped.
	r.send(&sn.Ack{T: sn.PUBREL, MsgID: 77})
	if a := expect[*sn.Ack](r, time.Second); a.T != sn.PUBCOMP || a.MsgID != 77 {
		t.Fatalf("got %+v", a)
	}
	before := g.Stats()
	r.send(&sn.IDAck{T: sn.PUBACK, TopicID: 1, MsgID: 5})
	r.send(&sn.WillMsg{T: sn.WILLMSG, Msg: []byte("late")})
	eventually(t, time.Second, "out-of-order messages counted", func() bool {
		s := g.Stats()
		return s.Duplicates == before.Duplicates+1 && s.Drops[DropUnexpected.String()] == before.Drops[DropUnexpected.String()]+1
	})
	// An unknown topic id is answered with "rejected: invalid topic ID".
	r.send(&sn.Publish{Flags: sn.Flags(0).WithQoS(1), TopicID: 999, MsgID: 3, Data: []byte("x")})
	if a := expect[*sn.IDAck](r, time.Second); a.T != sn.PUBACK || a.ReturnCode != sn.RejectedInvalidTopicID || a.MsgID != 3 {
		t.Fatalf("PUBACK %+v", a)
	}
	r.send(&sn.Pingreq{})
	if e := expect[*sn.Empty](r, time.Second); e.T != sn.PINGRESP {
		t.Fatalf("got %v", e.T)
	}
}

// TestAdvertiseAndSearchGW: ADVERTISE goes out periodically; SEARCHGW is answered with GWINFO.
func TestAdvertiseAndSearchGW(t *testing.T) {
	b := startBroker(t)
	ln, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	g := startGateway(t, b.Addr, "127.0.0.1:0", Config{GatewayID: 9, AdvertiseAddress: ln.LocalAddr().String(), AdvertiseInterval: 100 * time.Millisecond})
	buf := make([]byte, 64)
	start := time.Now()
	for range 3 {
		_ = ln.SetReadDeadline(time.Now().Add(2 * time.Second))
		n, err := ln.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		m, err := sn.Parse(buf[:n])
		if a, ok := m.(*sn.Advertise); err != nil || !ok || a.GatewayID != 9 {
			t.Fatalf("got %+v %v", m, err)
		}
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("three ADVERTISE within %v at a 100ms interval", d)
	}
	r := dialRaw(t, g.Addr())
	r.send(&sn.SearchGW{Radius: 1})
	if gi := expect[*sn.GWInfo](r, time.Second); gi.GatewayID != 9 {
		t.Fatalf("GWINFO %+v", gi)
	}
}
