package mqttsn

import (
	"encoding/binary"
	"fmt"
)

// Message is any MQTT-SN message. Decode parses a body (what ReadHeader returns) into the
// message; byte slices then alias the body. Append encodes the whole message, header included.
type Message interface {
	Type() MsgType
	Append(b []byte) ([]byte, error)
	Decode(body []byte) error
}

func appendMsg(b []byte, t MsgType, bodyLen int) ([]byte, error) {
	if err := checkSize(t, bodyLen); err != nil {
		return b, err
	}
	return AppendHeader(b, t, bodyLen), nil
}

func u16(b []byte) uint16 { return binary.BigEndian.Uint16(b) }

func exact(t MsgType, body []byte, n int) error {
	if len(body) != n {
		return malformed(t, fmt.Sprintf("body is %d bytes, want %d", len(body), n))
	}
	return nil
}

func atLeast(t MsgType, body []byte, n int) error {
	if len(body) < n {
		return malformed(t, fmt.Sprintf("body is %d bytes, want at least %d", len(body), n))
	}
	return nil
}

// Advertise is broadcast by a gateway periodically: its id and the seconds until the next one.
type Advertise struct {
	GatewayID byte
	Duration  uint16
}

// Type implements Message.
func (*Advertise) Type() MsgType { return ADVERTISE }

// Append implements Message.
func (m *Advertise) Append(b []byte) ([]byte, error) {
	b, _ = appendMsg(b, ADVERTISE, 3)
	return append(b, m.GatewayID, byte(m.Duration>>8), byte(m.Duration)), nil
}

// Decode implements Message.
func (m *Advertise) Decode(body []byte) error {
	if err := exact(ADVERTISE, body, 3); err != nil {
		return err
	}
	m.GatewayID, m.Duration = body[0], u16(body[1:])
	return nil
}

// SearchGW is broadcast by a client looking for a gateway.
type SearchGW struct{ Radius byte }

// Type implements Message.
func (*SearchGW) Type() MsgType { return SEARCHGW }

// Append implements Message.
func (m *SearchGW) Append(b []byte) ([]byte, error) {
	b, _ = appendMsg(b, SEARCHGW, 1)
	return append(b, m.Radius), nil
}

// Decode implements Message.
func (m *SearchGW) Decode(body []byte) error {
	if err := exact(SEARCHGW, body, 1); err != nil {
		return err
	}
	m.Radius = body[0]
	return nil
}

// GWInfo answers SEARCHGW. GatewayAddress is present only when a client answers for a gateway.
type GWInfo struct {
	GatewayID      byte
	GatewayAddress []byte
}

// Type implements Message.
func (*GWInfo) Type() MsgType { return GWINFO }

// Append implements Message.
func (m *GWInfo) Append(b []byte) ([]byte, error) {
	b, err := appendMsg(b, GWINFO, 1+len(m.GatewayAddress))
	if err != nil {
		return b, err
	}
	return append(append(b, m.GatewayID), m.GatewayAddress...), nil
}

// Decode implements Message.
func (m *GWInfo) Decode(body []byte) error {
	if err := atLeast(GWINFO, body, 1); err != nil {
		return err
	}
	m.GatewayID, m.GatewayAddress = body[0], body[1:]
	return nil
}

// ProtocolID is the only protocol id of CONNECT.
const ProtocolID = 0x01

// Connect opens a session. Flags carries Will and CleanSession; Duration is the keep-alive
// period in seconds.
type Connect struct {
	Flags      Flags
	ProtocolID byte
	Duration   uint16
	ClientID   []byte
}

// Type implements Message.
func (*Connect) Type() MsgType { return CONNECT }

// Append implements Message.
func (m *Connect) Append(b []byte) ([]byte, error) {
	b, err := appendMsg(b, CONNECT, 4+len(m.ClientID))
	if err != nil {
		return b, err
	}
	b = append(b, byte(m.Flags), m.ProtocolID, byte(m.Duration>>8), byte(m.Duration))
	return append(b, m.ClientID...), nil
}

// Decode implements Message.
func (m *Connect) Decode(body []byte) error {
	if err := atLeast(CONNECT, body, 4); err != nil {
		return err
	}
	m.Flags, m.ProtocolID, m.Duration, m.ClientID = Flags(body[0]), body[1], u16(body[2:]), body[4:]
	return nil
}

// Code is a message whose body is one return code: CONNACK, WILLTOPICRESP, WILLMSGRESP.
type Code struct {
	T          MsgType
	ReturnCode ReturnCode
}

// Type implements Message.
func (m *Code) Type() MsgType { return m.T }

