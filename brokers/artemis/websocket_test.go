package artemis_test

import (
	"testing"

	"github.com/msgbench/msgbench/brokers/brokerproc/brokertest"
)

// TestWebSocket: Artemis's MQTT acceptor also serves MQTT over WebSocket on its own port (Start
// probed a CONNECT through the upgrade) and delivers over it at QoS 0, 1 and 2 exactly.
func TestWebSocket(t *testing.T) {
	needBroker(t)
	if broker.WSAddr != broker.Addr {
		t.Fatalf("WSAddr %q, want the MQTT acceptor %s", broker.WSAddr, broker.Addr)
	}
	brokertest.WebSocketDelivery(t, broker.WSAddr, broker.WebSocketPath, nil, 2)
}
