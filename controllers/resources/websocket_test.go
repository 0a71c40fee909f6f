package resources_test

import (
	"strings"
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/plan/plantest"
)

// TestBrokerWebSocket: with spec.mqtt.transport websocket (and TLS), every broker msgbench runs on
// Kubernetes opens ws (the readiness probe's) and wss listeners at the spec's path on its
// documented ports, its Service exposes them, the clients are pointed at wss, and the usage
// sidecar probes MQTT through the ws upgrade. Artemis serves both on its MQTT acceptors.
func TestBrokerWebSocket(t *testing.T) {
	for _, tc := range []struct {
		bt       v1alpha1.BrokerType
		tls      string
		path     string
		ws, wss  string // Service ports, "" for none
		file     string
		flat     func(*testing.T, string) map[string]string
		wantConf map[string]string
		wantText []string
	}{
		{bt: v1alpha1.BrokerMosquitto, tls: "1.3", path: "/ws/x", ws: "8080", wss: "8081", file: "mosquitto.conf",
			wantText: []string{"\nlistener 8080\nprotocol websockets\n", "\nlistener 8081\nprotocol websockets\nmax_connections -1\ncafile /etc/mosquitto/certs/ca.crt\n"}},
		{bt: v1alpha1.BrokerRabbitMQ, tls: "1.3", path: "/ws/x", ws: "15675", wss: "15676", file: "rabbitmq.conf", flat: flatLines,
			wantConf: map[string]string{"web_mqtt.tcp.port": "15675", "web_mqtt.ssl.port": "15676", "web_mqtt.ws_path": "/ws/x",
				"web_mqtt.ssl.certfile": "/etc/rabbitmq/certs/tls.crt", "web_mqtt.ssl.versions.1": "tlsv1.3"}},
		{bt: v1alpha1.BrokerArtemis, tls: "1.3", path: "/ws/x", file: "broker.xml"},
		{bt: v1alpha1.BrokerEMQX, tls: "1.3", path: "/ws/x", ws: "8083", wss: "8084", file: "emqx.conf", flat: flatHOCON,
			wantConf: map[string]string{"listeners.ws.default.enable": "true", "listeners.ws.default.bind": `"0.0.0.0:8083"`,
				"listeners.ws.default.websocket.mqtt_path": `"/ws/x"`, "listeners.wss.default.enable": "true",
				"listeners.wss.default.bind": `"0.0.0.0:8084"`, "listeners.wss.default.websocket.mqtt_path": `"/ws/x"`,
				"listeners.wss.default.ssl_options.certfile": `"/opt/emqx/msgbench-certs/tls.crt"`, "listeners.wss.default.ssl_options.versions": `["tlsv1.3"]`}},
		{bt: v1alpha1.BrokerNanoMQ, tls: "1.2", path: "/ws/x", ws: "8083", wss: "8084", file: "nanomq.conf", flat: flatHOCON,
			wantConf: map[string]string{"listeners.ws.bind": `"0.0.0.0:8083/ws/x"`, "listeners.wss.bind": `"0.0.0.0:8084/ws/x"`}},
		{bt: v1alpha1.BrokerHiveMQCE, tls: "1.3", path: "/ws/x", ws: "8000", wss: "8001", file: "config.xml", flat: flatXML,
			wantConf: map[string]string{"listeners.websocket-listener.port": "8000", "listeners.websocket-listener.path": "/ws/x",
				"listeners.websocket-listener.subprotocols.subprotocol": "mqtt", "listeners.websocket-listener.allow-extensions": "false",
				"listeners.tls-websocket-listener.port": "8001", "listeners.tls-websocket-listener.path": "/ws/x",
				"listeners.tls-websocket-listener.tls.protocols.protocol": "TLSv1.3",
				"listeners.tls-websocket-listener.tls.keystore.path":      "/opt/hivemq/keystore/broker.p12"}},
		{bt: v1alpha1.BrokerVerneMQ, tls: "1.3", path: "/mqtt", ws: "8080", wss: "8081", file: "vernemq.conf", flat: flatLines,
			wantConf: map[string]string{"listener.ws.default": "0.0.0.0:8080", "listener.wss.default": "0.0.0.0:8081",
				"listener.wss.certfile": "/vernemq/etc/certs/tls.crt", "listener.wss.tls_version": "tlsv1.3"}},
	} {
		t.Run(string(tc.bt), func(t *testing.T) {
			mb := brokerBench(t, tc.bt, "mqtt", tc.tls, 20, nil)
			mb.Spec.MQTT.Transport, mb.Spec.MQTT.WebSocketPath = v1alpha1.TransportWebSocket, tc.path
			cm, d, svc := brokerObjects(t, mb)
			ws, wss := tc.ws, tc.wss
			if tc.bt == v1alpha1.BrokerArtemis {
				wantPorts(t, svc, "mqtt/1883/TCP", "mqtts/8883/TCP")
				ws, wss = "1883", "8883"
			} else {
				wantPorts(t, svc, "mqtt/1883/TCP", "mqtts/8883/TCP", "ws/"+ws+"/TCP", "wss/"+wss+"/TCP")
			}
			if got, want := resources.BrokerAddress(mb, plantest.Kubernetes(t, mb)), "b-broker.bench.svc:"+wss; got != want {
				t.Errorf("clients connect to %s, want %s (wss)", got, want)
			}
			args := strings.Join(d.Spec.Template.Spec.Containers[1].Args, " ")
			if want := "--ready-mqtt ws://127.0.0.1:" + ws + tc.path; !strings.Contains(args, want) {
				t.Errorf("usage sidecar %q, want %q", args, want)
			}
			conf, ok := cm.Data[tc.file]
			if !ok {
				t.Fatalf("no %s in %v", tc.file, cm.Data)
			}
			for _, s := range tc.wantText {
				if !strings.Contains(conf, s) {
					t.Errorf("%s lacks %q:\n%s", tc.file, s, conf)
				}
			}
			if tc.flat != nil {
				wantConf(t, tc.flat(t, conf), tc.wantConf)
			}
			if tc.bt == v1alpha1.BrokerRabbitMQ && cm.Data["enabled_plugins"] != "[rabbitmq_mqtt,rabbitmq_web_mqtt].\n" {
				t.Errorf("enabled_plugins %q", cm.Data["enabled_plugins"])
			}
		})
	}
}

// TestBrokerWebSocketPlain: without TLS the clients use ws, and no wss listener opens.
func TestBrokerWebSocketPlain(t *testing.T) {
	mb := brokerBench(t, v1alpha1.BrokerEMQX, "mqtt", "", 20, nil)
	mb.Spec.MQTT.Transport = v1alpha1.TransportWebSocket
	cm, _, svc := brokerObjects(t, mb)
	wantPorts(t, svc, "mqtt/1883/TCP", "ws/8083/TCP")
	if got := resources.BrokerAddress(mb, plantest.Kubernetes(t, mb)); got != "b-broker.bench.svc:8083" {
		t.Errorf("clients connect to %s, want ws on 8083", got)
	}
	wantConf(t, flatHOCON(t, cm.Data["emqx.conf"]), map[string]string{"listeners.wss.default.enable": "false", "listeners.ws.default.websocket.mqtt_path": `"/mqtt"`})
}
