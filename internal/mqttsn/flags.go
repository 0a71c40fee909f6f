package mqttsn

// Flags is the flags byte of CONNECT, WILLTOPIC, PUBLISH, SUBSCRIBE, SUBACK, UNSUBSCRIBE and
// WILLTOPICUPD (MQTT-SN 1.2 §5.3.4): DUP (bit 7), QoS (bits 6–5), Retain (bit 4), Will (bit 3),
// CleanSession (bit 2) and TopicIdType (bits 1–0).
type Flags byte

// Flag bits.
const (
	FlagDUP          Flags = 0x80
	FlagRetain       Flags = 0x10
	FlagWill         Flags = 0x08
	FlagCleanSession Flags = 0x04
	qosMask          Flags = 0x60
	topicTypeMask    Flags = 0x03
)

// TopicIDType says what the topic id field of PUBLISH, SUBSCRIBE and UNSUBSCRIBE holds.
type TopicIDType byte

// Topic id types.
const (
	// TopicNormal is an id the gateway assigned (REGISTER/REGACK, SUBACK); in SUBSCRIBE and
	// UNSUBSCRIBE it means the message carries a topic name.
	TopicNormal TopicIDType = 0
	// TopicPredefined is an id both sides know from configuration.
	TopicPredefined TopicIDType = 1
	// TopicShort is a two-character topic name carried in the id field.
	TopicShort TopicIDType = 2
)

// String names the type as msgbench's spec.mqttsn.topicIdType does.
func (t TopicIDType) String() string {
	switch t {
	case TopicNormal:
		return "normal"
	case TopicPredefined:
		return "predefined"
	case TopicShort:
		return "short"
	}
	return "reserved"
}

// QoS returns the quality of service: 0, 1, 2, or -1 (publish without a connection).
func (f Flags) QoS() int8 {
	q := int8(f&qosMask) >> 5
	if q == 3 {
		return -1
	}
	return q
}

// WithQoS returns f with the QoS bits set to q (-1..2).
func (f Flags) WithQoS(q int8) Flags {
	bits := Flags(q&3) << 5 // -1 & 3 == 3
	return f&^qosMask | bits
}

// TopicIDType returns the topic id type bits.
func (f Flags) TopicIDType() TopicIDType { return TopicIDType(f & topicTypeMask) }

// WithTopicIDType returns f with the topic id type bits set to t.
func (f Flags) WithTopicIDType(t TopicIDType) Flags { return f&^topicTypeMask | Flags(t)&topicTypeMask }

// DUP reports the DUP flag (a retransmission).
func (f Flags) DUP() bool { return f&FlagDUP != 0 }

// Retain reports the Retain flag.
func (f Flags) Retain() bool { return f&FlagRetain != 0 }

// Will reports the Will flag.
func (f Flags) Will() bool { return f&FlagWill != 0 }

// CleanSession reports the CleanSession flag.
func (f Flags) CleanSession() bool { return f&FlagCleanSession != 0 }
