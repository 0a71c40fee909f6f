package mqttsn

import (
	"bytes"
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/gateway"
	"github.com/msgbench/msgbench/internal/mqtt"
	sn "github.com/msgbench/msgbench/internal/mqttsn"
)

// startBroker starts a real Mosquitto for the test.
func startBroker(t testing.TB) *mosquitto.Process {
	t.Helper()
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{MaxInflight: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	return b
}

// testTopics are the predefined topics of the tests: id i+1 is "t/i".
var testTopics = map[uint16]string{1: "t/0", 2: "t/1", 3: "t/2"}

// startGateway starts a gateway in front of broker on listen (127.0.0.1:0 or [::1]:0).
func startGateway(t testing.TB, broker, listen string, cfg Config) *Gateway {
	t.Helper()
	var logMu sync.Mutex
	return startGatewayLog(t, broker, listen, cfg, func(f string, a ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		t.Logf(f, a...)
	})
}

// startGatewayLog starts a gateway that logs to logf (nil: silent).
func startGatewayLog(t testing.TB, broker, listen string, cfg Config, logf func(string, ...any)) *Gateway {
	t.Helper()
	if cfg.Predefined == nil {
		cfg.Predefined = testTopics
	}
	if cfg.RetryInterval == 0 {
		cfg.RetryInterval = 200 * time.Millisecond
	}
	g, err := Start(context.Background(), gateway.Options{Listen: listen, Broker: broker, Logf: logf}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	return g
}

// rawClient speaks MQTT-SN datagram by datagram, so tests control every message.
type rawClient struct {
	t    testing.TB
	conn *net.UDPConn
	buf  []byte
}

func dialRaw(t testing.TB, addr net.Addr) *rawClient {
	t.Helper()
	conn, err := net.DialUDP("udp", nil, addr.(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return &rawClient{t: t, conn: conn, buf: make([]byte, 65536)}
}

func (r *rawClient) send(m sn.Message) {
	r.t.Helper()
	b, err := m.Append(nil)
	if err != nil {
		r.t.Fatal(err)
	}
	r.sendRaw(b)
}

func (r *rawClient) sendRaw(b []byte) {
	r.t.Helper()
	if _, err := r.conn.Write(b); err != nil {
		r.t.Fatal(err)
	}
}

// recv returns the next message, failing the test after timeout.
func (r *rawClient) recv(timeout time.Duration) sn.Message {
	r.t.Helper()
	m, err := r.tryRecv(timeout)
	if err != nil {
		r.t.Fatalf("waiting for a message: %v", err)
	}
	return m
}

func (r *rawClient) tryRecv(timeout time.Duration) (sn.Message, error) {
	_ = r.conn.SetReadDeadline(time.Now().Add(timeout))
	n, err := r.conn.Read(r.buf)
	if err != nil {
		return nil, err
	}
	return sn.Parse(bytes.Clone(r.buf[:n]))
}

// expect receives the next message and checks its type.
func expect[T sn.Message](r *rawClient, timeout time.Duration) T {
	r.t.Helper()
	m := r.recv(timeout)
	v, ok := m.(T)
	if !ok {
		var zero T
		r.t.Fatalf("got %v %+v, want %T", m.Type(), m, zero)
	}
	return v
}

// connect does CONNECT/CONNACK with keep-alive seconds.
func (r *rawClient) connect(id string, keepAlive uint16) {
	r.t.Helper()
	r.send(&sn.Connect{Flags: sn.FlagCleanSession, ProtocolID: sn.ProtocolID, Duration: keepAlive, ClientID: []byte(id)})
	if c := expect[*sn.Code](r, 5*time.Second); c.T != sn.CONNACK || c.ReturnCode != sn.Accepted {
		r.t.Fatalf("CONNACK %+v", c)
	}
}

// mqttClient is a plain MQTT client on the broker, to check what the gateway forwards.
type mqttClient struct {
	conn *mqtt.Conn
	msgs chan mqtt.Publish
}

func dialMQTT(t testing.TB, broker, id string) *mqttClient {
	t.Helper()
	nc, err := net.Dial("tcp", broker)
	if err != nil {
		t.Fatal(err)
	}
	m := &mqttClient{msgs: make(chan mqtt.Publish, 1000)}
	o := mqtt.ConnectOptions{ClientID: id, CleanSession: true}
	m.conn, err = mqtt.Connect(context.Background(), nc, mqtt.Options{Connect: o, OnPublish: func(p *mqtt.Publish) {
		cp := *p
		cp.Topic, cp.Payload = bytes.Clone(p.Topic), bytes.Clone(p.Payload)
		m.msgs <- cp
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.conn.Disconnect() })
	return m
}

func (m *mqttClient) subscribe(t testing.TB, filter string, qos byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := m.conn.Subscribe(ctx, mqtt.Subscription{Filter: filter, QoS: qos}); err != nil {
		t.Fatal(err)
	}
}

func (m *mqttClient) next(t testing.TB, timeout time.Duration) mqtt.Publish {
	t.Helper()
	select {
	case p := <-m.msgs:
		return p
	case <-time.After(timeout):
		t.Fatalf("no MQTT message within %v", timeout)
		return mqtt.Publish{}
	}
}

func (m *mqttClient) none(t testing.TB, wait time.Duration) {
	t.Helper()
	select {
	case p := <-m.msgs:
		t.Fatalf("unexpected MQTT message %s %q", p.Topic, p.Payload)
	case <-time.After(wait):
	}
}

// eventually polls cond until it holds or fails after timeout.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
