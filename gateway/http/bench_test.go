package http

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/gateway"
	"github.com/msgbench/msgbench/plan"
)

// body is a request body that can be replayed without allocating.
type body struct{ bytes.Reader }

func (*body) Close() error { return nil }

// recorder is a ResponseWriter that keeps only the status.
type recorder struct {
	h      http.Header
	status int
}

func (r *recorder) Header() http.Header         { return r.h }
func (r *recorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *recorder) WriteHeader(s int)           { r.status = s }

// benchGroups are the groups of spec's compiled plan that the http gateway serves.
func benchGroups(b *testing.B, spec *v1alpha1.MessagingBenchmarkSpec) []plan.Group {
	b.Helper()
	p, err := plan.Compile(spec, plan.Admitted)
	if err != nil {
		b.Fatal(err)
	}
	return p.GatewayGroups("http")
}

// BenchmarkPublishHandler measures the gateway's own publish path — routing, QoS and topic
// checks, body read, pooled MQTT publish and waiting for the PUBACK/PUBCOMP of a real Mosquitto —
// without net/http's server around it.
func BenchmarkPublishHandler(b *testing.B) {
	broker, err := mosquitto.Start(context.Background(), mosquitto.Options{MaxInflight: 20})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = broker.Stop() }()
	for _, qos := range []int{0, 1, 2} {
		for _, size := range []int{16, 1024} {
			b.Run(fmt.Sprintf("qos%d/%dB", qos, size), func(b *testing.B) {
				groups := benchGroups(b, &v1alpha1.MessagingBenchmarkSpec{Protocol: v1alpha1.ProtocolHTTP, QoS: 1, MQTT: v1alpha1.MQTTSpec{Version: v1alpha1.MQTT311, Inflight: 20}})
				a, err := newAPI(gateway.Options{Broker: broker.Addr, Groups: groups}, Limits{}.WithDefaults(groups))
				if err != nil {
					b.Fatal(err)
				}
				defer a.close()
				payload := make([]byte, size)
				req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/topics/bench?qos=%d", qos), nil)
				bd := &body{}
				req.Body = bd
				req.ContentLength = int64(size)
				w := &recorder{h: http.Header{}}
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					bd.Reset(payload)
					a.ServeHTTP(w, req)
					if w.status != http.StatusNoContent {
						b.Fatalf("status %d", w.status)
					}
				}
			})
		}
	}
}

// BenchmarkPublishParallel is the same with concurrent requests sharing the pool, as a loaded
// gateway sees them.
func BenchmarkPublishParallel(b *testing.B) {
	broker, err := mosquitto.Start(context.Background(), mosquitto.Options{MaxInflight: 20})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = broker.Stop() }()
	groups := benchGroups(b, &v1alpha1.MessagingBenchmarkSpec{Protocol: v1alpha1.ProtocolHTTP, QoS: 1, MQTT: v1alpha1.MQTTSpec{Version: v1alpha1.MQTT311, Inflight: 20}})
	a, err := newAPI(gateway.Options{Broker: broker.Addr, Groups: groups}, Limits{}.WithDefaults(groups))
	if err != nil {
		b.Fatal(err)
	}
	defer a.close()
	payload := make([]byte, 256)
	b.ReportAllocs()
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		req := httptest.NewRequest(http.MethodPost, "/topics/bench?qos=1", nil)
		bd := &body{}
		req.Body = bd
		req.ContentLength = int64(len(payload))
		w := &recorder{h: http.Header{}}
		for pb.Next() {
			bd.Reset(payload)
			a.ServeHTTP(w, req)
			if w.status != http.StatusNoContent {
				b.Errorf("status %d", w.status)
				return
			}
		}
	})
}
