package refusal

import "fmt"

// Packet is an MQTT control packet type (the high nibble of its first byte) that carries a
// reason code from the broker.
type Packet byte

// The packets whose reason codes Explain knows.
const (
	CONNACK    Packet = 2
	PUBACK     Packet = 4
	PUBREC     Packet = 5
	PUBCOMP    Packet = 7
	SUBACK     Packet = 9
	UNSUBACK   Packet = 11
	DISCONNECT Packet = 14
)

var packetNames = map[Packet]string{CONNACK: "CONNACK", PUBACK: "PUBACK", PUBREC: "PUBREC", PUBCOMP: "PUBCOMP",
	SUBACK: "SUBACK", UNSUBACK: "UNSUBACK", DISCONNECT: "DISCONNECT"}

func (p Packet) String() string {
	if n, ok := packetNames[p]; ok {
		return n
	}
	return fmt.Sprintf("packet type %d", byte(p))
}

// request is the client packet a broker's packet answers.
func (p Packet) request() string {
	switch p {
	case CONNACK:
		return "CONNECT"
	case PUBACK, PUBREC, PUBCOMP:
		return "PUBLISH"
	case SUBACK:
		return "SUBSCRIBE"
	case UNSUBACK:
		return "UNSUBSCRIBE"
	}
	return ""
}

// MQTT protocol levels (the CONNECT's protocol version byte).
const (
	V311 byte = 4
	V5   byte = 5
)

type reason struct {
	name   string // the specification's name, in lower case
	advice string // what to change; "" when the name says it all
}

// Advice shared by several codes.
const (
	anonymous   = "msgbench's MQTT clients connect anonymously (no user name or password): let anonymous clients in (Mosquitto: allow_anonymous true and no password_file; RabbitMQ: mqtt.allow_anonymous) or benchmark a broker that does"
	topicACL    = "the broker's access control forbids this topic to msgbench's anonymous clients: allow them the benchmark's topics (spec.workload.topicPrefix, or spec.topics[].pattern)"
	tooLarge    = "a packet exceeded the broker's maximum packet or message size: lower the payload (spec.workload.payloadBytes, or spec.groups[].publish.payloadBytes) or raise the broker's limit (Mosquitto: max_packet_size or message_size_limit in spec.broker.config)"
	unavailable = "the broker cannot take the client now: check the broker's log, lower spec.workload.connectRate, or retry when it is up"
	clientIDs   = "give every client its own id (spec.groups[].clientID with {index}, and {run} when several runs share the broker)"
	moved       = "point spec.broker.external.address at the server the broker names (its Server Reference, if any)"
	bug         = "a protocol error between msgbench's client and the broker: report it with the broker's name and version"
)

// mqtt5 is every MQTT 5 reason code a broker sends (MQTT 5.0, section 2.4, Table 2-6), above
// 0x80 a refusal.
var mqtt5 = map[byte]reason{
	0x80: {"unspecified error", "the broker gives no reason: look in its log"},
	0x81: {"malformed packet", bug},
	0x82: {"protocol error", bug},
	0x83: {"implementation specific error", "the broker refused for a reason of its own: look in its log"},
	0x84: {"unsupported protocol version", `the broker does not speak MQTT 5: set spec.mqtt.version to "3.1.1"`},
	0x85: {"client identifier not valid", "the broker refuses the client id (its length, characters or prefix): set spec.groups[].clientID to ids it accepts"},
	0x86: {"bad user name or password", anonymous},
	0x87: {"not authorized", anonymous},
	0x88: {"server unavailable", unavailable},
	0x89: {"server busy", unavailable},
	0x8A: {"banned", "the broker bans this client or its address: lift the ban in the broker's configuration"},
	0x8B: {"server shutting down", "the broker was stopped during the run: check what stopped it"},
	0x8C: {"bad authentication method", anonymous},
	0x8D: {"keep alive timeout", "the broker heard nothing for 1.5 times the keep-alive: raise spec.mqtt.keepAliveSeconds above the link's longest silence (an outage, a radio promotion)"},
	0x8E: {"session taken over", "another connection used the same client id: " + clientIDs},
	0x8F: {"topic filter invalid", "the broker refuses the subscription's topic filter: check spec.workload.topicPrefix, spec.topics[].pattern and spec.groups[].subscribe (some brokers limit wildcards or topic depth)"},
	0x90: {"topic name invalid", "the broker refuses the topic name: check spec.workload.topicPrefix and spec.topics[].pattern (some brokers limit a topic's length, levels or characters)"},
	0x91: {"packet identifier in use", bug},
	0x92: {"packet identifier not found", bug},
	0x93: {"receive maximum exceeded", "more publishes were in flight than the broker's Receive Maximum allows: lower spec.mqtt.inflight"},
	0x94: {"topic alias invalid", bug},
	0x95: {"packet too large", tooLarge},
	0x96: {"message rate too high", "the broker limits each client's message rate: lower spec.workload.rate (or the groups' publish.rate / raise publish.interval), or raise the broker's limit"},
	0x97: {"quota exceeded", "a quota of the broker (queued messages or bytes, connections, messages per client) is spent: lower the load or raise the quota in spec.broker.config (Mosquitto: max_queued_messages, max_queued_bytes, max_connections)"},
	0x98: {"administrative action", "an administrator or a broker rule disconnected the client: look in the broker's log"},
	0x99: {"payload format invalid", "msgbench's payloads are binary: turn off the broker's payload format (UTF-8) validation"},
	0x9A: {"retain not supported", "the broker does not retain messages: set spec.groups[].publish.retain to false"},
	0x9B: {"QoS not supported", "the broker's Maximum QoS is below the benchmark's: lower spec.qos (or spec.groups[].qos)"},
	0x9C: {"use another server", moved},
	0x9D: {"server moved", moved},
	0x9E: {"shared subscriptions not supported", "the broker has no shared subscriptions: leave spec.groups[].subscribe.share out"},
	0x9F: {"connection rate exceeded", "the broker limits how fast clients connect: set spec.workload.connectRate below its limit"},
	0xA0: {"maximum connect time", "the broker limits how long a client stays connected: shorten spec.workload.duration or raise the broker's limit"},
	0xA1: {"subscription identifiers not supported", bug},
	0xA2: {"wildcard subscriptions not supported", "the broker does not take wildcard subscriptions: subscribe to topics without + or # (spec.groups[].subscribe.topics)"},
}

