package mqttsn

import (
	"fmt"
	"testing"
	"time"

	sn "github.com/msgbench/msgbench/internal/mqttsn"
)

// topicRef is how a test client names topic "t/<i>" for each topic id type.
func topicRef(t testing.TB, r *rawClient, typ sn.TopicIDType, i int) (id uint16, mqttTopic string) {
	t.Helper()
	switch typ {
	case sn.TopicPredefined:
		return uint16(i + 1), fmt.Sprintf("t/%d", i)
	case sn.TopicShort:
		name, _ := sn.ShortTopicName(i)
		return sn.ShortTopicID(name), name
	}
	name := fmt.Sprintf("t/%d", i)
	r.send(&sn.Register{MsgID: 100, TopicName: []byte(name)})
	ra := expect[*sn.IDAck](r, 2*time.Second)
	if ra.T != sn.REGACK || ra.ReturnCode != sn.Accepted || ra.MsgID != 100 || ra.TopicID == 0 {
		t.Fatalf("REGACK %+v", ra)
	}
	return ra.TopicID, name
}

// TestPublishEveryQoSAndTopicType publishes from an MQTT-SN client at every QoS with every topic
// id type, in both modes, over IPv4 and IPv6, and checks what an MQTT subscriber receives and
// the acknowledgements the client gets.
func TestPublishEveryQoSAndTopicType(t *testing.T) {
	b := startBroker(t)
	for _, mode := range []Mode{Transparent, Aggregating} {
		for _, listen := range []string{"127.0.0.1:0", "[::1]:0"} {
			g := startGateway(t, b.Addr, listen, Config{Mode: mode})
			sub := dialMQTT(t, b.Addr, fmt.Sprintf("sub-%s-%d", mode, len(listen)))
			sub.subscribe(t, "#", 2)
			for _, typ := range []sn.TopicIDType{sn.TopicNormal, sn.TopicPredefined, sn.TopicShort} {
				for _, qos := range []int8{-1, 0, 1, 2} {
					name := fmt.Sprintf("%s/%s/%s/qos%d", mode, listen, typ, qos)
					t.Run(name, func(t *testing.T) {
						r := dialRaw(t, g.Addr())
						if qos == -1 && typ == sn.TopicNormal {
							// QoS -1 needs a predefined or short id: dropped and counted.
							before := g.Stats().Drops[DropUnsupported.String()]
							r.send(&sn.Publish{Flags: sn.Flags(0).WithQoS(-1), TopicID: 1, Data: []byte("x")})
							eventually(t, 2*time.Second, "unsupported drop counted", func() bool { return g.Stats().Drops[DropUnsupported.String()] == before+1 })
							return
						}
						if qos >= 0 {
							r.connect("pub-"+name, 60)
						}
						id, topic := topicRef(t, r, typ, 1)
						payload := []byte("payload " + name)
						r.send(&sn.Publish{Flags: sn.Flags(0).WithQoS(qos).WithTopicIDType(typ), TopicID: id, MsgID: uint16(max(0, qos)) * 7, Data: payload})
						switch qos {
						case 1:
							a := expect[*sn.IDAck](r, 2*time.Second)
							if a.T != sn.PUBACK || a.MsgID != 7 || a.TopicID != id || a.ReturnCode != sn.Accepted {
								t.Fatalf("PUBACK %+v", a)
							}
						case 2:
							if a := expect[*sn.Ack](r, 2*time.Second); a.T != sn.PUBREC || a.MsgID != 14 {
								t.Fatalf("PUBREC %+v", a)
							}
							r.send(&sn.Ack{T: sn.PUBREL, MsgID: 14})
							if a := expect[*sn.Ack](r, 2*time.Second); a.T != sn.PUBCOMP || a.MsgID != 14 {
								t.Fatalf("PUBCOMP %+v", a)
							}
						}
						p := sub.next(t, 2*time.Second)
						if string(p.Topic) != topic || string(p.Payload) != string(payload) {
							t.Fatalf("broker delivered %s %q, want %s %q", p.Topic, p.Payload, topic, payload)
						}
						if qos >= 0 {
							r.send(&sn.Disconnect{})
							expect[*sn.Disconnect](r, 2*time.Second)
						}
					})
				}
			}
		}
	}
}

