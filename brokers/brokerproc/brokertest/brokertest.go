// Package brokertest holds checks the local brokers' tests share.
package brokertest

import (
	"context"
	"crypto/tls"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgbench/msgbench/internal/mqtt"
	"github.com/msgbench/msgbench/internal/wsconn"
)

// WebSocketDelivery publishes n messages at each QoS up to maxQoS through a broker's MQTT-over-WebSocket
// listener at addr and path (wss when tc is set) and requires the subscriber, also over
// WebSocket, to receive each exactly once, and every QoS 1/2 publish to be acknowledged.
func WebSocketDelivery(t *testing.T, addr, path string, tc *tls.Config, maxQoS byte) {
	t.Helper()
	const n = 100
	dial := wsconn.Dialer(nil, tc, path)
	connect := func(ctx context.Context, id string, o mqtt.Options) *mqtt.Conn {
		t.Helper()
		nc, err := dial(ctx, "tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		o.Connect = mqtt.ConnectOptions{Version: mqtt.V311, ClientID: id, CleanSession: true}
		c, err := mqtt.Connect(ctx, nc, o)
		if err != nil {
			_ = nc.Close()
			t.Fatalf("MQTT CONNECT over WebSocket to %s%s: %v", addr, path, err)
		}
		t.Cleanup(func() { _ = c.Disconnect() })
		return c
	}
	for qos := range maxQoS + 1 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// client IDs unique per call: a second call (wss after ws) must not take over the first
		// call's sessions, whose clients stay connected until the test ends (RabbitMQ then
		// deletes the old session's queue under the new subscriber).
		stamp := time.Now().UnixNano()
		topic := fmt.Sprintf("msgbench/ws/%d/%d", stamp, qos)
		var got, acked atomic.Int64
		sub := connect(ctx, fmt.Sprintf("ws-sub-%d-%d", qos, stamp), mqtt.Options{Inflight: 20, OnPublish: func(*mqtt.Publish) { got.Add(1) }})
		if codes, err := sub.Subscribe(ctx, mqtt.Subscription{Filter: topic, QoS: qos}); err != nil || len(codes) != 1 || codes[0] != qos {
			t.Fatalf("QoS %d: SUBSCRIBE over WebSocket: %v %v", qos, codes, err)
		}
		pub := connect(ctx, fmt.Sprintf("ws-pub-%d-%d", qos, stamp), mqtt.Options{Inflight: 20, OnComplete: func(_ uint16, _ int64, reason byte) {
			if reason < 0x80 {
				acked.Add(1)
			}
		}})
		for i := range n {
			if _, err := pub.Publish(topic, []byte("websocket"), qos, false, i%10 == 9); err != nil {
				t.Fatalf("QoS %d: publish %d: %v", qos, i, err)
			}
		}
		if err := pub.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := pub.WaitInflight(ctx); err != nil {
			t.Fatalf("QoS %d: %v", qos, err)
		}
		for got.Load() < n && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond) // duplicates would arrive now
		wantAcked := int64(n)
		if qos == 0 {
			wantAcked = 0
		}
		if got.Load() != n || acked.Load() != wantAcked {
			t.Errorf("QoS %d over WebSocket: %d of %d delivered, %d acknowledged (want %d)", qos, got.Load(), n, acked.Load(), wantAcked)
		}
	}
}
