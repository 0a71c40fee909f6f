package mqtt_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/mqtt"
)

func startBroker(t *testing.T, tlsOn bool) *mosquitto.Process {
	t.Helper()
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{TLS: tlsOn, TLSVersion: "1.3", MaxInflight: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	return b
}

func dial(t *testing.T, addr string, tlsCfg *tls.Config, o mqtt.Options) *mqtt.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if tlsCfg != nil {
		nc = tls.Client(nc, tlsCfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := mqtt.Connect(ctx, nc, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestPublishSubscribeEveryQoS moves messages through a real Mosquitto at every QoS and protocol
// version and checks each arrives exactly once, in order, and every publish completes.
func TestPublishSubscribeEveryQoS(t *testing.T) {
	b := startBroker(t, true)
	tlsCfg, err := certs.ClientTLS(b.CA, "127.0.0.1", "1.3")
	if err != nil {
		t.Fatal(err)
	}
	const n = 2000
	for _, version := range []byte{mqtt.V311, mqtt.V5} {
		for _, qos := range []byte{0, 1, 2} {
			for _, useTLS := range []bool{false, true} {
				t.Run(fmt.Sprintf("v%d-qos%d-tls%t", version, qos, useTLS), func(t *testing.T) {
					addr, cfg := b.Addr, (*tls.Config)(nil)
					if useTLS {
						addr, cfg = b.TLSAddr, tlsCfg.Clone()
					}
					topic := fmt.Sprintf("t/%d/%d/%t", version, qos, useTLS)
					var mu sync.Mutex
					var got []byte
					done := make(chan struct{})
					sub := dial(t, addr, cfg, mqtt.Options{Connect: mqtt.ConnectOptions{Version: version, ClientID: "sub-" + topic, CleanSession: true},
						OnPublish: func(p *mqtt.Publish) {
							mu.Lock()
							got = append(got, p.Payload[0])
							if len(got) == n {
								close(done)
							}
							mu.Unlock()
						}})
					codes, err := sub.Subscribe(context.Background(), mqtt.Subscription{Filter: topic, QoS: qos})
					if err != nil || len(codes) != 1 || codes[0] != qos {
						t.Fatalf("SUBACK %v %v", codes, err)
					}
					var completed atomic.Int64
					pub := dial(t, addr, cfg.Clone(), mqtt.Options{Connect: mqtt.ConnectOptions{Version: version, ClientID: "pub-" + topic, CleanSession: true}, Inflight: 10,
						OnComplete: func(id uint16, sentAt int64, reason byte) {
							if reason != 0 {
								t.Errorf("publish %d completed with reason %d", id, reason)
							}
							completed.Add(1)
						}})
					for i := 0; i < n; i++ {
						if _, err := pub.Publish(topic, []byte{byte(i)}, qos, false, i%7 == 0); err != nil {
							t.Fatal(err)
						}
					}
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					if err := pub.WaitInflight(ctx); err != nil {
						t.Fatal(err)
					}
					select {
					case <-done:
					case <-ctx.Done():
						mu.Lock()
						t.Fatalf("received %d of %d", len(got), n)
					}
					if qos > 0 && completed.Load() != n {
						t.Errorf("%d publishes completed, want %d", completed.Load(), n)
					}
					time.Sleep(50 * time.Millisecond) // a duplicate would arrive by now
					mu.Lock()
					defer mu.Unlock()
					if len(got) != n {
						t.Fatalf("received %d, want exactly %d", len(got), n)
					}
					for i, v := range got {
						if v != byte(i) {
							t.Fatalf("message %d out of order: %d", i, v)
						}
					}
					if pub.Window() > 10 {
						t.Errorf("window %d exceeds inflight 10", pub.Window())
					}
					if err := pub.Disconnect(); err != nil {
						t.Error(err)
					}
					<-pub.Done()
					if pub.Err() != nil {
						t.Errorf("after Disconnect: %v", pub.Err())
					}
				})
			}
		}
	}
}

// TestOversizedPacketIsRefused checks the bounded read buffer: a message above MaxPacketSize
// ends the connection with an error naming the packet instead of allocating.
func TestOversizedPacketIsRefused(t *testing.T) {
	b := startBroker(t, false)
	sub := dial(t, b.Addr, nil, mqtt.Options{Connect: mqtt.ConnectOptions{Version: mqtt.V311, ClientID: "small", CleanSession: true}, MaxPacketSize: 100})
	if _, err := sub.Subscribe(context.Background(), mqtt.Subscription{Filter: "big", QoS: 0}); err != nil {
		t.Fatal(err)
	}
	pub := dial(t, b.Addr, nil, mqtt.Options{Connect: mqtt.ConnectOptions{Version: mqtt.V311, ClientID: "bigpub", CleanSession: true}})
	if _, err := pub.Publish("big", make([]byte, 1000), 0, false, true); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sub.Done():
		if err := sub.Err(); err == nil || !strings.Contains(err.Error(), "PUBLISH of") {
			t.Errorf("error %v, want one naming the oversized PUBLISH", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("oversized packet was accepted")
	}
}

// TestWindowedPublishingDoesNotStallOnNagle publishes QoS 1 in a closed loop with a window of 20
// to a Mosquitto that keeps its default Nagle's algorithm (set_tcp_nodelay false), as a user's
// own broker may. Such a broker holds back every PUBACK after the first until our ACK of it, and
// our kernel delays that ACK up to 40 ms while we send nothing: a publisher that waited for half
// its window each time managed about 250 msg/s (16 s for these 4000); it must not wait for
// acknowledgements that cannot come.
func TestWindowedPublishingDoesNotStallOnNagle(t *testing.T) {
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{MaxInflight: 20, Extra: map[string]string{"set_tcp_nodelay": "false"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	const n = 4000
	done := make(chan struct{})
	var acked atomic.Int32
	c := dial(t, b.Addr, nil, mqtt.Options{Connect: mqtt.ConnectOptions{ClientID: "nagle", CleanSession: true}, Inflight: 20,
		OnComplete: func(uint16, int64, byte) {
			if acked.Add(1) == n {
				close(done)
			}
		}})
	payload := make([]byte, 256)
	start := time.Now()
	for range n {
		if _, err := c.Publish("nagle/t", payload, 1, false, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%d of %d acknowledged after 30 s", acked.Load(), n)
	}
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("%d QoS 1 publishes took %s (%.0f msg/s): stalled on the broker's Nagle and our delayed ACKs", n, took, n/took.Seconds())
	} else {
		t.Logf("%d QoS 1 publishes in %s", n, took)
	}
}

// TestWaitInflightWaitsForOnComplete: WaitInflight returns only once the last publish's
// OnComplete has returned. It used to watch the inflight count, which drops just before
// OnComplete runs, so a caller counting completions after it could miss the last one (CI: an MQTT
// over QUIC run reported 399 of 400 publishes acknowledged).
func TestWaitInflightWaitsForOnComplete(t *testing.T) {
	b := startBroker(t, false)
	var completed atomic.Int32
	c := dial(t, b.Addr, nil, mqtt.Options{
		Connect: mqtt.ConnectOptions{ClientID: "wait-inflight", CleanSession: true},
		OnComplete: func(uint16, int64, byte) {
			time.Sleep(50 * time.Millisecond) // a slow completion handler widens the gap
			completed.Add(1)
		},
	})
	for range 3 {
		if _, err := c.Publish("wait/inflight", []byte("x"), 1, false, true); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.WaitInflight(ctx); err != nil {
		t.Fatal(err)
	}
	if n := completed.Load(); n != 3 {
		t.Fatalf("WaitInflight returned with %d of 3 completions handled", n)
	}
}

// Probe needs an accepting CONNACK: a listener that accepts TCP and stays silent is not ready,
// and one that refuses CONNECT is not either.
func TestProbe(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := mqtt.Probe(ctx, nil, silent.Addr().String(), nil); err == nil {
		t.Fatal("a silent listener passed the probe")
	}

	for _, code := range []byte{0, 5} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			buf := make([]byte, 256)
			_, _ = c.Read(buf)                       // CONNECT
			_, _ = c.Write([]byte{0x20, 2, 0, code}) // CONNACK
			_, _ = c.Read(buf)                       // DISCONNECT or EOF
		}()
		err = mqtt.Probe(context.Background(), nil, ln.Addr().String(), nil)
		if (err == nil) != (code == 0) {
			t.Errorf("CONNACK return code %d: probe error %v", code, err)
		}
		_ = ln.Close()
	}
}

// pingConn timestamps the PINGREQs a client writes (each one write of 0xC0 0x00).
type pingConn struct {
	net.Conn
	start time.Time
	mu    sync.Mutex
	pings []time.Duration
}

func (p *pingConn) Write(b []byte) (int, error) {
	if len(b) == 2 && b[0] == 0xC0 && b[1] == 0 {
		p.mu.Lock()
		p.pings = append(p.pings, time.Since(p.start))
		p.mu.Unlock()
	}
	return p.Conn.Write(b)
}

// TestKeepAlivePingsAPeriodAfterTheLastPacket: a client with a 1 s keep-alive that publishes
// once, 400 ms after its CONNECT, then sends nothing pings 1 s after that publish and every 1 s
// after — a device's radio wakes once per keep-alive (docs/energy.md) — and the real Mosquitto
// keeps the session (it allows 1.5 s). A client that checked every ¾ period whether it had sent
// anything pinged at 1.5, 2.25, 3 s.
func TestKeepAlivePingsAPeriodAfterTheLastPacket(t *testing.T) {
	b := startBroker(t, false)
	nc, err := net.Dial("tcp", b.Addr)
	if err != nil {
		t.Fatal(err)
	}
	pc := &pingConn{Conn: nc, start: time.Now()}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := mqtt.Connect(ctx, pc, mqtt.Options{Connect: mqtt.ConnectOptions{ClientID: "keepalive", CleanSession: true, KeepAlive: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	time.Sleep(400*time.Millisecond - time.Since(pc.start))
	if _, err := c.Publish("ka/test", []byte("x"), 0, false, true); err != nil {
		t.Fatal(err)
	}
	published := time.Since(pc.start)
	time.Sleep(3600*time.Millisecond - time.Since(pc.start))
	if err := c.Err(); err != nil {
		t.Fatalf("the broker closed the session: %v", err)
	}
	pc.mu.Lock()
	pings := append([]time.Duration(nil), pc.pings...)
	pc.mu.Unlock()
	t.Logf("published at %v; PINGREQ at %v", published, pings)
	if len(pings) != 3 {
		t.Fatalf("%d PINGREQs in 3.6 s, want 3 (at 1.4, 2.4, 3.4 s)", len(pings))
	}
	for i, at := range pings {
		want := published + time.Duration(i+1)*time.Second
		if d := at - want; d < 0 || d > 150*time.Millisecond {
			t.Errorf("PINGREQ %d at %v, want %v (1 s after the last packet)", i+1, at, want)
		}
	}
}
