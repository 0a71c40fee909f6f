package quic_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/gateway"
	gwquic "github.com/msgbench/msgbench/gateway/quic"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/certs/certstest"
	"github.com/msgbench/msgbench/internal/mqtt"
	"github.com/msgbench/msgbench/plan"
)

func start(t *testing.T) (gateway.Gateway, *certs.Bundle) {
	t.Helper()
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	bundle, srv := certstest.Loopback(t)
	gw, err := gwquic.Start(context.Background(), gateway.Options{Listen: "127.0.0.1:0", Broker: b.Addr, TLS: srv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Close() })
	return gw, bundle
}

func clientTLS(t *testing.T, b *certs.Bundle, alpn string) *tls.Config {
	c, err := certs.ClientTLS(b.CACert, "127.0.0.1", "1.3")
	if err != nil {
		t.Fatal(err)
	}
	c.NextProtos = []string{alpn}
	return c
}

// streamConn is a raw client's stream as a net.Conn for internal/mqtt.
type streamConn struct {
	*quic.Stream
	c *quic.Conn
}

func (s streamConn) LocalAddr() net.Addr  { return s.c.LocalAddr() }
func (s streamConn) RemoteAddr() net.Addr { return s.c.RemoteAddr() }
func (s streamConn) Close() error         { _ = s.Stream.Close(); return s.c.CloseWithError(0, "") }

// TestRawClientsPublishSubscribe: two plain quic-go clients speak MQTT on their first stream;
// a message published at each QoS reaches the subscriber byte for byte through the broker.
func TestRawClientsPublishSubscribe(t *testing.T) {
	gw, b := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got := make(chan []byte, 8)
	connect := func(id string, onPublish func(*mqtt.Publish)) *mqtt.Conn {
		qc, err := quic.DialAddr(ctx, gw.Addr().String(), clientTLS(t, b, "mqtt"), nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := qc.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		c, err := mqtt.Connect(ctx, streamConn{s, qc}, mqtt.Options{Connect: mqtt.ConnectOptions{ClientID: id, CleanSession: true, KeepAlive: 30}, OnPublish: onPublish})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Disconnect() })
		return c
	}
	sub := connect("sub", func(p *mqtt.Publish) { got <- bytes.Clone(p.Payload) })
	if codes, err := sub.Subscribe(ctx, mqtt.Subscription{Filter: "t/raw", QoS: 2}); err != nil || codes[0] != 2 {
		t.Fatalf("SUBACK %v %v", codes, err)
	}
	pub := connect("pub", nil)
	for qos := byte(0); qos <= 2; qos++ {
		payload := []byte{0, 1, 2, 0xff, qos, '\r', '\n'}
		if _, err := pub.Publish("t/raw", payload, qos, false, true); err != nil {
			t.Fatal(err)
		}
		select {
		case p := <-got:
			if !bytes.Equal(p, payload) {
				t.Errorf("qos %d: got % x, want % x", qos, p, payload)
			}
		case <-ctx.Done():
			t.Fatalf("qos %d: nothing delivered", qos)
		}
	}
	if err := pub.WaitInflight(ctx); err != nil {
		t.Errorf("publishes not completed: %v", err)
	}
}

// TestRefusals: a client offering another ALPN fails the handshake; a gateway without a
// certificate does not start; a client that opens no stream is closed, and the gateway goes on.
func TestRefusals(t *testing.T) {
	gw, b := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := quic.DialAddr(ctx, gw.Addr().String(), clientTLS(t, b, "h3"), nil); err == nil {
		t.Error("handshake with ALPN h3 succeeded; the gateway speaks only mqtt")
	}
	if _, err := gwquic.Start(ctx, gateway.Options{Listen: "127.0.0.1:0", Broker: "127.0.0.1:1"}); err == nil {
		t.Error("gateway started without TLS")
	}
	// A client whose stream sends garbage: the broker closes the TCP side, the gateway closes
	// the QUIC side; reading ends instead of hanging.
	qc, err := quic.DialAddr(ctx, gw.Addr().String(), clientTLS(t, b, "mqtt"), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := qc.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write([]byte("GET / HTTP/1.1\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = s.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(s); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("session with a garbage stream did not end: %v", err)
	}
	// Random datagrams: dropped, nothing else changes.
	udp, err := net.Dial("udp", gw.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	junk := make([]byte, 1500)
	for i := range 200 {
		for j := range junk {
			junk[j] = byte(i*13 + j*5)
		}
		junk[0] = byte(i)
		_, _ = udp.Write(junk[:1+i*7%1400])
	}
	select {
	case <-gw.Done():
		t.Fatal("gateway stopped after a bad client")
	default:
	}
	qc2, err := quic.DialAddr(ctx, gw.Addr().String(), clientTLS(t, b, "mqtt"), nil)
	if err != nil {
		t.Fatalf("a good client after the bad ones: %v", err)
	}
	_ = qc2.CloseWithError(0, "")
}

// The gateway admits every client of its groups and keeps an idle connection beyond their MQTT
// keep-alive: both from the plan's groups.
func TestSessionLimitAndIdleFromGroups(t *testing.T) {
	g := func(clients int32, keepAlive time.Duration) plan.Group {
		return plan.Group{Name: "g", Protocol: v1alpha1.ProtocolMQTTQUIC, Publishers: clients / 2, Subscribers: clients - clients/2,
			MQTT: &plan.MQTTOptions{KeepAlive: keepAlive}}
	}
	if n := gwquic.SessionLimit(nil); n != gwquic.MaxSessions {
		t.Errorf("without groups: %d sessions, want %d", n, gwquic.MaxSessions)
	}
	if n := gwquic.SessionLimit([]plan.Group{g(70_000, 0), g(50_001, 0)}); n != 120_001 {
		t.Errorf("two groups of 120,001 clients: %d sessions", n)
	}
	if idle := gwquic.ServerConfig(gateway.Options{}).MaxIdleTimeout; idle != 90*time.Second {
		t.Errorf("idle timeout without groups: %v", idle)
	}
	o := gateway.Options{Groups: []plan.Group{g(2, 60*time.Second), g(2, 300*time.Second)}}
	if idle := gwquic.ServerConfig(o).MaxIdleTimeout; idle != 600*time.Second {
		t.Errorf("idle timeout for a 300 s keep-alive: %v, want 600 s", idle)
	}
}
