// Package mqttsn is an MQTT-SN 1.2 codec shared by msgbench's MQTT-SN gateway (gateway/mqttsn)
// and load-generator driver (loadgen/drivers/mqttsn). Every message of the specification has a
// struct with an Append method (encode) and a Decode method (decode the body after the header).
// Decoded byte slices alias the datagram, so decoding allocates nothing; encoding appends to a
// caller's buffer, so a reused buffer makes it allocation-free too.
//
// Each message is one datagram: a length field (one byte, or 0x01 followed by two bytes for
// messages of 256 bytes and more), the message type, and the body. ReadHeader checks that the
// length field matches the datagram.
package mqttsn

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// MsgType is an MQTT-SN message type (MQTT-SN 1.2 §5.2.2).
type MsgType byte

// Message types.
const (
	ADVERTISE     MsgType = 0x00
	SEARCHGW      MsgType = 0x01
	GWINFO        MsgType = 0x02
	CONNECT       MsgType = 0x04
	CONNACK       MsgType = 0x05
	WILLTOPICREQ  MsgType = 0x06
	WILLTOPIC     MsgType = 0x07
	WILLMSGREQ    MsgType = 0x08
	WILLMSG       MsgType = 0x09
	REGISTER      MsgType = 0x0A
	REGACK        MsgType = 0x0B
	PUBLISH       MsgType = 0x0C
	PUBACK        MsgType = 0x0D
	PUBCOMP       MsgType = 0x0E
	PUBREC        MsgType = 0x0F
	PUBREL        MsgType = 0x10
	SUBSCRIBE     MsgType = 0x12
	SUBACK        MsgType = 0x13
	UNSUBSCRIBE   MsgType = 0x14
	UNSUBACK      MsgType = 0x15
	PINGREQ       MsgType = 0x16
	PINGRESP      MsgType = 0x17
	DISCONNECT    MsgType = 0x18
	WILLTOPICUPD  MsgType = 0x1A
	WILLTOPICRESP MsgType = 0x1B
	WILLMSGUPD    MsgType = 0x1C
	WILLMSGRESP   MsgType = 0x1D
)

var typeNames = [...]string{
	ADVERTISE: "ADVERTISE", SEARCHGW: "SEARCHGW", GWINFO: "GWINFO", CONNECT: "CONNECT", CONNACK: "CONNACK",
	WILLTOPICREQ: "WILLTOPICREQ", WILLTOPIC: "WILLTOPIC", WILLMSGREQ: "WILLMSGREQ", WILLMSG: "WILLMSG",
	REGISTER: "REGISTER", REGACK: "REGACK", PUBLISH: "PUBLISH", PUBACK: "PUBACK", PUBCOMP: "PUBCOMP",
	PUBREC: "PUBREC", PUBREL: "PUBREL", SUBSCRIBE: "SUBSCRIBE", SUBACK: "SUBACK", UNSUBSCRIBE: "UNSUBSCRIBE",
	UNSUBACK: "UNSUBACK", PINGREQ: "PINGREQ", PINGRESP: "PINGRESP", DISCONNECT: "DISCONNECT",
	WILLTOPICUPD: "WILLTOPICUPD", WILLTOPICRESP: "WILLTOPICRESP", WILLMSGUPD: "WILLMSGUPD", WILLMSGRESP: "WILLMSGRESP",
}

// String names the type as the specification does ("PUBLISH"); reserved values read "type 0x03".
func (t MsgType) String() string {
	if int(t) < len(typeNames) && typeNames[t] != "" {
		return typeNames[t]
	}
	return fmt.Sprintf("type 0x%02x", byte(t))
}

// Known reports whether t is a message type of MQTT-SN 1.2 (the forwarder encapsulation 0xFE is
// not: msgbench's gateway talks to clients directly).
func (t MsgType) Known() bool { return int(t) < len(typeNames) && typeNames[t] != "" }

// ReturnCode is the result in CONNACK, REGACK, PUBACK, SUBACK, WILLTOPICRESP and WILLMSGRESP.
type ReturnCode byte

// Return codes (MQTT-SN 1.2 §5.3.10).
const (
	Accepted               ReturnCode = 0x00
	RejectedCongestion     ReturnCode = 0x01
	RejectedInvalidTopicID ReturnCode = 0x02
	RejectedNotSupported   ReturnCode = 0x03
)