// Append implements Message.
func (m *Code) Append(b []byte) ([]byte, error) {
	b, _ = appendMsg(b, m.T, 1)
	return append(b, byte(m.ReturnCode)), nil
}

// Decode implements Message.
func (m *Code) Decode(body []byte) error {
	if err := exact(m.T, body, 1); err != nil {
		return err
	}
	m.ReturnCode = ReturnCode(body[0])
	return nil
}

// Empty is a message without a body: WILLTOPICREQ, WILLMSGREQ, PINGRESP.
type Empty struct{ T MsgType }

// Type implements Message.
func (m *Empty) Type() MsgType { return m.T }

// Append implements Message.
func (m *Empty) Append(b []byte) ([]byte, error) { return append(b, 2, byte(m.T)), nil }

// Decode implements Message.
func (m *Empty) Decode(body []byte) error { return exact(m.T, body, 0) }

// WillTopic carries the will topic (WILLTOPIC, answering WILLTOPICREQ, and WILLTOPICUPD). A
// message with neither flags nor topic (an empty body) deletes the will; Empty reports it.
type WillTopic struct {
	T     MsgType // WILLTOPIC or WILLTOPICUPD
	Flags Flags   // QoS and Retain of the will
	Topic []byte
}

// Type implements Message.
func (m *WillTopic) Type() MsgType { return m.T }

// Empty reports a will deletion.
func (m *WillTopic) Empty() bool { return m.Flags == 0 && len(m.Topic) == 0 }

// Append implements Message.
func (m *WillTopic) Append(b []byte) ([]byte, error) {
	if m.Empty() {
		return append(b, 2, byte(m.T)), nil
	}
	b, err := appendMsg(b, m.T, 1+len(m.Topic))
	if err != nil {
		return b, err
	}
	return append(append(b, byte(m.Flags)), m.Topic...), nil
}

// Decode implements Message.
func (m *WillTopic) Decode(body []byte) error {
	if len(body) == 0 {
		m.Flags, m.Topic = 0, nil
		return nil
	}
	if len(body) == 1 {
		return malformed(m.T, "flags without a topic (an empty body deletes the will)")
	}
	m.Flags, m.Topic = Flags(body[0]), body[1:]
	return nil
}

// WillMsg carries the will message (WILLMSG, answering WILLMSGREQ, and WILLMSGUPD).
type WillMsg struct {
	T   MsgType // WILLMSG or WILLMSGUPD
	Msg []byte
}

// Type implements Message.
func (m *WillMsg) Type() MsgType { return m.T }

// Append implements Message.
func (m *WillMsg) Append(b []byte) ([]byte, error) {
	b, err := appendMsg(b, m.T, len(m.Msg))
	if err != nil {
		return b, err
	}
	return append(b, m.Msg...), nil
}

// Decode implements Message.
func (m *WillMsg) Decode(body []byte) error {
	m.Msg = body
	return nil
}

// Register asks the peer to map TopicName to TopicID (a client sends TopicID 0; a gateway sends
// the id it assigned, for messages on wildcard subscriptions).
type Register struct {
	TopicID   uint16
	MsgID     uint16
	TopicName []byte
}

// Type implements Message.
func (*Register) Type() MsgType { return REGISTER }

// Append implements Message.
func (m *Register) Append(b []byte) ([]byte, error) {
	b, err := appendMsg(b, REGISTER, 4+len(m.TopicName))
	if err != nil {
		return b, err
	}
	b = append(b, byte(m.TopicID>>8), byte(m.TopicID), byte(m.MsgID>>8), byte(m.MsgID))
	return append(b, m.TopicName...), nil
}

// Decode implements Message.
func (m *Register) Decode(body []byte) error {
	if err := atLeast(REGISTER, body, 5); err != nil {
		return malformed(REGISTER, fmt.Sprintf("body is %d bytes, want at least 5 (ids and a topic name)", len(body)))
	}
	m.TopicID, m.MsgID, m.TopicName = u16(body), u16(body[2:]), body[4:]
	return nil
}

// IDAck is a message of topic id, message id and return code: REGACK and PUBACK.
type IDAck struct {
	T          MsgType // REGACK or PUBACK
	TopicID    uint16
	MsgID      uint16
	ReturnCode ReturnCode
}

// Type implements Message.
func (m *IDAck) Type() MsgType { return m.T }

// Append implements Message.
func (m *IDAck) Append(b []byte) ([]byte, error) {
	return AppendIDAck(b, m.T, m.TopicID, m.MsgID, m.ReturnCode), nil
}

