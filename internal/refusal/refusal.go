// Package refusal says in words what it means when the other side of a connection says no: an
// MQTT reason code (one table, mqtt.go, for every packet that carries one) or a connection
// closed by a broker that speaks another protocol version or expects (or does not expect) TLS.
// Each explanation names the cause and the spec field to change (docs/brokers.md, "When the
// broker says no").
package refusal

import "strings"

// Error is a refusal explained: what happened, what it means and what to change. Err is the
// error it explains (the read that saw the connection close, nil for a reason code).
type Error struct {
	// What happened: "broker refused CONNECT: not authorized (CONNACK return code 5)", the same
	// for every client it happens to (a summary groups clients by it).
	What string
	// Detail is this occurrence's: which client, which packet ("client r-pub-3, PUBLISH of 290
	// bytes to t/3"); may be empty.
	Detail string
	// Advice is what to change: "msgbench's MQTT clients connect anonymously: …".
	Advice string
	Err    error
}

func (e *Error) Error() string { return join("; ", join(", ", e.What, e.Detail), e.Advice) }

func (e *Error) Unwrap() error { return e.Err }

// join joins non-empty parts with sep.
func join(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}
