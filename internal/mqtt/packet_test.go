package mqtt

import (
	"bufio"
	"bytes"
	"testing"

	mochi "github.com/mochi-mqtt/server/v2/packets"
)

// decodeWithMochi parses one packet with mochi-mqtt's broker codec, the oracle for ours.
func decodeWithMochi(t *testing.T, version byte, b []byte) mochi.Packet {
	t.Helper()
	var fh mochi.FixedHeader
	if err := fh.Decode(b[0]); err != nil {
		t.Fatalf("mochi fixed header: %v", err)
	}
	rl, n, err := readVarint(b[1:])
	if err != nil {
		t.Fatal(err)
	}
	fh.Remaining = rl
	if 1+n+rl != len(b) {
		t.Fatalf("remaining length %d does not match packet size %d", rl, len(b))
	}
	body := b[1+n:]
	pk := mochi.Packet{FixedHeader: fh, ProtocolVersion: version}
	switch fh.Type {
	case mochi.Connect:
		err = pk.ConnectDecode(body)
	case mochi.Publish:
		err = pk.PublishDecode(body)
	case mochi.Puback:
		err = pk.PubackDecode(body)
	case mochi.Pubrec:
		err = pk.PubrecDecode(body)
	case mochi.Pubrel:
		err = pk.PubrelDecode(body)
	case mochi.Pubcomp:
		err = pk.PubcompDecode(body)
	case mochi.Subscribe:
		err = pk.SubscribeDecode(body)
	case mochi.Unsubscribe:
		err = pk.UnsubscribeDecode(body)
	default:
		t.Fatalf("unexpected type %d", fh.Type)
	}
	if err != nil {
		t.Fatalf("mochi cannot decode our %s: %v (% x)", PacketName(fh.Type), err, b)
	}
	return pk
}

func TestPublishEncodingMatchesMochiAndKnownSizes(t *testing.T) {
	for _, version := range []byte{V311, V5} {
		for _, qos := range []byte{0, 1, 2} {
			for _, tc := range []struct{ topicLen, payloadLen int }{{1, 0}, {9, 2}, {10, 115}, {10, 116}, {10, 2000}, {64, 16370}, {3, 20000}} {
				topic := string(bytes.Repeat([]byte("t"), tc.topicLen))
				payload := bytes.Repeat([]byte{0xa5}, tc.payloadLen)
				b := AppendPublish(nil, version, topic, payload, qos, 7, false, false)
				// The wire truth of measurement.md: 1 + remaining-length bytes + 2 + T + P
				// (+2 packet id at QoS>0, +1 property length in MQTT 5).
				rl := 2 + tc.topicLen + tc.payloadLen
				if qos > 0 {
					rl += 2
				}
				if version == V5 {
					rl++
				}
				want := 1 + varintLen(rl) + rl
				if len(b) != want || PublishSize(version, tc.topicLen, tc.payloadLen, qos) != want {
					t.Errorf("v%d qos%d T=%d P=%d: %d bytes, PublishSize %d, want %d", version, qos, tc.topicLen, tc.payloadLen,
						len(b), PublishSize(version, tc.topicLen, tc.payloadLen, qos), want)
				}
				pk := decodeWithMochi(t, version, b)
				if pk.TopicName != topic || !bytes.Equal(pk.Payload, payload) || pk.FixedHeader.Qos != qos || (qos > 0 && pk.PacketID != 7) {
					t.Errorf("v%d qos%d: mochi read topic %q qos %d id %d payload %d bytes", version, qos, pk.TopicName, pk.FixedHeader.Qos, pk.PacketID, len(pk.Payload))
				}
				var p Publish
				if err := DecodePublish(version, b[0]&0x0f, b[1+varintLen(rl):], &p); err != nil {
					t.Fatal(err)
				}
				if string(p.Topic) != topic || !bytes.Equal(p.Payload, payload) || p.QoS != qos {
					t.Errorf("round trip: %+v", p)
				}
			}
		}
	}
}

