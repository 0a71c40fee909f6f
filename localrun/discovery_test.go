package localrun

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/internal/manifest"
	sn "github.com/msgbench/msgbench/internal/mqttsn"
	"github.com/msgbench/msgbench/netem/emulator"
)

// discoveryDoc is a run whose MQTT-SN clients search for msgbench's gateway (spec.mqttsn.discovery).
const discoveryDoc = `
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: mqtt-sn-discovery}
spec:
  protocol: mqtt-sn
  qos: 1
  mqttsn:
    discovery: {%s}
  workload: {publishers: 3, subscribers: 2, topics: 2, payloadBytes: 32, messages: 60, rate: 60, warmup: 0s}
%s`

// TestMQTTSNDiscovery: every client sends SEARCHGW before CONNECT, takes the first GWINFO and
// connects to the gateway it came from, through msgbench run and msgbench's own gateway — on
// loopback by unicast (the default search address: the gateway's), and over the link emulator
// by broadcast to the link's subnet (the gateway answers from its unicast address). Every
// message arrives, every client finds the gateway with one SEARCHGW (nothing is lost), and the
// result's environment names the address searched and the gateway found.
func TestMQTTSNDiscovery(t *testing.T) {
	if _, err := mosquitto.Binary(); err != nil {
		t.Skip(err)
	}
	for _, tc := range []struct {
		name, discovery, network string
		link                     bool
		searched                 string // the address SEARCHGW went to, but for the gateway's port
		gateway                  string // the gateway found, but for its port
	}{
		{name: "loopback-unicast", searched: "127.0.0.1", gateway: "gateway 1 at 127.0.0.1:"},
		// The emulator's link is 198.18.0.0/30: the device at .1, the server at .2, the subnet's
		// broadcast address .3 (netem/emulator/link.go).
		{name: "link-broadcast", discovery: "address: 198.18.0.3, radius: 2", network: "  network: {profile: custom, delay: 5ms}\n",
			link: true, searched: "198.18.0.3", gateway: "gateway 1 at 198.18.0.2:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.link {
				if err := emulator.CheckPrivileges(); err != nil {
					t.Skip(err)
				}
			}
			mb, err := manifest.Parse([]byte(fmt.Sprintf(discoveryDoc, tc.discovery, tc.network)))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(context.Background(), mb, Options{Logf: t.Logf, NoEmbedded: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Phase != "Succeeded" || res.Sent != 60 || res.Lost == nil || *res.Lost != 0 || res.Received != res.Expected || res.Expected != 60 {
				t.Fatalf("phase %s (%s): sent %d, expected %d, received %d, lost %v; want 60 sent and received (each topic has one subscriber)", res.Phase, res.Message, res.Sent, res.Expected, res.Received, res.Lost)
			}
			d := res.Environment.Discovery
			if d == nil {
				t.Fatal("no environment.mqttsnDiscovery")
			}
			t.Logf("discovery: %+v", *d)
			if d.Found != 5 || d.Searches != 5 {
				t.Errorf("found %d with %d SEARCHGW, want each of the 5 clients once with one", d.Found, d.Searches)
			}
			if len(d.Searched) != 1 || !strings.HasPrefix(d.Searched[0], tc.searched+":") || len(d.Gateways) != 1 || !strings.HasPrefix(d.Gateways[0], tc.gateway) {
				t.Errorf("searched %v, found %v; want %s:port and %sport", d.Searched, d.Gateways, tc.searched, tc.gateway)
			}
			if _, port, _ := net.SplitHostPort(d.Searched[0]); !strings.HasSuffix(d.Gateways[0], ":"+port) {
				t.Errorf("searched %v, found %v: the gateway's port, searched and found", d.Searched, d.Gateways)
			}
			if d.MinMicros <= 0 || d.MaxMicros < d.MinMicros || d.MeanMicros < float64(d.MinMicros) || d.MeanMicros > float64(d.MaxMicros) {
				t.Errorf("discovery times %+v", *d)
			}
			if tc.link && d.MinMicros < 10000 {
				t.Errorf("discovery took %d µs at least over a link of 5 ms each way, want a round trip, ≥ 10 ms", d.MinMicros)
			}
			if c := res.Latency.Connect; c == nil || c.MaxMicros < d.MaxMicros {
				t.Errorf("connect latency %+v, discovery %+v: the search is part of the connect", c, *d)
			}
		})
	}
}

// TestMQTTSNDiscoveryFindsNothing: a search address where nothing answers fails the run with a
// message naming the field and the address, after exactly the SEARCHGWs T_SEARCHGW allows
// within the timeout: at 0, after [200, 300) ms, after a further [400, 600) ms — the next,
// [800, 1200) ms later, would be past the 1 s timeout. Each carries the radius asked for.
func TestMQTTSNDiscoveryFindsNothing(t *testing.T) {
	if _, err := mosquitto.Binary(); err != nil {
		t.Skip(err)
	}
	silent, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	var mu sync.Mutex
	var got []string
	go func() {
		buf := make([]byte, 512)
		for {
			n, _, err := silent.ReadFrom(buf)
			if err != nil {
				return
			}
			var s sn.SearchGW
			typ, body, err := sn.ReadHeader(buf[:n])
			mu.Lock()
			if err == nil && typ == sn.SEARCHGW && s.Decode(body) == nil {
				got = append(got, fmt.Sprintf("SEARCHGW radius %d", s.Radius))
			} else {
				got = append(got, fmt.Sprintf("%x", buf[:n]))
			}
			mu.Unlock()
		}
	}()
	doc := fmt.Sprintf(`
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: mqtt-sn-discovery-nothing}
spec:
  protocol: mqtt-sn
  qos: 1
  mqttsn:
    discovery: {address: %q, radius: 3, interval: 200ms, timeout: 1s}
  workload: {publishers: 1, subscribers: 0, payloadBytes: 32, messages: 10, rate: 10, warmup: 0s}
`, silent.LocalAddr())
	mb, err := manifest.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), mb, Options{Logf: t.Logf, NoEmbedded: true})
	msg := ""
	if err != nil {
		msg = err.Error()
	} else if res != nil {
		msg = res.Message
		if res.Phase != "Failed" {
			t.Errorf("phase %s, want Failed", res.Phase)
		}
	}
	for _, want := range []string{"spec.mqttsn.discovery.timeout", "spec.mqttsn.discovery.address", silent.LocalAddr().String(), "no GWINFO", "3 SEARCHGW"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not name %q", msg, want)
		}
	}
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 || got[0] != "SEARCHGW radius 3" || got[2] != got[0] {
		t.Errorf("the silent address received %q, want exactly 3 SEARCHGW of radius 3", got)
	}
}