// AppendIDAck appends a REGACK or PUBACK without going through a struct.
func AppendIDAck(b []byte, t MsgType, topicID, msgID uint16, rc ReturnCode) []byte {
	return append(b, 7, byte(t), byte(topicID>>8), byte(topicID), byte(msgID>>8), byte(msgID), byte(rc))
}

// Decode implements Message.
func (m *IDAck) Decode(body []byte) error {
	if err := exact(m.T, body, 5); err != nil {
		return err
	}
	m.TopicID, m.MsgID, m.ReturnCode = u16(body), u16(body[2:]), ReturnCode(body[4])
	return nil
}

// Publish carries application data. Flags holds DUP, QoS, Retain and the topic id type; MsgID is
// 0 at QoS 0 and -1.
type Publish struct {
	Flags   Flags
	TopicID uint16
	MsgID   uint16
	Data    []byte
}

// Type implements Message.
func (*Publish) Type() MsgType { return PUBLISH }

// Append implements Message.
func (m *Publish) Append(b []byte) ([]byte, error) {
	return AppendPublish(b, m.Flags, m.TopicID, m.MsgID, m.Data)
}

// AppendPublish appends a PUBLISH without going through a struct.
func AppendPublish(b []byte, f Flags, topicID, msgID uint16, data []byte) ([]byte, error) {
	b, err := appendMsg(b, PUBLISH, 5+len(data))
	if err != nil {
		return b, err
	}
	b = append(b, byte(f), byte(topicID>>8), byte(topicID), byte(msgID>>8), byte(msgID))
	return append(b, data...), nil
}

// Decode implements Message.
func (m *Publish) Decode(body []byte) error {
	if len(body) < 5 {
		return malformed(PUBLISH, fmt.Sprintf("body is %d bytes, want at least 5 (flags, topic id, message id)", len(body)))
	}
	m.Flags, m.TopicID, m.MsgID, m.Data = Flags(body[0]), u16(body[1:]), u16(body[3:]), body[5:]
	return nil
}

// Ack is a message whose body is a message id: PUBREC, PUBREL, PUBCOMP, UNSUBACK.
type Ack struct {
	T     MsgType
	MsgID uint16
}

// Type implements Message.
func (m *Ack) Type() MsgType { return m.T }

// Append implements Message.
func (m *Ack) Append(b []byte) ([]byte, error) { return AppendAck(b, m.T, m.MsgID), nil }

// AppendAck appends a PUBREC, PUBREL, PUBCOMP or UNSUBACK.
func AppendAck(b []byte, t MsgType, msgID uint16) []byte {
	return append(b, 4, byte(t), byte(msgID>>8), byte(msgID))
}

// Decode implements Message.
func (m *Ack) Decode(body []byte) error {
	if err := exact(m.T, body, 2); err != nil {
		return err
	}
	m.MsgID = u16(body)
	return nil
}

// Subscribe (SUBSCRIBE or UNSUBSCRIBE) names a topic filter: with topic id type normal,
// TopicName holds the name (wildcards allowed); with predefined, TopicID holds the id; with short,
// TopicID holds the two characters (first in the high byte). SUBSCRIBE's Flags also carry the
// requested QoS and DUP.
type Subscribe struct {
	T         MsgType // SUBSCRIBE or UNSUBSCRIBE
	Flags     Flags
	MsgID     uint16
	TopicName []byte
	TopicID   uint16
}

// Type implements Message.
func (m *Subscribe) Type() MsgType { return m.T }

// Append implements Message.
func (m *Subscribe) Append(b []byte) ([]byte, error) {
	if m.Flags.TopicIDType() != TopicNormal {
		b, _ = appendMsg(b, m.T, 5)
		return append(b, byte(m.Flags), byte(m.MsgID>>8), byte(m.MsgID), byte(m.TopicID>>8), byte(m.TopicID)), nil
	}
	b, err := appendMsg(b, m.T, 3+len(m.TopicName))
	if err != nil {
		return b, err
	}
	b = append(b, byte(m.Flags), byte(m.MsgID>>8), byte(m.MsgID))
	return append(b, m.TopicName...), nil
}

// Decode implements Message.
func (m *Subscribe) Decode(body []byte) error {
	if len(body) < 4 {
		return malformed(m.T, fmt.Sprintf("body is %d bytes, want at least 4 (flags, message id, topic)", len(body)))
	}
	m.Flags, m.MsgID = Flags(body[0]), u16(body[1:])
	switch m.Flags.TopicIDType() {
	case TopicNormal:
		m.TopicName, m.TopicID = body[3:], 0
	case TopicPredefined, TopicShort:
		if len(body) != 5 {
			return malformed(m.T, fmt.Sprintf("%s topic id: body is %d bytes, want 5", m.Flags.TopicIDType(), len(body)))
		}
		m.TopicName, m.TopicID = nil, u16(body[3:])
	default:
		return malformed(m.T, "reserved topic id type 3")
	}
	return nil
}

