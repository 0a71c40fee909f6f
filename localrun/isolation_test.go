package localrun

import (
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// TestBindsEveryAddress: only a local Mosquitto over WebSocket on loopback needs the isolated
// namespace; over TCP its listener binds what it is told, an emulated link isolates it already,
// and an external broker is not ours.
func TestBindsEveryAddress(t *testing.T) {
	for _, tc := range []struct {
		name      string
		broker    v1alpha1.BrokerType
		transport v1alpha1.MQTTTransport
		profile   v1alpha1.NetworkProfile
		want      bool
	}{
		{"mosquitto over websocket", v1alpha1.BrokerMosquitto, v1alpha1.TransportWebSocket, "", true},
		{"default broker over websocket", "", v1alpha1.TransportWebSocket, v1alpha1.ProfileNone, true},
		{"mosquitto over tcp", v1alpha1.BrokerMosquitto, "tcp", "", false},
		{"mosquitto over websocket on an emulated link", v1alpha1.BrokerMosquitto, v1alpha1.TransportWebSocket, "lte", false},
		{"external broker over websocket", v1alpha1.BrokerExternal, v1alpha1.TransportWebSocket, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := &v1alpha1.MessagingBenchmarkSpec{}
			spec.Broker.Type = tc.broker
			spec.MQTT.Transport = tc.transport
			spec.Network.Profile = tc.profile
			if got := bindsEveryAddress(spec); got != tc.want {
				t.Errorf("bindsEveryAddress = %v, want %v", got, tc.want)
			}
		})
	}
}
