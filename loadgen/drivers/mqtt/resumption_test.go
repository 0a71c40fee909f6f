package mqtt_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/internal/devicetls"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/loadgen/drivers/driverstest"
	"github.com/msgbench/msgbench/loadgen/drivers/http/roundtrip"
)

type nopHandler struct{}

func (nopHandler) Message([]byte)        {}
func (nopHandler) Completed(int64, bool) {}

// TestTLSResumptionOnReconnect: with spec.tls.resumption a client that reconnects to a real
// Mosquitto resumes its own TLS session (a ticket), and another client does not. Through a link
// of 50 ms each way the resumed handshake shows where it saves: TLS 1.2's abbreviated handshake
// takes one round trip instead of two (connect 3 RTT instead of 4: TCP, TLS, CONNECT), TLS 1.3's
// takes one either way but no longer carries the certificate (fewer connect bytes). Clients of a
// run never reconnect on their own (docs/tls.md), so this test closes and reconnects them.
func TestTLSResumptionOnReconnect(t *testing.T) {
	if testing.Short() {
		t.Skip("round trips through a 100 ms link")
	}
	link := roundtrip.Link{Up: 50 * time.Millisecond, Down: 50 * time.Millisecond}
	rtt := link.RTT()
	for _, c := range []struct {
		version      v1alpha1.TLSVersion
		full, resume int // round trips to CONNACK
	}{{v1alpha1.TLS12, 4, 3}, {v1alpha1.TLS13, 3, 3}} {
		t.Run("TLS "+string(c.version), func(t *testing.T) {
			b, err := mosquitto.Start(context.Background(), mosquitto.Options{TLS: true, TLSVersion: string(c.version)})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = b.Stop() }()
			proxy, err := roundtrip.NewTCPProxy(b.TLSAddr, link)
			if err != nil {
				t.Fatal(err)
			}
			defer proxy.Close()
			spec := &v1alpha1.MessagingBenchmarkSpec{Protocol: v1alpha1.ProtocolMQTT, QoS: 1, MQTT: v1alpha1.MQTTSpec{Version: v1alpha1.MQTT311, Inflight: 1},
				Broker: v1alpha1.BrokerSpec{Type: v1alpha1.BrokerMosquitto}, Workload: v1alpha1.WorkloadSpec{PayloadBytes: 16},
				TLS: &v1alpha1.TLSSpec{Enabled: true, Version: c.version, Resumption: true}}
			tlsConf, err := devicetls.Client(b.CA, "127.0.0.1", driverstest.TLSPath(t, spec).Version, devicetls.OfferOf(spec))
			if err != nil {
				t.Fatal(err)
			}
			drv, err := drivers.New(string(v1alpha1.ProtocolMQTT), drivers.Config{Group: driverstest.Group(t, spec), Address: proxy.Addr(), TLS: tlsConf, Dial: roundtrip.Dialer(link),
				Now: func() int64 { return time.Now().UnixNano() }})
			if err != nil {
				t.Fatal(err)
			}
			type conn struct {
				took  time.Duration
				bytes int64
			}
			connect := func(id string) conn {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				start := time.Now()
				sess, err := drv.Connect(ctx, drivers.Client{ID: id, Role: drivers.Publisher, Topic: "res/" + id}, nopHandler{})
				took := time.Since(start)
				if err != nil {
					t.Fatalf("%s: %v", id, err)
				}
				defer sess.Close()
				return conn{took, sess.ConnectBytes()}
			}
			var problem error
			for attempt := range 3 {
				dev := fmt.Sprintf("dev-%d", attempt)
				full := connect(dev)
				resumed := connect(dev)
				other := connect(fmt.Sprintf("other-%d", attempt))
				t.Logf("attempt %d: first %v (%.2f RTT, %d B), reconnect %v (%.2f RTT, %d B), another client %v (%d B)", attempt,
					full.took, float64(full.took)/float64(rtt), full.bytes, resumed.took, float64(resumed.took)/float64(rtt), resumed.bytes, other.took, other.bytes)
				if resumed.bytes > full.bytes-300 || other.bytes < full.bytes-16 {
					t.Fatalf("connect bytes: first %d, reconnect %d, another client %d: want the reconnect without the certificate (300+ B less) and the other client in full",
						full.bytes, resumed.bytes, other.bytes)
				}
				problem = nil
				if full.took < time.Duration(c.full)*rtt || resumed.took < time.Duration(c.resume)*rtt {
					t.Fatalf("faster than the round trips allow: %v, %v", full.took, resumed.took)
				}
				if full.took >= time.Duration(c.full)*rtt+rtt/2 || resumed.took >= time.Duration(c.resume)*rtt+rtt/2 {
					problem = fmt.Errorf("first %v, reconnect %v: want %d and %d RTT (+ 0.5 of slack) on a %v link", full.took, resumed.took, c.full, c.resume, rtt)
					continue
				}
				break
			}
			if problem != nil {
				t.Error(problem)
			}
			st := drv.(drivers.TLSReporter).TLSStats()
			if st.Resumed == 0 || st.Handshakes != 3*st.Resumed || st.ZeroRTT != 0 {
				t.Errorf("stats %+v: want one resumed handshake in every three, no 0-RTT", st)
			}
		})
	}
}