func TestRemainingLengthBoundaries(t *testing.T) {
	for _, n := range []int{0, 127, 128, 16383, 16384, 2097151, 2097152, MaxRemainingLength} {
		b := appendVarint(nil, n)
		if len(b) != varintLen(n) {
			t.Errorf("%d: %d bytes, varintLen %d", n, len(b), varintLen(n))
		}
		v, ln, err := readVarint(b)
		if err != nil || v != n || ln != len(b) {
			t.Errorf("%d: read back %d (%d bytes, %v)", n, v, ln, err)
		}
	}
	if _, _, err := readVarint([]byte{0xff, 0xff, 0xff, 0xff, 0x01}); err == nil {
		t.Error("a 5-byte remaining length was accepted")
	}
}

func TestConnectSubscribeAndAcksMatchMochi(t *testing.T) {
	for _, version := range []byte{V311, V5} {
		o := &ConnectOptions{Version: version, ClientID: "pub-1", CleanSession: true, KeepAlive: 60, Username: "u", Password: "p",
			WillTopic: "w/t", WillPayload: []byte("gone"), WillQoS: 1, SessionExpiry: 0}
		pk := decodeWithMochi(t, version, AppendConnect(nil, o))
		c := pk.Connect
		if c.ClientIdentifier != "pub-1" || !c.Clean || c.Keepalive != 60 || string(c.Username) != "u" || string(c.Password) != "p" ||
			c.WillTopic != "w/t" || string(c.WillPayload) != "gone" || c.WillQos != 1 || pk.ProtocolVersion != version {
			t.Errorf("v%d CONNECT read by mochi: %+v", version, c)
		}
		pk = decodeWithMochi(t, version, AppendSubscribe(nil, version, 9, []Subscription{{"a/+", 1}, {"b/#", 2}}))
		if pk.PacketID != 9 || len(pk.Filters) != 2 || pk.Filters[0].Filter != "a/+" || pk.Filters[1].Qos != 2 {
			t.Errorf("v%d SUBSCRIBE read by mochi: id %d filters %+v", version, pk.PacketID, pk.Filters)
		}
		pk = decodeWithMochi(t, version, AppendUnsubscribe(nil, version, 10, []string{"a/+"}))
		if pk.PacketID != 10 || len(pk.Filters) != 1 {
			t.Errorf("v%d UNSUBSCRIBE read by mochi: %+v", version, pk)
		}
		for _, typ := range []byte{PUBACK, PUBREC, PUBREL, PUBCOMP} {
			b := AppendAck(nil, typ, 513)
			if len(b) != 4 {
				t.Errorf("%s is %d bytes, want 4", PacketName(typ), len(b))
			}
			if pk := decodeWithMochi(t, version, b); pk.PacketID != 513 {
				t.Errorf("%s id %d", PacketName(typ), pk.PacketID)
			}
		}
	}
}

// TestDecodeFromMochiEncoder checks our decoders on packets a broker's encoder wrote.
func TestDecodeFromMochiEncoder(t *testing.T) {
	for _, version := range []byte{V311, V5} {
		var buf bytes.Buffer
		src := mochi.Packet{FixedHeader: mochi.FixedHeader{Type: mochi.Publish, Qos: 2, Dup: true}, TopicName: "x/y", Payload: []byte("hello"), PacketID: 300, ProtocolVersion: version}
		if version == V5 {
			src.Properties.ContentType = "text/plain" // a property we must skip
		}
		if err := src.PublishEncode(&buf); err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		rl, n, _ := readVarint(b[1:])
		var p Publish
		if err := DecodePublish(version, b[0]&0x0f, b[1+n:1+n+rl], &p); err != nil {
			t.Fatal(err)
		}
		if string(p.Topic) != "x/y" || string(p.Payload) != "hello" || p.QoS != 2 || !p.Dup || p.PacketID != 300 {
			t.Errorf("v%d: %+v", version, p)
		}
		buf.Reset()
		ca := mochi.Packet{FixedHeader: mochi.FixedHeader{Type: mochi.Connack}, ProtocolVersion: version, ReasonCode: 0}
		if version == V5 {
			ca.Properties.ReceiveMaximum = 17
			ca.Properties.MaximumPacketSize = 4096
			ca.Properties.AssignedClientID = "abc"
		}
		if err := ca.ConnackEncode(&buf); err != nil {
			t.Fatal(err)
		}
		b = buf.Bytes()
		var c Connack
		if err := DecodeConnack(version, b[2:], &c); err != nil {
			t.Fatal(err)
		}
		wantMax := uint16(65535)
		if version == V5 {
			wantMax = 17
		}
		if c.ReceiveMaximum != wantMax || c.ReasonCode != 0 {
			t.Errorf("v%d CONNACK: %+v", version, c)
		}
	}
}

