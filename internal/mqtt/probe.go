package mqtt

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"time"
)

// Probe checks that an MQTT broker answers through the protocol, not only that its port is
// open: it dials address (with dial, nil for net.Dialer), wraps TLS when tlsConfig is set, sends
// a clean MQTT 3.1.1 CONNECT, and requires an accepting CONNACK within ctx. Brokers accept TCP
// connections before they serve MQTT (RabbitMQ's plugin, Artemis's acceptors, a JVM warming
// up), so a dial alone reports a broker ready that refuses its first clients.
func Probe(ctx context.Context, dial func(ctx context.Context, network, address string) (net.Conn, error), address string, tlsConfig *tls.Config) error {
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	nc, err := dial(ctx, "tcp", address)
	if err != nil {
		return err
	}
	if tlsConfig != nil {
		tc := tls.Client(nc, tlsConfig)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = nc.Close()
			return fmt.Errorf("TLS handshake with %s: %w", address, err)
		}
		nc = tc
	}
	id := "msgbench-probe-" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	c, err := Connect(ctx, nc, Options{Connect: ConnectOptions{Version: V311, ClientID: id, CleanSession: true}})
	if err != nil {
		return fmt.Errorf("MQTT CONNECT to %s: %w", address, err)
	}
	_ = c.Disconnect()
	return nil
}