// String explains the code.
func (c ReturnCode) String() string {
	switch c {
	case Accepted:
		return "accepted"
	case RejectedCongestion:
		return "rejected: congestion"
	case RejectedInvalidTopicID:
		return "rejected: invalid topic ID"
	case RejectedNotSupported:
		return "rejected: not supported"
	}
	return fmt.Sprintf("return code 0x%02x", byte(c))
}

// MaxLength is the largest message the length field encodes.
const MaxLength = 65535

// MaxUDPPayload is the largest UDP payload over IPv4 (65535 − 20 IP − 8 UDP): the largest
// MQTT-SN message msgbench sends.
const MaxUDPPayload = 65507

// PublishOverhead is the size of a PUBLISH without data in the 3-byte length form (0x01, two
// length bytes, type, flags, topic id, message id): an MQTT-SN PUBLISH over UDP/IPv4 carries at
// most MaxUDPPayload − PublishOverhead = 65498 data bytes.
const PublishOverhead = 9

// ErrMalformed is wrapped by every decoding error.
var ErrMalformed = errors.New("malformed MQTT-SN message")

// Error is a decoding error naming the message type.
type Error struct {
	Type   MsgType
	Reason string
}

func (e *Error) Error() string { return "mqtt-sn " + e.Type.String() + ": " + e.Reason }

// Unwrap makes errors.Is(err, ErrMalformed) true.
func (e *Error) Unwrap() error { return ErrMalformed }

func malformed(t MsgType, reason string) error { return &Error{Type: t, Reason: reason} }

// HeaderLen is the size of the length field plus the type byte for a message whose body has
// bodyLen bytes: 2 while the whole message fits in 255 bytes, else 4.
func HeaderLen(bodyLen int) int {
	if bodyLen+2 <= 255 {
		return 2
	}
	return 4
}

// AppendHeader appends the length field and type of a message with a body of bodyLen bytes,
// choosing the one-byte length form when the message fits in 255 bytes. bodyLen must leave the
// message within MaxLength (Append methods check; AppendHeader panics otherwise, a programming
// error).
func AppendHeader(b []byte, t MsgType, bodyLen int) []byte {
	total := bodyLen + 2
	if total <= 255 {
		return append(b, byte(total), byte(t))
	}
	total += 2
	if total > MaxLength {
		panic(fmt.Sprintf("mqtt-sn %v: %d-byte message exceeds %d", t, total, MaxLength))
	}
	return append(b, 0x01, byte(total>>8), byte(total), byte(t))
}

// ReadHeader parses the header of datagram b and returns the message type and body. The length
// field must equal len(b): MQTT-SN carries exactly one message per datagram.
func ReadHeader(b []byte) (MsgType, []byte, error) {
	if len(b) < 2 {
		return 0, nil, malformed(0xff, fmt.Sprintf("%d-byte datagram is shorter than a header", len(b)))
	}
	if b[0] != 0x01 {
		t := MsgType(b[1])
		if int(b[0]) != len(b) {
			return t, nil, malformed(t, fmt.Sprintf("length field %d, datagram %d bytes", b[0], len(b)))
		}
		if b[0] < 2 {
			return t, nil, malformed(t, fmt.Sprintf("length field %d is below the 2-byte header", b[0]))
		}
		return t, b[2:], nil
	}
	if len(b) < 4 {
		return 0xff, nil, malformed(0xff, fmt.Sprintf("%d-byte datagram is shorter than a 3-byte-length header", len(b)))
	}
	t := MsgType(b[3])
	n := int(binary.BigEndian.Uint16(b[1:3]))
	if n != len(b) {
		return t, nil, malformed(t, fmt.Sprintf("length field %d, datagram %d bytes", n, len(b)))
	}
	return t, b[4:], nil
}

// Size is the total size of a message with a body of bodyLen bytes.
func Size(bodyLen int) int { return HeaderLen(bodyLen) + bodyLen }

func checkSize(t MsgType, bodyLen int) error {
	if Size(bodyLen) > MaxLength {
		return malformed(t, fmt.Sprintf("%d-byte body exceeds the %d-byte message limit", bodyLen, MaxLength))
	}
	return nil
}