// FuzzDecode feeds arbitrary bodies to every decoder a client uses on broker input: they must
// return an error or a value, never panic or read out of bounds.
func FuzzDecode(f *testing.F) {
	f.Add(byte(0x32), []byte{0, 3, 'a', '/', 'b', 0, 1, 'x'})
	f.Add(byte(0x30), []byte{0, 0})
	f.Add(byte(0x20), []byte{0, 0, 5, 0x21, 0, 10, 0x24, 1})
	f.Add(byte(0x90), []byte{0, 1, 0, 1, 0x80})
	f.Add(byte(0x40), []byte{0, 9, 0x10})
	f.Fuzz(func(t *testing.T, first byte, body []byte) {
		for _, v := range []byte{V311, V5} {
			var p Publish
			_ = DecodePublish(v, first&0x0f, body, &p)
			var c Connack
			_ = DecodeConnack(v, body, &c)
			var a Ack
			for _, typ := range []byte{PUBACK, PUBREC, PUBREL, PUBCOMP, SUBACK, UNSUBACK} {
				_ = DecodeAck(v, typ, body, &a)
			}
		}
	})
}

// TestRequestPropertiesMatchMochi: an MQTT 5 request's Response Topic and Correlation Data, as
// Conn writes them, read by a broker's codec; and as a broker's encoder writes them (beside a
// property we skip), read by ours.
func TestRequestPropertiesMatchMochi(t *testing.T) {
	corr := []byte{0, 1, 2, 3, 0xff}
	props := AppendRequestProperties(nil, "clients/7/reply", corr)
	var buf bytes.Buffer
	c := &Conn{version: V5}
	c.bw = bufio.NewWriter(&buf)
	if err := c.writePublishLocked("svc/requests", []byte("ping"), 1, 9, false, props); err != nil {
		t.Fatal(err)
	}
	_ = c.bw.Flush()
	pk := decodeWithMochi(t, V5, buf.Bytes())
	if pk.TopicName != "svc/requests" || string(pk.Payload) != "ping" || pk.PacketID != 9 ||
		pk.Properties.ResponseTopic != "clients/7/reply" || !bytes.Equal(pk.Properties.CorrelationData, corr) {
		t.Errorf("mochi read %+v", pk)
	}

	var out bytes.Buffer
	src := mochi.Packet{FixedHeader: mochi.FixedHeader{Type: mochi.Publish, Qos: 1}, TopicName: "clients/7/reply", Payload: []byte("pong"),
		PacketID: 4, ProtocolVersion: V5, Mods: mochi.Mods{AllowResponseInfo: true}}
	src.Properties.ContentType = "text/plain"
	src.Properties.CorrelationData = corr
	src.Properties.ResponseTopic = "a/b"
	if err := src.PublishEncode(&out); err != nil {
		t.Fatal(err)
	}
	b := out.Bytes()
	rl, n, _ := readVarint(b[1:])
	var p Publish
	if err := DecodePublish(V5, b[0]&0x0f, b[1+n:1+n+rl], &p); err != nil {
		t.Fatal(err)
	}
	if string(p.Payload) != "pong" || string(p.ResponseTopic) != "a/b" || !bytes.Equal(p.CorrelationData, corr) {
		t.Errorf("we read %+v", p)
	}
	if err := DecodePublish(V5, 0x02, []byte{0, 1, 'x', 0, 4, 3, 0x09, 0, 5}, &p); err == nil {
		t.Error("correlation data longer than its properties: no error")
	}
}
