// Package mqtt is a lean MQTT 3.1.1 and 5 client: a packet codec for the packets a client sends
// and receives, and a connection that keeps an inflight window without a goroutine, channel hop
// or allocation per message. The load generator's MQTT drivers and msgbench's gateways (which
// bridge MQTT-SN, HTTP and QUIC clients to an MQTT broker) share it.
//
// Its encoding is checked against mochi-mqtt's packet codec, a broker's, in the tests.
package mqtt

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/msgbench/msgbench/internal/refusal"
)

// Packet types (MQTT 3.1.1 §2.2.1, MQTT 5 §2.1.2).
const (
	CONNECT     byte = 1
	CONNACK     byte = 2
	PUBLISH     byte = 3
	PUBACK      byte = 4
	PUBREC      byte = 5
	PUBREL      byte = 6
	PUBCOMP     byte = 7
	SUBSCRIBE   byte = 8
	SUBACK      byte = 9
	UNSUBSCRIBE byte = 10
	UNSUBACK    byte = 11
	PINGREQ     byte = 12
	PINGRESP    byte = 13
	DISCONNECT  byte = 14
	AUTH        byte = 15
)

// Protocol levels.
const (
	V311 byte = 4
	V5   byte = 5
)

// MaxRemainingLength is the largest remaining length the 4-byte variable integer encodes.
const MaxRemainingLength = 268435455

var packetNames = [...]string{"reserved", "CONNECT", "CONNACK", "PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP",
	"SUBSCRIBE", "SUBACK", "UNSUBSCRIBE", "UNSUBACK", "PINGREQ", "PINGRESP", "DISCONNECT", "AUTH"}

// PacketName names a packet type for messages.
func PacketName(t byte) string {
	if int(t) < len(packetNames) {
		return packetNames[t]
	}
	return fmt.Sprintf("type %d", t)
}

// ErrMalformed reports a packet that breaks the MQTT encoding rules.
var ErrMalformed = errors.New("malformed MQTT packet")

func malformed(packet byte, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrMalformed, PacketName(packet), fmt.Sprintf(format, args...))
}

// varintLen is the number of bytes the variable byte integer n takes.
func varintLen(n int) int {
	switch {
	case n < 128:
		return 1
	case n < 16384:
		return 2
	case n < 2097152:
		return 3
	default:
		return 4
	}
}

// appendVarint appends the variable byte integer n (n ≤ MaxRemainingLength).
func appendVarint(b []byte, n int) []byte {
	for {
		d := byte(n % 128)
		n /= 128
		if n > 0 {
			d |= 0x80
		}
		b = append(b, d)
		if n == 0 {
			return b
		}
	}
}

// readVarint decodes a variable byte integer at the start of b, returning the value and its length.
func readVarint(b []byte) (value, n int, err error) {
	mult := 1
	for i := 0; i < 4; i++ {
		if i >= len(b) {
			return 0, 0, errShort
		}
		value += int(b[i]&0x7f) * mult
		if b[i]&0x80 == 0 {
			return value, i + 1, nil
		}
		mult *= 128
	}
	return 0, 0, errors.New("variable byte integer longer than 4 bytes")
}

var errShort = errors.New("truncated")