// connack311 is MQTT 3.1.1's CONNACK return codes (section 3.2.2.3).
var connack311 = map[byte]reason{
	1: {"unacceptable protocol version", "the broker does not speak MQTT 3.1.1 (an MQTT 3.1-only broker): use a broker that does"},
	2: {"identifier rejected", "the broker refuses the client id (its length, characters or prefix; MQTT 3.1 brokers take at most 23 characters): set spec.groups[].clientID to ids it accepts"},
	3: {"server unavailable", unavailable},
	4: {"bad user name or password", anonymous},
	5: {"not authorized", anonymous},
}

// notMQTT5 is an MQTT 5 CONNECT answered with MQTT 3.1.1's return code 1: a broker that does not
// speak MQTT 5 (aedes, RabbitMQ before 3.13).
var notMQTT5 = reason{"unacceptable protocol version, an MQTT 3.1.1 broker's answer to MQTT 5",
	`the broker does not speak MQTT 5: set spec.mqtt.version to "3.1.1"`}

// credentialsSent is the advice on an authentication refusal to clients that sent user names.
const credentialsSent = "the devices sent user names and passwords (spec.identity): check them against the broker's users — the patterns, or the credentials list, and which devices have a line (docs/identity.md) — and, when the names are right, the broker's access control for them"

// WithCredentials is e with the advice for clients that did send credentials: the advice that
// they connect anonymously does not hold then.
func WithCredentials(e *Error) *Error {
	if e.Advice == anonymous {
		e.Advice = credentialsSent
	}
	return e
}

// lookup finds code's meaning in packet from a version connection; ok false for an unknown code.
func lookup(version byte, packet Packet, code byte) (reason, bool) {
	if version != V5 {
		switch packet {
		case CONNACK:
			r, ok := connack311[code]
			return r, ok
		case SUBACK:
			if code == 0x80 {
				return reason{"failure", "the broker refused the subscription: check its access control and the topic filter (spec.workload.topicPrefix, spec.topics[].pattern)"}, true
			}
		}
		return reason{}, false
	}
	if packet == CONNACK && code == 1 { // MQTT 5 §3.1.2.2: a server without MQTT 5 answers 3.1.1's code 1
		return notMQTT5, true
	}
	r, ok := mqtt5[code]
	if ok && code == 0x87 && packet != CONNACK {
		r.advice = topicACL
	}
	return r, ok
}

// Name is the specification's name of code in packet (lower case: "not authorized"), or
// "reason code 0x.." for a code MQTT does not define.
func Name(version byte, packet Packet, code byte) string {
	if r, ok := lookup(version, packet, code); ok {
		return r.name
	}
	if version != V5 && packet == CONNACK {
		return fmt.Sprintf("return code %d", code)
	}
	return fmt.Sprintf("reason code 0x%02X", code)
}

// Explain explains a refusal: reason code code in packet, from a broker on a connection of
// protocol version (V311, V5), with the broker's Reason String if it sent one and detail, what
// the refused request was and whose ("client a-0, PUBLISH of 290 bytes to t/0"; may be "").
func Explain(version byte, packet Packet, code byte, reasonString, detail string) *Error {
	r, known := lookup(version, packet, code)
	name := r.name
	var codeText string
	switch {
	case packet == CONNACK && (version != V5 || code == 1):
		codeText = fmt.Sprintf("%s return code %d", packet, code)
	default:
		codeText = fmt.Sprintf("%s reason code 0x%02X", packet, code)
	}
	var what string
	switch {
	case packet == DISCONNECT:
		what = "broker disconnected the client"
	case packet.request() != "":
		what = "broker refused " + packet.request()
	default:
		what = "broker refused"
	}
	if known {
		what += ": " + name + " (" + codeText + ")"
	} else {
		what += ": " + codeText
	}
	if reasonString != "" {
		what += fmt.Sprintf(", saying %q", reasonString)
	}
	return &Error{What: what, Detail: detail, Advice: r.advice}
}
