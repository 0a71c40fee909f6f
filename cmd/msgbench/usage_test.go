package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/msgbench/msgbench/brokers/mosquitto"
)

// The broker pod is ready only while its broker answers an MQTT CONNECT: a real Mosquitto passes,
// a port nobody serves MQTT on does not, and the reason reaches the kubelet's event.
func TestUsageReadyzNeedsAnMQTTBroker(t *testing.T) {
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{WebSocket: true})
	if err != nil {
		t.Skipf("mosquitto: %v", err)
	}
	defer func() { _ = b.Stop() }()

	get := func(h http.Handler) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		return rec.Code, rec.Body.String()
	}
	if code, body := get(readyHandler(b.Addr)); code != http.StatusOK {
		t.Fatalf("Mosquitto at %s: /readyz %d %s", b.Addr, code, body)
	}

	// Over WebSocket (spec.mqtt.transport websocket): the CONNECT goes through the upgrade; the
	// plain MQTT port is not a WebSocket endpoint.
	if code, body := get(readyHandler("ws://" + b.WSAddr + "/mqtt")); code != http.StatusOK {
		t.Fatalf("Mosquitto over WebSocket at %s: /readyz %d %s", b.WSAddr, code, body)
	}
	if code, body := get(readyHandler("ws://" + b.Addr + "/mqtt")); code != http.StatusServiceUnavailable || !strings.Contains(body, "websocket upgrade") {
		t.Fatalf("ws:// on the MQTT port: /readyz %d %q, want 503 naming the upgrade", code, body)
	}

	// A listener that accepts TCP and never answers MQTT: a broker whose port opened early.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
			_ = c.Close()
		}
	}()
	if code, body := get(readyHandler(ln.Addr().String())); code != http.StatusServiceUnavailable || !strings.Contains(body, "MQTT CONNECT") {
		t.Fatalf("a non-MQTT listener: /readyz %d %q, want 503 naming the MQTT CONNECT", code, body)
	}
	if code, _ := get(readyHandler("")); code != http.StatusOK {
		t.Fatalf("without --ready-mqtt: /readyz %d, want 200", code)
	}
}
