package roundtrip

import (
	"errors"
	"fmt"
	"time"
)

// Expect is how many round trips (RTT) each figure of a protocol set-up takes; derivations in
// docs/round-trips.md. A negative value is not checked.
type Expect struct {
	SubscriberConnect, PublisherConnect, FirstMessage float64
	// FirstAck is the first publish's acknowledgement (the request's response for HTTP, PUBACK for
	// QoS 1 MQTT); NextAck the second's (different without keep-alive).
	FirstAck, NextAck float64
}

// Case is one protocol set-up of the table.
type Case struct {
	Name   string
	Expect Expect
}

// Table is the expected round trips of every set-up the tests cover. A gateway or broker
// on the server side of the link adds no round trip: it is next to the broker.
var Table = []Case{
	{"mqtt tcp qos1", Expect{2, 2, 3, 1, 1}},
	{"mqtt tls1.3 qos1", Expect{3, 3, 4, 1, 1}},
	{"mqtt tls1.2 qos1", Expect{4, 4, 5, 1, 1}},
	{"mqtt-quic qos1", Expect{2, 2, 3, 1, 1}},
	{"mqtt-quic 0-rtt qos1", Expect{1, 1, 2, 1, 1}},
	{"http1.1", Expect{2, 1, 2, 1, 1}},
	{"http1.1 tls1.3", Expect{3, 2, 3, 1, 1}},
	{"http1.1 tls1.2", Expect{4, 3, 4, 1, 1}},
	{"http1.1 no keep-alive", Expect{2, 1, 2, 1, 2}},
	{"http1.1 tls1.3 no keep-alive", Expect{3, 2, 3, 1, 3}},
	{"http2 h2c", Expect{2, 1, 2, 1, 1}},
	{"http2 tls1.3", Expect{3, 2, 3, 1, 1}},
	{"http3", Expect{2, 1, 2, 1, 1}},
	{"http3 no keep-alive", Expect{2, 1, 2, 1, 2}},
}

// Lookup returns the case of a name.
func Lookup(name string) (Case, bool) {
	for _, c := range Table {
		if c.Name == name {
			return c, true
		}
	}
	return Case{}, false
}

// Tolerance is how far a measured figure may lie from its expected n × RTT. Below is small:
// an emulated link never delivers early, so only clock reading slack is allowed. Above covers
// the processing on both ends (TLS and QUIC crypto, the gateway, the broker) and the emulator's
// timer slack; it must stay below RTT/2 so that a wrong count (off by at least half a round
// trip) always fails.
type Tolerance struct {
	Below, Above time.Duration
}

// DefaultTolerance for a link of round-trip time rtt: 1 ms below; above, a quarter of the RTT,
// at least 5 ms and at most 50 ms.
func DefaultTolerance(rtt time.Duration) Tolerance {
	return Tolerance{Below: time.Millisecond, Above: min(max(rtt/4, 5*time.Millisecond), 50*time.Millisecond)}
}

// Check compares a measurement with the case's expectations on a link of round-trip time rtt.
// A negative measured figure was not measured and is not checked.
func (c Case) Check(m Measurement, rtt time.Duration, tol Tolerance) error {
	var errs []error
	check := func(figure string, got time.Duration, rtts float64) {
		if rtts < 0 || got < 0 {
			return
		}
		want := time.Duration(rtts * float64(rtt))
		if got < want-tol.Below || got > want+tol.Above {
			errs = append(errs, fmt.Errorf("%s: %s took %v = %.2f RTT, want %v RTT (%v, -%v/+%v)",
				c.Name, figure, got.Round(100*time.Microsecond), float64(got)/float64(rtt), rtts, want, tol.Below, tol.Above))
		}
	}
	check("subscriber connect", m.SubscriberConnect, c.Expect.SubscriberConnect)
	check("publisher connect", m.PublisherConnect, c.Expect.PublisherConnect)
	check("first message", m.FirstMessage, c.Expect.FirstMessage)
	if len(m.Acks) > 0 {
		check("first acknowledgement", m.Acks[0], c.Expect.FirstAck)
	}
	if len(m.Acks) > 1 {
		check("next acknowledgement", m.Acks[1], c.Expect.NextAck)
	}
	return errors.Join(errs...)
}