// Suback answers SUBSCRIBE: the granted QoS in Flags, the topic id (0 for wildcard filters and
// short names), the message id and a return code.
type Suback struct {
	Flags      Flags
	TopicID    uint16
	MsgID      uint16
	ReturnCode ReturnCode
}

// Type implements Message.
func (*Suback) Type() MsgType { return SUBACK }

// Append implements Message.
func (m *Suback) Append(b []byte) ([]byte, error) {
	return append(b, 8, byte(SUBACK), byte(m.Flags), byte(m.TopicID>>8), byte(m.TopicID), byte(m.MsgID>>8), byte(m.MsgID), byte(m.ReturnCode)), nil
}

// Decode implements Message.
func (m *Suback) Decode(body []byte) error {
	if err := exact(SUBACK, body, 6); err != nil {
		return err
	}
	m.Flags, m.TopicID, m.MsgID, m.ReturnCode = Flags(body[0]), u16(body[1:]), u16(body[3:]), ReturnCode(body[5])
	return nil
}

// Pingreq checks the connection; a sleeping client sends its ClientID to wake up and collect the
// messages the gateway buffered.
type Pingreq struct{ ClientID []byte }

// Type implements Message.
func (*Pingreq) Type() MsgType { return PINGREQ }

// Append implements Message.
func (m *Pingreq) Append(b []byte) ([]byte, error) {
	b, err := appendMsg(b, PINGREQ, len(m.ClientID))
	if err != nil {
		return b, err
	}
	return append(b, m.ClientID...), nil
}

// Decode implements Message.
func (m *Pingreq) Decode(body []byte) error {
	m.ClientID = body
	return nil
}

// Disconnect ends a session, or with a Duration sends the client to sleep for that many seconds.
type Disconnect struct {
	HasDuration bool
	Duration    uint16
}

// Type implements Message.
func (*Disconnect) Type() MsgType { return DISCONNECT }

// Append implements Message.
func (m *Disconnect) Append(b []byte) ([]byte, error) {
	if !m.HasDuration {
		return append(b, 2, byte(DISCONNECT)), nil
	}
	return append(b, 4, byte(DISCONNECT), byte(m.Duration>>8), byte(m.Duration)), nil
}

// Decode implements Message.
func (m *Disconnect) Decode(body []byte) error {
	switch len(body) {
	case 0:
		m.HasDuration, m.Duration = false, 0
	case 2:
		m.HasDuration, m.Duration = true, u16(body)
	default:
		return malformed(DISCONNECT, fmt.Sprintf("body is %d bytes, want 0 or 2 (sleep duration)", len(body)))
	}
	return nil
}

// New returns an empty message of type t to Decode into, or nil for a type MQTT-SN 1.2 does not
// define. It allocates: the gateway and driver decode into reused structs instead.
func New(t MsgType) Message {
	switch t {
	case ADVERTISE:
		return &Advertise{}
	case SEARCHGW:
		return &SearchGW{}
	case GWINFO:
		return &GWInfo{}
	case CONNECT:
		return &Connect{}
	case CONNACK, WILLTOPICRESP, WILLMSGRESP:
		return &Code{T: t}
	case WILLTOPICREQ, WILLMSGREQ, PINGRESP:
		return &Empty{T: t}
	case WILLTOPIC, WILLTOPICUPD:
		return &WillTopic{T: t}
	case WILLMSG, WILLMSGUPD:
		return &WillMsg{T: t}
	case REGISTER:
		return &Register{}
	case REGACK, PUBACK:
		return &IDAck{T: t}
	case PUBLISH:
		return &Publish{}
	case PUBREC, PUBREL, PUBCOMP, UNSUBACK:
		return &Ack{T: t}
	case SUBSCRIBE, UNSUBSCRIBE:
		return &Subscribe{T: t}
	case SUBACK:
		return &Suback{}
	case PINGREQ:
		return &Pingreq{}
	case DISCONNECT:
		return &Disconnect{}
	}
	return nil
}

// Parse decodes a whole datagram into a new message (allocating; for tests and tools).
func Parse(datagram []byte) (Message, error) {
	t, body, err := ReadHeader(datagram)
	if err != nil {
		return nil, err
	}
	m := New(t)
	if m == nil {
		return nil, malformed(t, "unknown message type")
	}
	if err := m.Decode(body); err != nil {
		return nil, err
	}
	return m, nil
}
