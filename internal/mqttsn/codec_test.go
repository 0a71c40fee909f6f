package mqttsn

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// allMessages has one message of every MQTT-SN 1.2 type, each field set.
func allMessages() []Message {
	return []Message{
		&Advertise{GatewayID: 7, Duration: 900},
		&SearchGW{Radius: 1},
		&GWInfo{GatewayID: 7},
		&GWInfo{GatewayID: 7, GatewayAddress: []byte{10, 0, 0, 1}},
		&Connect{Flags: FlagWill | FlagCleanSession, ProtocolID: ProtocolID, Duration: 60, ClientID: []byte("sensor-1")},
		&Code{T: CONNACK, ReturnCode: RejectedCongestion},
		&Empty{T: WILLTOPICREQ},
		&WillTopic{T: WILLTOPIC, Flags: Flags(0).WithQoS(1) | FlagRetain, Topic: []byte("will/sensor-1")},
		&WillTopic{T: WILLTOPIC},
		&Empty{T: WILLMSGREQ},
		&WillMsg{T: WILLMSG, Msg: []byte("gone")},
		&Register{TopicID: 0, MsgID: 1, TopicName: []byte("a/b")},
		&IDAck{T: REGACK, TopicID: 12, MsgID: 1, ReturnCode: Accepted},
		&Publish{Flags: Flags(0).WithQoS(2).WithTopicIDType(TopicPredefined) | FlagDUP, TopicID: 3, MsgID: 9, Data: []byte("hello")},
		&IDAck{T: PUBACK, TopicID: 3, MsgID: 9, ReturnCode: RejectedInvalidTopicID},
		&Ack{T: PUBCOMP, MsgID: 9},
		&Ack{T: PUBREC, MsgID: 9},
		&Ack{T: PUBREL, MsgID: 9},
		&Subscribe{T: SUBSCRIBE, Flags: Flags(0).WithQoS(1), MsgID: 4, TopicName: []byte("a/+")},
		&Subscribe{T: SUBSCRIBE, Flags: Flags(0).WithTopicIDType(TopicShort), MsgID: 4, TopicID: ShortTopicID("ab")},
		&Suback{Flags: Flags(0).WithQoS(1), TopicID: 12, MsgID: 4, ReturnCode: Accepted},
		&Subscribe{T: UNSUBSCRIBE, Flags: Flags(0).WithTopicIDType(TopicPredefined), MsgID: 5, TopicID: 3},
		&Ack{T: UNSUBACK, MsgID: 5},
		&Pingreq{},
		&Pingreq{ClientID: []byte("sensor-1")},
		&Empty{T: PINGRESP},
		&Disconnect{},
		&Disconnect{HasDuration: true, Duration: 300},
		&WillTopic{T: WILLTOPICUPD, Flags: Flags(0).WithQoS(2), Topic: []byte("will/x")},
		&Code{T: WILLTOPICRESP, ReturnCode: Accepted},
		&WillMsg{T: WILLMSGUPD, Msg: []byte("bye")},
		&Code{T: WILLMSGRESP, ReturnCode: RejectedNotSupported},
	}
}

func TestRoundTripEveryMessage(t *testing.T) {
	seen := map[MsgType]bool{}
	for _, m := range allMessages() {
		seen[m.Type()] = true
		b, err := m.Append(nil)
		if err != nil {
			t.Fatalf("%v: %v", m.Type(), err)
		}
		if int(b[0]) != len(b) || MsgType(b[1]) != m.Type() {
			t.Errorf("%v: header % x for %d bytes", m.Type(), b[:2], len(b))
		}
		got, err := Parse(b)
		if err != nil {
			t.Fatalf("%v: parse % x: %v", m.Type(), b, err)
		}
		if !equalMsg(got, m) {
			t.Errorf("%v: round trip %+v, want %+v", m.Type(), got, m)
		}
	}
	for t0 := MsgType(0); t0 < 0x1E; t0++ {
		if t0.Known() && !seen[t0] {
			t.Errorf("%v has no round-trip case", t0)
		}
	}
}

