package localrun

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strings"
	"time"
)

// probeDeviceTLS shakes hands once with the broker as the clients will, when spec.tls chooses
// groups or suites: a broker that supports none of them (the local Mosquitto's OpenSSL 3.0 has no
// ML-KEM) is refused here, naming the fields, instead of failing every client's handshake.
func (r *runner) probeDeviceTLS(ctx context.Context) error {
	t := r.spec.TLS
	if t == nil || r.clientTLS == nil || (len(t.Groups) == 0 && len(t.CipherSuites) == 0) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	dial := r.net.dial
	if dial == nil { // loopback
		dial = (&net.Dialer{}).DialContext
	}
	c, err := dial(ctx, "tcp", r.broker)
	if err != nil {
		return nil // not a TLS matter: the clients' own connections will say what is wrong
	}
	defer func() { _ = c.Close() }()
	if err := tls.Client(c, r.clientTLS).HandshakeContext(ctx); err != nil {
		var offer []string
		if len(t.Groups) > 0 {
			offer = append(offer, fmt.Sprintf("groups %v", t.Groups))
		}
		if len(t.CipherSuites) > 0 {
			offer = append(offer, fmt.Sprintf("cipher suites %v", t.CipherSuites))
		}
		return fmt.Errorf("spec.tls: %s refused a handshake offering only %s (%w): it supports none of them; docs/tls.md says which server supports what",
			r.env.Broker, strings.Join(offer, " and "), err)
	}
	return nil
}