// PacketLen is the length of the whole packet at the start of b, fixed header included, read
// from that header; ok is false while b does not hold the whole fixed header (or it is
// malformed, which reading the packet reports).
func PacketLen(b []byte) (n int, ok bool) {
	if len(b) < 2 {
		return 0, false
	}
	remaining, ln, err := readVarint(b[1:])
	if err != nil {
		return 0, false
	}
	return 1 + ln + remaining, true
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// readString reads a 2-byte-length-prefixed string at the start of b.
func readBytes(b []byte) (s []byte, rest []byte, err error) {
	if len(b) < 2 {
		return nil, nil, errShort
	}
	n := int(binary.BigEndian.Uint16(b))
	if len(b) < 2+n {
		return nil, nil, errShort
	}
	return b[2 : 2+n], b[2+n:], nil
}

// PublishSize is the exact size on the wire of a PUBLISH with the given topic and payload
// lengths: 1 type byte, the remaining-length bytes, 2 + topic length, a 2-byte packet id when
// qos > 0, a property-length byte for MQTT 5 (msgbench sends no properties), and the payload.
func PublishSize(version byte, topicLen, payloadLen int, qos byte) int {
	rl := publishRemaining(version, topicLen, payloadLen, qos)
	return 1 + varintLen(rl) + rl
}

func publishRemaining(version byte, topicLen, payloadLen int, qos byte) int {
	return publishRemainingProps(version, topicLen, payloadLen, qos, 0)
}

// publishRemainingProps is publishRemaining with propsLen bytes of MQTT 5 properties.
func publishRemainingProps(version byte, topicLen, payloadLen int, qos byte, propsLen int) int {
	rl := 2 + topicLen + payloadLen
	if qos > 0 {
		rl += 2
	}
	if version == V5 {
		rl += varintLen(propsLen) + propsLen
	}
	return rl
}

// AppendPublish appends a PUBLISH packet.
func AppendPublish(b []byte, version byte, topic string, payload []byte, qos byte, id uint16, dup, retain bool) []byte {
	flags := qos << 1
	if dup {
		flags |= 0x08
	}
	if retain {
		flags |= 0x01
	}
	b = append(b, PUBLISH<<4|flags)
	b = appendVarint(b, publishRemaining(version, len(topic), len(payload), qos))
	b = appendString(b, topic)
	if qos > 0 {
		b = binary.BigEndian.AppendUint16(b, id)
	}
	if version == V5 {
		b = append(b, 0) // no properties
	}
	return append(b, payload...)
}

// AppendAck appends PUBACK, PUBREC, PUBREL or PUBCOMP for packet id. MQTT 5 allows omitting the
// success reason code, which keeps the packet at 4 bytes in both versions.
func AppendAck(b []byte, packetType byte, id uint16) []byte {
	first := packetType << 4
	if packetType == PUBREL {
		first |= 0x02
	}
	return append(b, first, 2, byte(id>>8), byte(id))
}

// ConnectOptions are the fields of a CONNECT packet.
type ConnectOptions struct {
	Version      byte // V311 or V5
	ClientID     string
	CleanSession bool
	KeepAlive    uint16
	Username     string
	Password     string
	// SessionExpiry is MQTT 5's session expiry interval in seconds (ignored for 3.1.1).
	SessionExpiry uint32
	// Will, when WillTopic is set, is published by the broker when the connection is lost.
	WillTopic   string
	WillPayload []byte
	WillQoS     byte
	WillRetain  bool
}

// AppendConnect appends a CONNECT packet.
func AppendConnect(b []byte, o *ConnectOptions) []byte {
	var flags byte
	if o.CleanSession {
		flags |= 0x02
	}
	if o.WillTopic != "" {
		flags |= 0x04 | o.WillQoS<<3
		if o.WillRetain {
			flags |= 0x20
		}
	}
	if o.Password != "" {
		flags |= 0x40
	}
	if o.Username != "" {
		flags |= 0x80
	}
	var props []byte
	if o.Version == V5 && o.SessionExpiry > 0 {
		props = binary.BigEndian.AppendUint32([]byte{0x11}, o.SessionExpiry)
	}
	var body []byte
	body = appendString(body, "MQTT")
	body = append(body, o.Version, flags)
	body = binary.BigEndian.AppendUint16(body, o.KeepAlive)
	if o.Version == V5 {
		body = appendVarint(body, len(props))
		body = append(body, props...)
	}
	body = appendString(body, o.ClientID)
	if o.WillTopic != "" {
		if o.Version == V5 {
			body = append(body, 0) // no will properties
		}
		body = appendString(body, o.WillTopic)
		body = binary.BigEndian.AppendUint16(body, uint16(len(o.WillPayload)))
		body = append(body, o.WillPayload...)
	}
	if o.Username != "" {
		body = appendString(body, o.Username)
	}
	if o.Password != "" {
		body = appendString(body, o.Password)
	}
	b = append(b, CONNECT<<4)
	b = appendVarint(b, len(body))
	return append(b, body...)
}

// Subscription is one topic filter of a SUBSCRIBE.
type Subscription struct {
	Filter string
	QoS    byte
}

// AppendSubscribe appends a SUBSCRIBE packet.
func AppendSubscribe(b []byte, version byte, id uint16, subs []Subscription) []byte {
	rl := 2
	if version == V5 {
		rl++
	}
	for _, s := range subs {
		rl += 2 + len(s.Filter) + 1
	}
	b = append(b, SUBSCRIBE<<4|0x02)
	b = appendVarint(b, rl)
	b = binary.BigEndian.AppendUint16(b, id)
	if version == V5 {
		b = append(b, 0)
	}
	for _, s := range subs {
		b = appendString(b, s.Filter)
		b = append(b, s.QoS)
	}
	return b
}

// AppendUnsubscribe appends an UNSUBSCRIBE packet.
func AppendUnsubscribe(b []byte, version byte, id uint16, filters []string) []byte {
	rl := 2
	if version == V5 {
		rl++
	}
	for _, f := range filters {
		rl += 2 + len(f)
	}
	b = append(b, UNSUBSCRIBE<<4|0x02)
	b = appendVarint(b, rl)
	b = binary.BigEndian.AppendUint16(b, id)
	if version == V5 {
		b = append(b, 0)
	}
	for _, f := range filters {
		b = appendString(b, f)
	}
	return b
}

// Fixed two-byte packets.
var (
	pingreqPacket    = []byte{PINGREQ << 4, 0}
	disconnectPacket = []byte{DISCONNECT << 4, 0}
)

// Header is a decoded fixed header.
type Header struct {
	Type      byte
	Flags     byte
	Remaining int
}

// Publish is a decoded PUBLISH. Topic and Payload alias the read buffer: they are valid only
// until the handler that received them returns.
type Publish struct {
	Topic    []byte
	Payload  []byte
	QoS      byte
	Dup      bool
	Retain   bool
	PacketID uint16
	// ResponseTopic and CorrelationData are MQTT 5's request/response properties (nil when
	// absent; they alias the read buffer too).
	ResponseTopic, CorrelationData []byte
}

// AppendRequestProperties appends the properties of an MQTT 5 request (§4.10): the Response
// Topic the answer should go to and the Correlation Data it should carry back.
func AppendRequestProperties(b []byte, responseTopic string, correlation []byte) []byte {
	if responseTopic != "" {
		b = appendString(append(b, 0x08), responseTopic)
	}
	if correlation != nil {
		b = binary.BigEndian.AppendUint16(append(b, 0x09), uint16(len(correlation)))
		b = append(b, correlation...)
	}
	return b
}

// DecodePublish decodes the body of a PUBLISH (after the fixed header).
func DecodePublish(version, flags byte, body []byte, p *Publish) error {
	p.QoS = (flags >> 1) & 0x03
	p.Dup = flags&0x08 != 0
	p.Retain = flags&0x01 != 0
	if p.QoS == 3 {
		return malformed(PUBLISH, "QoS 3")
	}
	topic, rest, err := readBytes(body)
	if err != nil {
		return malformed(PUBLISH, "topic: %v", err)
	}
	p.Topic = topic
	p.PacketID = 0
	if p.QoS > 0 {
		if len(rest) < 2 {
			return malformed(PUBLISH, "packet id: truncated")
		}
		p.PacketID = binary.BigEndian.Uint16(rest)
		if p.PacketID == 0 {
			return malformed(PUBLISH, "packet id 0 at QoS %d", p.QoS)
		}
		rest = rest[2:]
	}
	p.ResponseTopic, p.CorrelationData = nil, nil
	if version == V5 {
		plen, n, err := readVarint(rest)
		if err != nil || n+plen > len(rest) {
			return malformed(PUBLISH, "property length")
		}
		if plen > 0 {
			if err := decodePublishProperties(rest[n:n+plen], p); err != nil {
				return err
			}
		}
		rest = rest[n+plen:]
	}
	p.Payload = rest
	return nil
}

// decodePublishProperties reads the request/response properties and skips the others.
func decodePublishProperties(props []byte, p *Publish) error {
	for len(props) > 0 {
		id := props[0]
		props = props[1:]
		switch id {
		case 0x08, 0x09: // Response Topic, Correlation Data
			v, rest, err := readBytes(props)
			if err != nil {
				return malformed(PUBLISH, "property 0x%02x: %v", id, err)
			}
			if id == 0x08 {
				p.ResponseTopic = v
			} else {
				p.CorrelationData = v
			}
			props = rest
		default:
			rest, err := skipProperty(id, props)
			if err != nil {
				return malformed(PUBLISH, "property 0x%02x: %v", id, err)
			}
			props = rest
		}
	}
	return nil
}

// Connack is a decoded CONNACK.
type Connack struct {
	SessionPresent bool
	ReasonCode     byte
	// ReceiveMaximum is MQTT 5's limit on the client's unacknowledged QoS 1/2 publishes
	// (65535 when the broker sends none, and always for 3.1.1).
	ReceiveMaximum uint16
	// MaximumQoS is the highest QoS the broker accepts (2 when it says nothing).
	MaximumQoS byte
	// MaximumPacketSize is the largest packet the broker accepts (0: no limit given).
	MaximumPacketSize uint32
	// ReasonString is MQTT 5's human-readable reason, if any.
	ReasonString string
}

// DecodeConnack decodes the body of a CONNACK.
func DecodeConnack(version byte, body []byte, c *Connack) error {
	if len(body) < 2 {
		return malformed(CONNACK, "%d bytes", len(body))
	}
	c.SessionPresent = body[0]&0x01 != 0
	c.ReasonCode = body[1]
	c.ReceiveMaximum = 65535
	c.MaximumQoS = 2
	if version != V5 || len(body) == 2 {
		return nil
	}
	plen, n, err := readVarint(body[2:])
	if err != nil || 2+n+plen > len(body) {
		return malformed(CONNACK, "property length")
	}
	props := body[2+n : 2+n+plen]
	for len(props) > 0 {
		id := props[0]
		props = props[1:]
		switch id {
		case 0x21: // Receive Maximum
			if len(props) < 2 {
				return malformed(CONNACK, "receive maximum")
			}
			c.ReceiveMaximum = binary.BigEndian.Uint16(props)
			props = props[2:]
		case 0x24: // Maximum QoS
			if len(props) < 1 {
				return malformed(CONNACK, "maximum QoS")
			}
			c.MaximumQoS = props[0]
			props = props[1:]
		case 0x27: // Maximum Packet Size
			if len(props) < 4 {
				return malformed(CONNACK, "maximum packet size")
			}
			c.MaximumPacketSize = binary.BigEndian.Uint32(props)
			props = props[4:]
		case 0x1F: // Reason String
			s, rest, err := readBytes(props)
			if err != nil {
				return malformed(CONNACK, "reason string")
			}
			c.ReasonString = string(s)
			props = rest
		default:
			rest, err := skipProperty(id, props)
			if err != nil {
				return malformed(CONNACK, "property 0x%02x: %v", id, err)
			}
			props = rest
		}
	}
	return nil
}

// skipProperty skips the value of MQTT 5 property id.
func skipProperty(id byte, b []byte) ([]byte, error) {
	switch id {
	case 0x01, 0x17, 0x19, 0x24, 0x25, 0x28, 0x29, 0x2A: // byte
		if len(b) < 1 {
			return nil, errShort
		}
		return b[1:], nil
	case 0x13, 0x21, 0x22, 0x23: // two-byte integer
		if len(b) < 2 {
			return nil, errShort
		}
		return b[2:], nil
	case 0x02, 0x11, 0x18, 0x27: // four-byte integer
		if len(b) < 4 {
			return nil, errShort
		}
		return b[4:], nil
	case 0x0B: // variable byte integer
		_, n, err := readVarint(b)
		if err != nil {
			return nil, err
		}
		return b[n:], nil
	case 0x03, 0x08, 0x09, 0x12, 0x15, 0x16, 0x1A, 0x1C, 0x1F: // string or binary data
		_, rest, err := readBytes(b)
		return rest, err
	case 0x26: // user property: string pair
		_, rest, err := readBytes(b)
		if err != nil {
			return nil, err
		}
		_, rest, err = readBytes(rest)
		return rest, err
	default:
		return nil, fmt.Errorf("unknown property")
	}
}

// Ack is a decoded PUBACK, PUBREC, PUBREL, PUBCOMP, SUBACK or UNSUBACK.
type Ack struct {
	PacketID uint16
	// ReasonCodes: one for PUB* acks (0 when omitted), one per filter for SUBACK/UNSUBACK.
	ReasonCodes []byte
}

// DecodeAck decodes the body of an acknowledgement packet. ReasonCodes aliases body.
func DecodeAck(version, packetType byte, body []byte, a *Ack) error {
	if len(body) < 2 {
		return malformed(packetType, "%d bytes", len(body))
	}
	a.PacketID = binary.BigEndian.Uint16(body)
	rest := body[2:]
	switch packetType {
	case SUBACK, UNSUBACK:
		if version == V5 {
			plen, n, err := readVarint(rest)
			if err != nil || n+plen > len(rest) {
				return malformed(packetType, "property length")
			}
			rest = rest[n+plen:]
		}
		a.ReasonCodes = rest
	default:
		if len(rest) > 0 {
			a.ReasonCodes = rest[:1]
		} else {
			a.ReasonCodes = successCode[:]
		}
	}
	return nil
}

var successCode = [1]byte{0}

// ConnectReturnText names a CONNACK return/reason code (the specification's name; refusal has
// every code's meaning and advice).
func ConnectReturnText(version, code byte) string {
	return refusal.Name(version, refusal.CONNACK, code)
}

// disconnectReasonString is the Reason String property of an MQTT 5 DISCONNECT's body, "" when
// it has none or the properties do not decode.
func disconnectReasonString(body []byte) string {
	if len(body) < 2 {
		return ""
	}
	n, w, err := readVarint(body[1:])
	if err != nil || 1+w+n > len(body) {
		return ""
	}
	props := body[1+w : 1+w+n]
	for len(props) > 0 {
		id := props[0]
		props = props[1:]
		if id == 0x1F { // Reason String
			if s, _, err := readBytes(props); err == nil {
				return string(s)
			}
			return ""
		}
		if props, err = skipProperty(id, props); err != nil {
			return ""
		}
	}
	return ""
}