// TestSubscribeEveryQoSAndTopicType subscribes an MQTT-SN client with every topic id type and
// QoS, in both modes, and checks the PUBLISH it receives when an MQTT client publishes.
func TestSubscribeEveryQoSAndTopicType(t *testing.T) {
	b := startBroker(t)
	pub := dialMQTT(t, b.Addr, "publisher")
	for _, mode := range []Mode{Transparent, Aggregating} {
		for _, listen := range []string{"127.0.0.1:0", "[::1]:0"} {
			g := startGateway(t, b.Addr, listen, Config{Mode: mode})
			for _, typ := range []sn.TopicIDType{sn.TopicNormal, sn.TopicPredefined, sn.TopicShort} {
				for _, qos := range []int8{0, 1, 2} {
					name := fmt.Sprintf("%s/%s/%s/qos%d", mode, listen, typ, qos)
					t.Run(name, func(t *testing.T) {
						r := dialRaw(t, g.Addr())
						r.connect("sub-"+name, 60)
						topicName := "t/2"
						s := sn.Subscribe{T: sn.SUBSCRIBE, Flags: sn.Flags(0).WithQoS(qos).WithTopicIDType(typ), MsgID: 3}
						wantID, wantType := uint16(0), typ
						switch typ {
						case sn.TopicNormal:
							s.TopicName = []byte(topicName)
						case sn.TopicPredefined:
							s.TopicID, wantID = 3, 3
						case sn.TopicShort:
							topicName = "zz"
							s.TopicID = sn.ShortTopicID(topicName)
						}
						r.send(&s)
						sa := expect[*sn.Suback](r, 2*time.Second)
						if sa.MsgID != 3 || sa.ReturnCode != sn.Accepted || sa.Flags.QoS() != qos {
							t.Fatalf("SUBACK %+v", sa)
						}
						if typ == sn.TopicNormal {
							if sa.TopicID == 0 {
								t.Fatalf("SUBACK of a topic name without topic id: %+v", sa)
							}
							wantID = sa.TopicID
						}
						if typ == sn.TopicShort {
							wantID = sn.ShortTopicID(topicName)
						}
						if _, err := pub.conn.Publish(topicName, []byte("hello "+name), 2, false, true); err != nil {
							t.Fatal(err)
						}
						p := expect[*sn.Publish](r, 2*time.Second)
						if p.Flags.QoS() != qos || p.Flags.TopicIDType() != wantType || p.TopicID != wantID || string(p.Data) != "hello "+name {
							t.Fatalf("PUBLISH %+v (flags %08b), want qos %d %s id %d", p, p.Flags, qos, wantType, wantID)
						}
						switch qos {
						case 1:
							r.send(&sn.IDAck{T: sn.PUBACK, TopicID: p.TopicID, MsgID: p.MsgID})
						case 2:
							r.send(&sn.Ack{T: sn.PUBREC, MsgID: p.MsgID})
							if a := expect[*sn.Ack](r, 2*time.Second); a.T != sn.PUBREL || a.MsgID != p.MsgID {
								t.Fatalf("PUBREL %+v", a)
							}
							r.send(&sn.Ack{T: sn.PUBCOMP, MsgID: p.MsgID})
						}
						r.send(&sn.Subscribe{T: sn.UNSUBSCRIBE, Flags: s.Flags, MsgID: 4, TopicName: s.TopicName, TopicID: s.TopicID})
						if a := expect[*sn.Ack](r, 2*time.Second); a.T != sn.UNSUBACK || a.MsgID != 4 {
							t.Fatalf("UNSUBACK %+v", a)
						}
						if _, err := pub.conn.Publish(topicName, []byte("after"), 0, false, true); err != nil {
							t.Fatal(err)
						}
						if m, err := r.tryRecv(200 * time.Millisecond); err == nil {
							t.Fatalf("after UNSUBSCRIBE: %v %+v", m.Type(), m)
						}
					})
				}
			}
		}
	}
}

// TestPublishesBatchWhileDatagramsWait holds the gateway's reader inside the first of 50 QoS 0
// publishes (by holding the client's broker connection), so the other 49 queue on the UDP socket:
// all 50 must then reach the broker in one write, in order, and a later lone publish at once.
// Before, a read with an expired deadline "polled" the socket; Go fails such a read without
// looking, so every publish was flushed on its own (50 writes).
func TestPublishesBatchWhileDatagramsWait(t *testing.T) {
	b := startBroker(t)
	g := startGateway(t, b.Addr, "127.0.0.1:0", Config{Mode: Transparent})
	sub := dialMQTT(t, b.Addr, "batch-sub")
	sub.subscribe(t, "#", 0)
	r := dialRaw(t, g.Addr())
	r.connect("batch-pub", 60)
	id, topic := topicRef(t, r, sn.TopicNormal, 3)
	// The client is found under g.mu; its broker connection is written under c.mu (open).
	g.mu.RLock()
	c := g.byID["batch-pub"]
	g.mu.RUnlock()
	c.mu.Lock()
	bc := c.bc
	c.mu.Unlock()
	before := g.Stats()

	bc.mu.Lock()
	const n = 50
	for i := range n {
		r.send(&sn.Publish{Flags: sn.Flags(0).WithQoS(0), TopicID: id, Data: fmt.Appendf(nil, "m%02d", i)})
	}
	eventually(t, 2*time.Second, "reader holds the first publish", func() bool { return g.Stats().DatagramsIn > before.DatagramsIn })
	bc.mu.Unlock()
	for i := range n {
		p := sub.next(t, 2*time.Second)
		if want := fmt.Sprintf("m%02d", i); string(p.Topic) != topic || string(p.Payload) != want {
			t.Fatalf("message %d: broker delivered %s %q, want %s %q", i, p.Topic, p.Payload, topic, want)
		}
	}
	if st := g.Stats(); st.PublishesIn-before.PublishesIn != n || st.BrokerFlushes-before.BrokerFlushes != 1 {
		t.Fatalf("%d publishes reached the broker in %d writes, want %d in 1", st.PublishesIn-before.PublishesIn, st.BrokerFlushes-before.BrokerFlushes, n)
	}

	r.send(&sn.Publish{Flags: sn.Flags(0).WithQoS(0), TopicID: id, Data: []byte("lone")})
	if p := sub.next(t, time.Second); string(p.Payload) != "lone" {
		t.Fatalf("broker delivered %q, want the lone publish", p.Payload)
	}
}
