package http_test

import (
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/loadgen/drivers/driverstest"
)

// TestConformance runs the driver contract through the HTTP gateway for HTTP/1.1, HTTP/2 (h2c)
// and HTTP/3. Every publish is acknowledged by its response, QoS 0 included; an HTTP/1.1
// Publish waits for its own response, so its Drain has nothing to give up on.
func TestConformance(t *testing.T) {
	g := startGateways(t)
	for _, version := range []v1alpha1.HTTPVersion{v1alpha1.HTTP11, v1alpha1.HTTP2, v1alpha1.HTTP3} {
		t.Run("http"+string(version), func(t *testing.T) {
			o := g.options(spec(version, false, true, 1))
			network := "tcp"
			if version == v1alpha1.HTTP3 {
				network = "udp"
			}
			driverstest.Run(t, driverstest.Harness{
				Protocol:    string(v1alpha1.ProtocolHTTP),
				Spec:        func(qos int32) *v1alpha1.MessagingBenchmarkSpec { return spec(version, false, true, qos) },
				Address:     o.Address,
				TLS:         o.TLS,
				Network:     network,
				QoS:         []int32{0, 1, 2},
				AckEveryQoS: true,
				SyncPublish: version == v1alpha1.HTTP11,
			})
		})
	}
}
