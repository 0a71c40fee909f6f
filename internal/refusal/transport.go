package refusal

import (
	"crypto/tls"
	"errors"
	"io"
	"syscall"
)

// ClosedEarly reports an error that is the other side closing the connection (EOF, a reset):
// before CONNACK, the sign of a broker that did not take the CONNECT at all.
func ClosedEarly(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// NotTLSReply reports a TLS handshake error that is the server answering in something other
// than TLS: Go's "first record does not look like a TLS handshake" (bytes that are no TLS
// record), or the connection closed in the middle of it (a plain MQTT broker closes on a
// ClientHello, which is no CONNECT).
func NotTLSReply(err error) bool {
	var rh tls.RecordHeaderError
	return errors.As(err, &rh) || ClosedEarly(err)
}

// NotMQTT5 explains a connection closed right after an MQTT 5 CONNECT, without CONNACK.
// speaks311 is whether the broker accepted a 3.1.1 CONNECT on the same port; versionField is the
// field that sets the version (spec.mqtt.version, or a group's).
func NotMQTT5(err error, speaks311 bool, versionField string) *Error {
	e := &Error{What: "the broker closed the connection right after CONNECT with protocol version 5", Err: err,
		Advice: "set " + versionField + ` to "3.1.1"`}
	if speaks311 {
		e.What += "; it accepts an MQTT 3.1.1 CONNECT on the same port, so it does not speak MQTT 5"
	} else {
		e.What += "; it probably does not speak MQTT 5"
	}
	return e
}

// ExpectsTLS explains a plain CONNECT to address closed without CONNACK by a server that
// answers a TLS handshake there.
func ExpectsTLS(address string, err error) *Error {
	return &Error{What: "the broker closed the connection right after a plain-text CONNECT: " + address + " serves TLS (it answers a TLS handshake)", Err: err,
		Advice: "set spec.tls.enabled to true, or point spec.broker.external.address at the broker's plain MQTT port (usually 1883)"}
}

// NotTLS explains a TLS handshake with address that got a non-TLS reply (NotTLSReply).
// plainMQTT is whether a plain MQTT CONNECT got a CONNACK there.
func NotTLS(address string, err error, plainMQTT bool) *Error {
	e := &Error{What: "the TLS handshake with " + address + " got no TLS answer", Err: err,
		Advice: "set spec.tls.enabled to false, or point spec.broker.external.address at the broker's TLS port (usually 8883)"}
	var rh tls.RecordHeaderError
	if errors.As(err, &rh) {
		e.What += " (its first bytes are no TLS record)"
	} else {
		e.What += " (it closed the connection)"
	}
	if plainMQTT {
		e.What += "; the port serves plain MQTT: it answers a plain-text CONNECT"
	} else {
		e.What += "; the port probably does not serve TLS"
	}
	return e
}