// equalMsg compares messages, treating nil and empty byte slices alike.
func equalMsg(a, b Message) bool {
	ba, _ := a.Append(nil)
	bb, _ := b.Append(nil)
	return bytes.Equal(ba, bb) && reflect.TypeOf(a) == reflect.TypeOf(b)
}

// TestKnownEncodings pins byte layouts against the specification's field tables.
func TestKnownEncodings(t *testing.T) {
	tests := []struct {
		m    Message
		want []byte
	}{
		// §5.4.12: Length, MsgType, Flags, TopicId, MsgId, Data.
		{&Publish{Flags: 0x20 | 0x01, TopicID: 0x0102, MsgID: 0x0304, Data: []byte("x")}, []byte{8, 0x0C, 0x21, 1, 2, 3, 4, 'x'}},
		// QoS -1 is 0b11 in bits 6-5.
		{&Publish{Flags: Flags(0).WithQoS(-1).WithTopicIDType(TopicShort), TopicID: ShortTopicID("ab")}, []byte{7, 0x0C, 0x62, 'a', 'b', 0, 0}},
		// §5.4.4: Flags, ProtocolId, Duration, ClientId.
		{&Connect{Flags: FlagCleanSession, ProtocolID: 1, Duration: 10, ClientID: []byte("c")}, []byte{7, 0x04, 0x04, 0x01, 0, 10, 'c'}},
		{&IDAck{T: PUBACK, TopicID: 1, MsgID: 2, ReturnCode: RejectedCongestion}, []byte{7, 0x0D, 0, 1, 0, 2, 1}},
		{&Suback{Flags: 0x40, TopicID: 5, MsgID: 6}, []byte{8, 0x13, 0x40, 0, 5, 0, 6, 0}},
		{&Disconnect{HasDuration: true, Duration: 0x0102}, []byte{4, 0x18, 1, 2}},
		{&Advertise{GatewayID: 1, Duration: 0x0384}, []byte{5, 0x00, 1, 0x03, 0x84}},
	}
	for _, tt := range tests {
		got, err := tt.m.Append(nil)
		if err != nil || !bytes.Equal(got, tt.want) {
			t.Errorf("%v: % x (%v), want % x", tt.m.Type(), got, err, tt.want)
		}
	}
}

func TestLengthForms(t *testing.T) {
	tests := []struct {
		data   int
		header int
	}{
		{0, 2},
		{248, 2},   // 2 + 5 + 248 = 255: the largest one-byte length
		{249, 4},   // 256 bytes needs 0x01 + two bytes
		{255, 4},   // the benchmark's payload: 264 bytes
		{65498, 4}, // the UDP/IPv4 limit
	}
	for _, tt := range tests {
		b, err := AppendPublish(nil, 0, 1, 0, make([]byte, tt.data))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != tt.header+5+tt.data {
			t.Errorf("data %d: %d bytes, want header %d + 5 + data", tt.data, len(b), tt.header)
		}
		if tt.header == 4 && (b[0] != 0x01 || int(b[1])<<8|int(b[2]) != len(b)) {
			t.Errorf("data %d: long form header % x for %d bytes", tt.data, b[:4], len(b))
		}
		var p Publish
		typ, body, err := ReadHeader(b)
		if err != nil || typ != PUBLISH || p.Decode(body) != nil || len(p.Data) != tt.data {
			t.Errorf("data %d: decode %v %v %d", tt.data, typ, err, len(p.Data))
		}
	}
	if got := 65498 + PublishOverhead; got != MaxUDPPayload {
		t.Errorf("overhead: %d", got)
	}
	if _, err := AppendPublish(nil, 0, 1, 0, make([]byte, MaxLength)); err == nil || !strings.Contains(err.Error(), "PUBLISH") {
		t.Errorf("oversized PUBLISH: %v", err)
	}
	// The long form may also carry a short message.
	b := []byte{0x01, 0, 6, byte(PUBREL), 0, 9}
	if m, err := Parse(b); err != nil || m.(*Ack).MsgID != 9 {
		t.Errorf("long form of a short message: %v %v", m, err)
	}
}

