package mqttquic_test

import (
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/loadgen/drivers/driverstest"
)

// TestConformance runs the driver contract through the QUIC gateway in front of Mosquitto.
func TestConformance(t *testing.T) {
	addr, bundle := setup(t)
	tlsConf, err := certs.ClientTLS(bundle.CACert, "127.0.0.1", "1.3")
	if err != nil {
		t.Fatal(err)
	}
	driverstest.Run(t, driverstest.Harness{
		Protocol: string(v1alpha1.ProtocolMQTTQUIC),
		Spec:     spec,
		Address:  addr,
		TLS:      tlsConf,
		Network:  "udp",
		QoS:      []int32{0, 1, 2},
	})
}
