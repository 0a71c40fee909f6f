package localrun

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/gateway"
	"github.com/msgbench/msgbench/gateway/mqttsn"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/internal/testenv"
)

// TestExternalMQTTSNGateway: a manifest whose MQTT-SN clients go through a gateway msgbench does
// not start (spec.gateway.external), configured as a deployed gateway is — its own predefined
// topic ids, not msgbench's i+1 — in front of a broker msgbench does not start either. The run
// starts no gateway, its clients name their topics by the ids spec.mqttsn.predefinedTopicIds
// gives, send from the ports spec.mqttsn.sourcePort gives (what a gateway that lists its QoS -1
// clients needs), and every message arrives. The gateway is msgbench's own, started by the test
// as another program's would be; a UDP relay in front of it records where the clients send from.
func TestExternalMQTTSNGateway(t *testing.T) {
	if _, err := mosquitto.Binary(); err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	b, err := mosquitto.Start(ctx, mosquitto.Options{MaxInflight: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	gw, err := mqttsn.Start(ctx, gateway.Options{Listen: "127.0.0.1:0", Broker: b.Addr},
		mqttsn.Config{Predefined: map[uint16]string{100: "site/0", 7: "site/1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Close() })
	relay, sources := udpRelay(t, gw.Addr().String())

	sourcePort := testenv.FreeUDPPorts(t, 4)
	doc := fmt.Sprintf(`
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: external-mqtt-sn}
spec:
  protocol: mqtt-sn
  qos: %%d
  mqttsn:
    topicIdType: predefined
    predefinedTopicIds: {"site/0": 100, "site/1": 7}
    sourcePort: %d
  broker:
    type: external
    external: {address: %q}
  gateway:
    external: {address: %q}
  workload: {publishers: 2, subscribers: 2, topics: 2, topicPrefix: site/, payloadBytes: 32, rate: 40, warmup: 1s, duration: 3s}
`, sourcePort, b.Addr, relay)
	for _, qos := range []int{-1, 1} {
		t.Run(fmt.Sprintf("qos%d", qos), func(t *testing.T) {
			mb, err := manifest.Parse([]byte(fmt.Sprintf(doc, qos)))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(ctx, mb, Options{Logf: t.Logf, NoEmbedded: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Phase != "Succeeded" || res.Sent == 0 || res.Lost == nil || *res.Lost != 0 || res.Received != res.Expected {
				t.Fatalf("phase %s (%s): sent %d, expected %d, received %d, lost %v", res.Phase, res.Message, res.Sent, res.Expected, res.Received, res.Lost)
			}
			if !strings.Contains(res.Environment.Gateway, "external at "+relay) {
				t.Errorf("environment gateway %q, want the external one", res.Environment.Gateway)
			}
			// Publishers 0 and 1 from the first two ports, the subscribers from the next two.
			want := []int{sourcePort, sourcePort + 1, sourcePort + 2, sourcePort + 3}
			if got := sources(); !slices.Equal(got, want) {
				t.Errorf("clients sent from ports %v, want %v", got, want)
			}
		})
	}
}

// udpRelay forwards datagrams between clients and target, recording each client's source port.
// It returns its address and the ports seen so far, sorted (reset by each call).
func udpRelay(t *testing.T, target string) (string, func() []int) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	var mu sync.Mutex
	upstream := map[string]net.Conn{}
	seen := map[int]bool{}
	go func() {
		buf := make([]byte, 65536)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			mu.Lock()
			seen[from.(*net.UDPAddr).Port] = true
			up := upstream[from.String()]
			if up == nil {
				if up, err = net.Dial("udp", target); err != nil {
					mu.Unlock()
					continue
				}
				upstream[from.String()] = up
				go func(up net.Conn, client net.Addr) { // the gateway's answers, back to the client
					b := make([]byte, 65536)
					for {
						n, err := up.Read(b)
						if err != nil {
							return
						}
						_, _ = pc.WriteTo(b[:n], client)
					}
				}(up, from)
			}
			mu.Unlock()
			_, _ = up.Write(buf[:n])
		}
	}()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range upstream {
			_ = c.Close()
		}
	})
	return pc.LocalAddr().String(), func() []int {
		mu.Lock()
		defer mu.Unlock()
		var ports []int
		for p := range seen {
			ports = append(ports, p)
		}
		clear(seen)
		slices.Sort(ports)
		return ports
	}
}
