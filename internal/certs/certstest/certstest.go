// Package certstest makes TLS material for tests whose servers listen on loopback.
package certstest

import (
	"crypto/tls"
	"testing"
	"time"

	"github.com/msgbench/msgbench/internal/certs"
)

// Loopback makes a CA and a server certificate for 127.0.0.1, valid for an hour, and returns
// them with the server's TLS configuration. It fails the test on error.
func Loopback(tb testing.TB) (*certs.Bundle, *tls.Config) {
	tb.Helper()
	b, err := certs.New("msgbench-test", []string{"127.0.0.1"}, time.Hour)
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := b.ServerTLS()
	if err != nil {
		tb.Fatal(err)
	}
	return b, srv
}