func TestMalformed(t *testing.T) {
	tests := []struct {
		name  string
		b     []byte
		names string // the message type the error must name
	}{
		{"empty", nil, ""},
		{"one byte", []byte{1}, ""},
		{"length above datagram", []byte{9, byte(PUBLISH), 0, 0, 1}, "PUBLISH"},
		{"length below datagram", []byte{3, byte(PINGRESP), 0, 0}, "PINGRESP"},
		{"length field 0", []byte{0, 0}, ""},
		{"long form truncated", []byte{1, 0}, ""},
		{"long form mismatch", []byte{1, 0, 9, byte(PUBLISH), 0}, "PUBLISH"},
		{"short PUBLISH", []byte{6, byte(PUBLISH), 0, 0, 1, 0}, "PUBLISH"},
		{"short PUBACK", []byte{6, byte(PUBACK), 0, 1, 0, 2}, "PUBACK"},
		{"long PUBREL", []byte{5, byte(PUBREL), 0, 1, 2}, "PUBREL"},
		{"short CONNECT", []byte{4, byte(CONNECT), 0, 1}, "CONNECT"},
		{"REGISTER without name", []byte{6, byte(REGISTER), 0, 0, 0, 1}, "REGISTER"},
		{"SUBSCRIBE reserved id type", []byte{7, byte(SUBSCRIBE), 3, 0, 1, 0, 1}, "SUBSCRIBE"},
		{"SUBSCRIBE predefined long", []byte{8, byte(SUBSCRIBE), 1, 0, 1, 0, 1, 0}, "SUBSCRIBE"},
		{"DISCONNECT 1-byte duration", []byte{3, byte(DISCONNECT), 1}, "DISCONNECT"},
		{"PINGRESP with body", []byte{3, byte(PINGRESP), 1}, "PINGRESP"},
		{"unknown type", []byte{2, 0x03}, "type 0x03"},
		{"encapsulated", []byte{2, 0xFE}, "type 0xfe"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.b)
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v is not ErrMalformed", tt.name, err)
		}
		if !strings.Contains(err.Error(), tt.names) {
			t.Errorf("%s: %q does not name %q", tt.name, err, tt.names)
		}
	}
}

func TestFlags(t *testing.T) {
	for _, q := range []int8{-1, 0, 1, 2} {
		f := FlagDUP.WithQoS(q).WithTopicIDType(TopicShort)
		if f.QoS() != q || !f.DUP() || f.TopicIDType() != TopicShort {
			t.Errorf("qos %d: %08b", q, f)
		}
	}
	if f := Flags(0x60); f.QoS() != -1 {
		t.Errorf("0x60 is QoS %d", f.QoS())
	}
}

func TestShortTopicName(t *testing.T) {
	tests := map[int]string{0: "00", 9: "09", 10: "0A", 61: "0z", 62: "10", 3843: "zz"}
	for i, want := range tests {
		if got, err := ShortTopicName(i); err != nil || got != want {
			t.Errorf("ShortTopicName(%d) = %q %v, want %q", i, got, err, want)
		}
	}
	seen := map[string]bool{}
	for i := range MaxShortTopics {
		n, _ := ShortTopicName(i)
		if seen[n] {
			t.Fatalf("%q twice", n)
		}
		seen[n] = true
		id := ShortTopicID(n)
		if back := ShortTopicIDName(id); string(back[:]) != n {
			t.Fatalf("%q → %04x → %q", n, id, back)
		}
	}
	if _, err := ShortTopicName(MaxShortTopics); err == nil {
		t.Error("topic 3844 got a short name")
	}
	if id, _ := PredefinedTopicID(0); id != 1 {
		t.Errorf("predefined id of topic 0: %d", id)
	}
}

func TestHotPathAllocatesNothing(t *testing.T) {
	buf := make([]byte, 0, 512)
	data := make([]byte, 255)
	var p Publish
	var a IDAck
	a.T = PUBACK
	allocs := testing.AllocsPerRun(100, func() {
		b, _ := AppendPublish(buf[:0], Flags(0).WithQoS(1), 1, 2, data)
		_, body, _ := ReadHeader(b)
		_ = p.Decode(body)
		b = AppendIDAck(buf[:0], PUBACK, 1, 2, Accepted)
		_, body, _ = ReadHeader(b)
		_ = a.Decode(body)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per PUBLISH/PUBACK encode+decode", allocs)
	}
}
