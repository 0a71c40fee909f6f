package resources

import (
	"fmt"
	"slices"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// webSocketPorts are the MQTT-over-WebSocket listeners (ws, wss) of each broker msgbench runs, on
// each image's documented ports; Artemis's MQTT acceptors take the upgrade on their own ports.
var webSocketPorts = map[v1alpha1.BrokerType][2]int32{
	v1alpha1.BrokerMosquitto: {8080, 8081},
	"":                       {8080, 8081},
	v1alpha1.BrokerRabbitMQ:  {15675, 15676}, // rabbitmq_web_mqtt
	v1alpha1.BrokerArtemis:   {MQTTPort, MQTTSPort},
	v1alpha1.BrokerEMQX:      {8083, 8084},
	v1alpha1.BrokerNanoMQ:    {8083, 8084},
	v1alpha1.BrokerHiveMQCE:  {8000, 8001},
	v1alpha1.BrokerVerneMQ:   {8080, 8081},
}

// brokerWebSocket reports whether clients reach the broker msgbench runs over WebSocket: all of
// them (spec.mqtt.transport) or a device group's (groups[].mqtt.transport). The broker then
// serves plain ws always (the usage sidecar's readiness probe goes through it, as plain MQTT
// does for TCP clients) and wss with broker TLS, beside its MQTT listener.
func brokerWebSocket(mb *v1alpha1.MessagingBenchmark) bool {
	if !mb.Spec.Broker.Type.MQTTBroker() {
		return false
	}
	return mb.Spec.MQTT.WebSocket() || slices.ContainsFunc(mb.Spec.Groups, func(g v1alpha1.DeviceGroupSpec) bool {
		return g.MQTT != nil && g.MQTT.Transport == v1alpha1.TransportWebSocket
	})
}

// wsPort and wssPort are mb's broker's WebSocket ports.
func wsPort(mb *v1alpha1.MessagingBenchmark) int32  { return webSocketPorts[mb.Spec.Broker.Type][0] }
func wssPort(mb *v1alpha1.MessagingBenchmark) int32 { return webSocketPorts[mb.Spec.Broker.Type][1] }

// wsPath is where the broker serves MQTT over WebSocket.
func wsPath(mb *v1alpha1.MessagingBenchmark) string { return mb.Spec.MQTT.WebSocketPathOrDefault() }

// readyAddress is what the usage sidecar probes with an MQTT CONNECT: the plain MQTT listener,
// or its ws:// URL when the clients come over WebSocket (a WebSocket plugin may start after the
// broker's MQTT listener).
func readyAddress(mb *v1alpha1.MessagingBenchmark) string {
	if brokerWebSocket(mb) {
		return fmt.Sprintf("ws://127.0.0.1:%d%s", wsPort(mb), wsPath(mb))
	}
	return fmt.Sprintf("127.0.0.1:%d", MQTTPort)
}
