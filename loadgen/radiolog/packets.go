// Package radiolog is how a worker accounts its devices' radio energy where no link emulator
// sees their packets (on Kubernetes, or msgbench loadgen against a broker of the user's): it
// records what each device's sockets wrote and read, when and how much (Log), and turns that
// into the device's radio timeline by rule (Packets) — the IP packets those reads and writes
// became, with the TCP packets no socket shows estimated. docs/energy.md says how exact that is.
package radiolog

import (
	"cmp"
	"slices"
	"time"

	"github.com/msgbench/msgbench/energy"
)

// Event is one socket write (Up) or read: when, and how many payload bytes it moved. Open and
// Close mark a TCP connection's handshake and its end.
type Event struct {
	At    time.Duration
	Up    bool
	Bytes int
	Kind  Kind
}

// Kind is what an event was.
type Kind uint8

// Kinds of event.
const (
	Data  Kind = iota
	Open       // a TCP connect returned (its SYN went a round trip before)
	Close      // the device closed a TCP connection
)

// Conn is one connection's events, in time order.
type Conn struct {
	UDP    bool
	Events []Event
}

// Rules are how socket writes and reads become IP packets on the radio.
type Rules struct {
	// MSS is the TCP payload per segment (1448: a 1500-byte MTU with timestamps; pods keep
	// their interface MTU).
	MSS int
	// TCPHeader is IPv4 (20) + TCP (20) + the timestamp option (12) bytes per segment;
	// UDPHeader IPv4 (20) + UDP (8) per datagram.
	TCPHeader, UDPHeader int
	// RTT is the link's round trip: the peer sees a write half of it later, and the device
	// reads what the peer sent half of it after.
	RTT time.Duration
	// DelayedACK is how long a TCP end waits for data of its own to carry an ACK (Linux: 40 ms).
	DelayedACK time.Duration
}

// DefaultRules are the rules for a link with round trip rtt.
func DefaultRules(rtt time.Duration) Rules {
	return Rules{MSS: 1448, TCPHeader: 52, UDPHeader: 28, RTT: rtt, DelayedACK: 40 * time.Millisecond}
}

// synBytes is a SYN's or SYN-ACK's size: the header with the MSS, SACK, timestamp and window
// scale options (60 bytes with IPv4).
const synBytes = 60

// Packets is one device's radio timeline from its connections, in time order. A UDP read or
// write is one datagram with its header. A TCP write or read of n bytes is ceil(n/MSS) segments,
// each with its header, sent together. What no socket shows is added by rule (Linux's):
//   - a connect's SYN one round trip before it returned, the SYN-ACK when it did, and the
//     handshake's last ACK with it;
//   - each end's ACKs of the data it receives (acks): at once, until the end answers data within
//     the delayed-ACK time (an exchange: Linux's ping-pong mode), then carried by its answer, or
//     sent alone the delayed-ACK time later when no answer came — which ends the exchange;
//   - a close's FIN, the peer's ACK and FIN one round trip later, and the last ACK.
//
// Retransmissions are not seen and not added.
func Packets(conns []Conn, r Rules) []energy.Packet {
	var out []energy.Packet
	for _, c := range conns {
		if c.UDP {
			for _, e := range c.Events {
				if e.Kind == Data {
					out = append(out, energy.Packet{At: e.At, Up: e.Up, Bytes: e.Bytes + r.UDPHeader})
				}
			}
			continue
		}
		out = append(out, tcpPackets(c.Events, r)...)
	}
	slices.SortStableFunc(out, func(a, b energy.Packet) int { return cmp.Compare(a.At, b.At) })
	return out
}

// tcpPackets is one TCP connection's packets (Packets' rules).
func tcpPackets(events []Event, r Rules) []energy.Packet {
	var out []energy.Packet
	header := func(at time.Duration, up bool, bytes int) {
		out = append(out, energy.Packet{At: at, Up: up, Bytes: bytes})
	}
	// Each end's data, on its own clock: the device's writes and reads as recorded, the peer's
	// half a round trip from the device.
	var deviceSends, deviceGets, peerSends, peerGets []time.Duration
	for _, e := range events {
		switch e.Kind {
		case Open:
			header(e.At-r.RTT, true, synBytes)
			header(e.At, false, synBytes)
			header(e.At, true, r.TCPHeader)
		case Close:
			header(e.At, true, r.TCPHeader)
			header(e.At+r.RTT, false, r.TCPHeader)
			header(e.At+r.RTT, false, r.TCPHeader)
			header(e.At+r.RTT, true, r.TCPHeader)
		case Data:
			if e.Bytes <= 0 {
				continue
			}
			segments := (e.Bytes + r.MSS - 1) / r.MSS
			header(e.At, e.Up, e.Bytes+segments*r.TCPHeader)
			if e.Up {
				deviceSends, peerGets = append(deviceSends, e.At), append(peerGets, e.At+r.RTT/2)
			} else {
				deviceGets, peerSends = append(deviceGets, e.At), append(peerSends, e.At-r.RTT/2)
			}
		}
	}
	for _, at := range acks(deviceGets, deviceSends, r.DelayedACK) {
		header(at, true, r.TCPHeader)
	}
	for _, at := range acks(peerGets, peerSends, r.DelayedACK) {
		header(at+r.RTT/2, false, r.TCPHeader) // reaches the device half a round trip later
	}
	return out
}

// acks is when one TCP end sends an ACK of its own for the data it receives at gets (in time
// order), sending data at sends: Linux acknowledges at once until the end answers data within
// delayed (ping-pong mode); from then on an answer carries the ACK, and data left unanswered is
// acknowledged delayed later, which leaves ping-pong mode.
func acks(gets, sends []time.Duration, delayed time.Duration) []time.Duration {
	var out []time.Duration
	pingpong := false
	for _, t := range gets {
		i, _ := slices.BinarySearch(sends, t)
		answered := i < len(sends) && sends[i] <= t+delayed
		switch {
		case !pingpong:
			out = append(out, t)
		case !answered:
			out = append(out, t+delayed)
			pingpong = false
		}
		if answered {
			pingpong = true
		}
	}
	return out
}
