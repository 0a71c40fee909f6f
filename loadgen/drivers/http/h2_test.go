package http_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/loadgen"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/loadgen/drivers/driverstest"
	httpdrv "github.com/msgbench/msgbench/loadgen/drivers/http"
)

// TestHTTP2FlowControl sends bodies that exhaust the gateway's HTTP/2 send windows (its 1 MiB
// per connection, with 4 requests of 900 kB in flight), so Post must wait for WINDOW_UPDATEs,
// and bodies above the gateway's 1 MiB limit, which it answers (413) and resets before they
// are all sent: every request gets its response and the connection stays usable.
func TestHTTP2FlowControl(t *testing.T) {
	g := startGateways(t)
	for _, tlsOn := range []bool{false, true} {
		s := spec(v1alpha1.HTTP2, tlsOn, true, 1)
		s.MQTT.Inflight = 4
		o := g.options(s)
		drv, err := httpdrv.New(drivers.Config{Group: driverstest.Group(t, s), Address: o.Address, TLS: o.TLS, Now: func() int64 { return 0 }}, httpdrv.Options{})
		if err != nil {
			t.Fatal(err)
		}
		h := &statuses{}
		sess, err := drv.Connect(context.Background(), drivers.Client{ID: "flow", Role: drivers.Publisher, Topic: "flow/t"}, h)
		if err != nil {
			t.Fatal(err)
		}
		big, tooBig := make([]byte, 900_000), make([]byte, 3<<20)
		for i, p := range [][]byte{big, big, big, big, big, big, tooBig, big, tooBig, big} {
			if err := sess.Publish(p, i%3 == 0); err != nil {
				t.Fatalf("tls %v: publish %d: %v", tlsOn, i, err)
			}
		}
		if err := sess.Drain(context.Background()); err != nil {
			t.Fatalf("tls %v: %v", tlsOn, err)
		}
		if ok, refused := h.ok.Load(), h.refused.Load(); ok != 8 || refused != 2 {
			t.Errorf("tls %v: %d accepted and %d refused, want 8 and 2 (the 3 MiB bodies)", tlsOn, ok, refused)
		}
		if sent := sess.Counters().BytesSent; sent < 8*900_000 {
			t.Errorf("tls %v: %d bytes sent, fewer than the accepted bodies", tlsOn, sent)
		}
		_ = sess.Close()
	}
}

// statuses counts responses by outcome.
type statuses struct{ ok, refused atomic.Int64 }

func (s *statuses) Message([]byte) {}
func (s *statuses) Completed(_ int64, ok bool) {
	if ok {
		s.ok.Add(1)
	} else {
		s.refused.Add(1)
	}
}

// TestPublishAckExcludesWindowWait: publish-ack latency starts when the request is handed over
// (docs/measurement.md), not while Publish waited for a window slot. With one request in flight,
// closed loop, the requests follow each other, so their latencies add up to about the measured
// time; counted from before the wait they would add up to twice it.
func TestPublishAckExcludesWindowWait(t *testing.T) {
	g := startGateways(t)
	for _, version := range []v1alpha1.HTTPVersion{v1alpha1.HTTP2, v1alpha1.HTTP3} {
		s := spec(version, false, true, 1)
		s.MQTT.Inflight = 1
		s.Workload.Publishers, s.Workload.Subscribers, s.Workload.Topics, s.Workload.Rate = 1, 0, 1, 0
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		res, err := loadgen.Run(ctx, g.options(s))
		cancel()
		if err != nil || res.Phase != "Succeeded" {
			t.Fatalf("http%s: %v %s: %s", version, err, res.Phase, res.Message)
		}
		busy := res.Latency.PublishAck.MeanMicros * float64(res.Acked) / 1e6
		t.Logf("http%s: %d acked in %.2f s, mean publish-ack %.0f µs: %.2f s of requests in flight", version, res.Acked, res.MeasuredSeconds, res.Latency.PublishAck.MeanMicros, busy)
		if busy > 1.3*res.MeasuredSeconds {
			t.Errorf("http%s: publish-ack latencies add up to %.2f s in a %.2f s window with one request in flight: they include the wait for the window", version, busy, res.MeasuredSeconds)
		}
	}
}
