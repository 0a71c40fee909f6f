package rabbitmq

import (
	"strings"
	"testing"

	"github.com/msgbench/msgbench/brokers/brokerproc/brokertest"
	"github.com/msgbench/msgbench/internal/certs"
)

// TestWebSocket: with WebSocket, RabbitMQ enables rabbitmq_web_mqtt at the spec's path on ws and
// wss listeners of their own (Start probed a CONNECT through each upgrade), which deliver at QoS
// 0 and 1 exactly (RabbitMQ 3.10 grants QoS 1 for 2).
func TestWebSocket(t *testing.T) {
	p := startBroker(t, Options{TLS: true, TLSVersion: "1.3", MaxInflight: 20, WebSocket: true, WebSocketPath: "/ws/mqtt"})
	if p.WSAddr == "" || p.WSSAddr == "" || p.WSAddr == p.Addr || p.WebSocketPath != "/ws/mqtt" {
		t.Fatalf("listeners %+v", p.Listeners)
	}
	brokertest.WebSocketDelivery(t, p.WSAddr, p.WebSocketPath, nil, 1)
	tc, err := certs.ClientTLS(p.CA, "127.0.0.1", "1.3")
	if err != nil {
		t.Fatal(err)
	}
	brokertest.WebSocketDelivery(t, p.WSSAddr, p.WebSocketPath, tc, 1)
}

// TestRenderWebSocket: the plugin and its listeners only when asked for.
func TestRenderWebSocket(t *testing.T) {
	files, err := Config{Port: 1883}.Render()
	if err != nil || strings.Contains(files[ConfFile], "web_mqtt") || files[PluginsFile] != "[rabbitmq_mqtt].\n" {
		t.Fatalf("without WebSocket: %v\n%s%s", err, files[ConfFile], files[PluginsFile])
	}
	files, err = Config{Port: 1883, WSPort: 15675, TLSPort: 8883, WSSPort: 15676, TLSVersion: "1.2", WebSocketPath: "/x", CAFile: "ca", CertFile: "crt", KeyFile: "key"}.Render()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"web_mqtt.tcp.port = 15675\n", "web_mqtt.ssl.port = 15676\n", "web_mqtt.ssl.keyfile = key\n", "web_mqtt.ssl.versions.1 = tlsv1.2\n", "web_mqtt.ws_path = /x\n"} {
		if !strings.Contains(files[ConfFile], want) {
			t.Errorf("rabbitmq.conf lacks %q:\n%s", want, files[ConfFile])
		}
	}
	if files[PluginsFile] != "[rabbitmq_mqtt,rabbitmq_web_mqtt].\n" {
		t.Errorf("enabled_plugins %q", files[PluginsFile])
	}
	if _, err := (Config{Extra: map[string]string{"web_mqtt.tcp.port": "1"}}).Render(); err == nil {
		t.Error("spec.broker.config may set web_mqtt.tcp.port")
	}
}
