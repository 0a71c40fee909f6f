package http_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/loadgen/drivers"
	httpdrv "github.com/msgbench/msgbench/loadgen/drivers/http"
)

type counting struct{ ok atomic.Int64 }

func (c *counting) Message([]byte) {}
func (c *counting) Completed(_ int64, ok bool) {
	if ok {
		c.ok.Add(1)
	}
}

// BenchmarkPublish is one publisher session publishing closed loop through a gateway in another
// process to a real Mosquitto at QoS 1: the client's cost per message of each HTTP version
// (allocs/op and B/op are the client's alone), with one request in flight and with 20.
func BenchmarkPublish(b *testing.B) {
	config := childGateway(b)
	for _, c := range []struct {
		version  v1alpha1.HTTPVersion
		inflight int32
	}{{v1alpha1.HTTP11, 1}, {v1alpha1.HTTP2, 1}, {v1alpha1.HTTP2, 20}, {v1alpha1.HTTP3, 1}, {v1alpha1.HTTP3, 20}} {
		b.Run(fmt.Sprintf("http%s/inflight%d", c.version, c.inflight), func(b *testing.B) {
			s := spec(c.version, false, true, 1)
			s.MQTT.Inflight = c.inflight
			drv, err := httpdrv.New(config(s), httpdrv.Options{})
			if err != nil {
				b.Fatal(err)
			}
			h := &counting{}
			sess, err := drv.Connect(context.Background(), drivers.Client{ID: "bench", Role: drivers.Publisher, Topic: "bench/publish"}, h)
			if err != nil {
				b.Fatal(err)
			}
			defer sess.Close()
			payload := make([]byte, 256)
			b.ReportAllocs()
			for b.Loop() {
				if err := sess.Publish(payload, c.inflight == 1); err != nil {
					b.Fatal(err)
				}
			}
			if err := sess.Drain(context.Background()); err != nil {
				b.Fatal(err)
			}
			if h.ok.Load() != int64(b.N) {
				b.Fatalf("%d of %d responses were 2xx", h.ok.Load(), b.N)
			}
		})
	}
}
