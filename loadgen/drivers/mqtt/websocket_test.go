package mqtt_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/wire"
	"github.com/msgbench/msgbench/internal/wsconn"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/loadgen/drivers/driverstest"
)

// wsBroker is a Mosquitto with ws and wss listeners, and the TLS configuration that trusts it.
func wsBroker(t *testing.T) (*mosquitto.Process, *tls.Config) {
	t.Helper()
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{MaxInflight: 20, TLS: true, WebSocket: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	cfg, err := certs.ClientTLS(b.CA, "127.0.0.1", "1.3")
	if err != nil {
		t.Fatal(err)
	}
	return b, cfg
}

func wsSpec(version v1alpha1.MQTTVersion, qos int32) *v1alpha1.MessagingBenchmarkSpec {
	return &v1alpha1.MessagingBenchmarkSpec{
		Protocol: v1alpha1.ProtocolMQTT,
		QoS:      qos,
		MQTT:     v1alpha1.MQTTSpec{Version: version, Transport: v1alpha1.TransportWebSocket, Inflight: 20},
		Workload: v1alpha1.WorkloadSpec{TopicPrefix: "ws/", PayloadBytes: 16},
	}
}

// TestWebSocketConformance runs the driver contract over ws and wss against Mosquitto.
func TestWebSocketConformance(t *testing.T) {
	b, tlsCfg := wsBroker(t)
	for _, tc := range []struct {
		name    string
		version v1alpha1.MQTTVersion
		addr    string
		tls     *tls.Config
	}{
		{"ws/3.1.1", v1alpha1.MQTT311, b.WSAddr, nil},
		{"ws/5", v1alpha1.MQTT5, b.WSAddr, nil},
		{"wss/3.1.1", v1alpha1.MQTT311, b.WSSAddr, tlsCfg},
	} {
		t.Run(tc.name, func(t *testing.T) {
			driverstest.Run(t, driverstest.Harness{
				Protocol: string(v1alpha1.ProtocolMQTT),
				Spec:     func(qos int32) *v1alpha1.MessagingBenchmarkSpec { return wsSpec(tc.version, qos) },
				Address:  tc.addr,
				TLS:      tc.tls,
				Network:  "tcp",
				QoS:      []int32{0, 1, 2},
			})
		})
	}
}

// counter is a drivers.Handler counting deliveries and completions.
type counter struct{ messages, completed, failed atomic.Int64 }

func (c *counter) Message([]byte) { c.messages.Add(1) }
func (c *counter) Completed(_ int64, ok bool) {
	if ok {
		c.completed.Add(1)
	} else {
		c.failed.Add(1)
	}
}

// TestWebSocketDeliveryExact: over ws and wss, at QoS 0, 1 and 2, the subscriber receives every
// message exactly once, and QoS 1/2 publishes are all acknowledged.
func TestWebSocketDeliveryExact(t *testing.T) {
	b, tlsCfg := wsBroker(t)
	const n = 300
	for _, tr := range []struct {
		name string
		addr string
		tls  *tls.Config
	}{{"ws", b.WSAddr, nil}, {"wss", b.WSSAddr, tlsCfg}} {
		for qos := range int32(3) {
			t.Run(fmt.Sprintf("%s/qos%d", tr.name, qos), func(t *testing.T) {
				spec := wsSpec(v1alpha1.MQTT311, qos)
				drv, err := drivers.New(string(v1alpha1.ProtocolMQTT), drivers.Config{Group: driverstest.Group(t, spec), Address: tr.addr, TLS: tr.tls, Now: nanotime()})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				topic := fmt.Sprintf("ws/exact/%s/%d", tr.name, qos)
				var subH, pubH counter
				sub, err := drv.Connect(ctx, drivers.Client{ID: "sub-" + topic, Role: drivers.Subscriber, Topic: topic}, &subH)
				if err != nil {
					t.Fatal(err)
				}
				defer sub.Close()
				if err := sub.Subscribe(ctx); err != nil {
					t.Fatal(err)
				}
				pub, err := drv.Connect(ctx, drivers.Client{ID: "pub-" + topic, Role: drivers.Publisher, Topic: topic}, &pubH)
				if err != nil {
					t.Fatal(err)
				}
				defer pub.Close()
				for i := range n {
					if err := pub.Publish([]byte("0123456789abcdef"), i%10 == 9); err != nil {
						t.Fatal(err)
					}
				}
				if err := pub.Flush(); err != nil {
					t.Fatal(err)
				}
				if err := pub.Drain(ctx); err != nil {
					t.Fatal(err)
				}
				waitFor(t, func() bool { return subH.messages.Load() >= n })
				time.Sleep(200 * time.Millisecond) // duplicates would arrive now
				wantDone := int64(n)
				if qos == 0 {
					wantDone = 0
				}
				if got, done := subH.messages.Load(), pubH.completed.Load(); got != n || done != wantDone || pubH.failed.Load() != 0 {
					t.Fatalf("received %d of %d, %d completed (want %d), %d refused", got, n, done, wantDone, pubH.failed.Load())
				}
			})
		}
	}
}

// TestWebSocketWireAccounting: the driver's byte counts equal what a real socket between it and
// Mosquitto carried, both ways, at CONNACK and after 100 acknowledged publishes, over ws and wss.
// Over ws what the client sent is exactly the upgrade request, then each MQTT packet in a 6-byte
// frame header (2 + the 4-byte mask key); over wss each publish adds a 22-byte TLS 1.3 record too.
func TestWebSocketWireAccounting(t *testing.T) {
	b, tlsCfg := wsBroker(t)
	for _, tc := range []struct {
		name   string
		addr   string
		tls    *tls.Config
		record int64 // TLS bytes around each record
	}{{"ws", b.WSAddr, nil, 0}, {"wss", b.WSSAddr, tlsCfg, 22}} {
		t.Run(tc.name, func(t *testing.T) {
			relay := startRelay(t, tc.addr)
			spec := wsSpec(v1alpha1.MQTT311, 1)
			drv, err := drivers.New(string(v1alpha1.ProtocolMQTT), drivers.Config{Group: driverstest.Group(t, spec), Address: relay.addr, TLS: tc.tls, Now: nanotime()})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			const id, topic = "wsacct", "ws/acct"
			var h counter
			s, err := drv.Connect(ctx, drivers.Client{ID: id, Role: drivers.Publisher, Topic: topic}, &h)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()

			c := s.Counters()
			relay.equal(t, c)
			if s.ConnectBytes() != c.BytesSent+c.BytesReceived {
				t.Errorf("ConnectBytes %d, want the %d bytes the socket carried", s.ConnectBytes(), c.BytesSent+c.BytesReceived)
			}
			if tc.tls == nil {
				// At CONNACK: the upgrade request (a 24-character key), CONNECT (fixed header 2,
				// variable header 10, client id 2+len) in one frame.
				upgrade := len(wsconn.UpgradeRequest(relay.addr, "/mqtt", "0123456789012345678901=="))
				if want := int64(upgrade + 6 + 2 + 10 + 2 + len(id)); c.BytesSent != want {
					t.Errorf("bytes sent until CONNACK %d, want %d (upgrade %d + framed CONNECT)", c.BytesSent, want, upgrade)
				}
			}

			const n = 100
			payload := make([]byte, 16)
			for range n {
				if err := s.Publish(payload, true); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			after := s.Counters()
			relay.equal(t, after)
			// QoS 1 PUBLISH: fixed header 2, topic 2+len, packet id 2, payload; one frame (and one
			// TLS record) each.
			want := int64(6+2+2+len(topic)+2+16) + tc.record
			if d := after.BytesSent - c.BytesSent; d != n*want {
				t.Errorf("%d bytes sent for %d publishes, want %d each", d, n, want)
			}
		})
	}
}

// relay forwards one connection to a server and counts the bytes it carried each way.
type relay struct {
	addr     string
	up, down atomic.Int64 // client→server, server→client
}

func startRelay(t *testing.T, server string) *relay {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{addr: ln.Addr().String()}
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	wg.Go(func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", server)
		if err != nil {
			_ = c.Close()
			return
		}
		var pipes sync.WaitGroup
		pipes.Go(func() { _, _ = io.Copy(countWriter{s, &r.up}, c); _ = s.Close() })
		pipes.Go(func() { _, _ = io.Copy(countWriter{c, &r.down}, s); _ = c.Close() })
		pipes.Wait()
	})
	return r
}

// equal waits until the relay carried exactly the client's counts (bytes in flight arrive).
func (r *relay) equal(t *testing.T, c wire.Counters) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for r.up.Load() != c.BytesSent || r.down.Load() != c.BytesReceived {
		if time.Now().After(deadline) {
			t.Errorf("the driver counted %d sent and %d received, the socket carried %d and %d", c.BytesSent, c.BytesReceived, r.up.Load(), r.down.Load())
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type countWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func nanotime() func() int64 {
	start := time.Now()
	return func() int64 { return int64(time.Since(start)) }
}
