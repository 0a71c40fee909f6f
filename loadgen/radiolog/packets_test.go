package radiolog

import (
	"slices"
	"testing"
	"time"

	"github.com/msgbench/msgbench/energy"
)

const ms = time.Millisecond

// An MQTT session by hand, round trip 400 ms: connect, CONNECT/CONNACK, a QoS 1 PUBLISH whose
// PUBACK comes a round trip later, a second one unanswered (QoS 0), then a close.
func TestPacketsOfAnMQTTSession(t *testing.T) {
	events := []Event{
		{At: 1000 * ms, Kind: Open},
		{At: 1000 * ms, Up: true, Bytes: 20},   // CONNECT
		{At: 1400 * ms, Bytes: 4},              // CONNACK
		{At: 1410 * ms, Up: true, Bytes: 3000}, // a PUBLISH of 3000 bytes: three segments
		{At: 1810 * ms, Bytes: 4},              // PUBACK, within the delayed-ACK time of the broker's receiving it
		{At: 5000 * ms, Up: true, Bytes: 100},  // QoS 0: nothing answers
		{At: 9000 * ms, Kind: Close},
	}
	got := Packets([]Conn{{Events: events}}, DefaultRules(400*ms))
	up, down := func(at time.Duration, b int) energy.Packet { return energy.Packet{At: at, Up: true, Bytes: b} },
		func(at time.Duration, b int) energy.Packet { return energy.Packet{At: at, Bytes: b} }
	want := []energy.Packet{
		up(600*ms, 60), down(1000*ms, 60), up(1000*ms, 52), // SYN a round trip before connect returned, SYN-ACK, ACK
		up(1000*ms, 72),   // CONNECT
		down(1400*ms, 56), // CONNACK
		up(1400*ms, 52),   // the device's ACK of CONNACK at once, before it answers (then ping-pong)
		down(1400*ms, 52), // the broker's ACK of CONNECT at once: not yet an exchange (at one time, the rules' order)
		up(1410*ms, 3000+3*52),
		// the broker answered CONNECT within 40 ms: the PUBACK carries its ACK of the PUBLISH
		down(1810*ms, 56),
		// the device sends nothing within 40 ms of the PUBACK: a delayed ACK, and no more ping-pong
		up(1850*ms, 52),
		up(5000*ms, 152),
		down(5440*ms, 52),                                                      // unanswered: the broker's ACK 40 ms late
		up(9000*ms, 52), down(9400*ms, 52), down(9400*ms, 52), up(9400*ms, 52), // FIN, ACK and FIN, ACK
	}
	if !slices.Equal(got, want) {
		t.Errorf("packets\n got %v\nwant %v", got, want)
	}
}

// A UDP datagram is one packet with its IPv4 and UDP headers; a connection of no client's events
// has none.
func TestPacketsOfDatagrams(t *testing.T) {
	got := Packets([]Conn{{UDP: true, Events: []Event{{At: ms, Up: true, Bytes: 30}, {At: 2 * ms, Bytes: 7}}}, {}}, DefaultRules(0))
	want := []energy.Packet{{At: ms, Up: true, Bytes: 58}, {At: 2 * ms, Bytes: 35}}
	if !slices.Equal(got, want) {
		t.Errorf("packets %v, want %v", got, want)
	}
}
