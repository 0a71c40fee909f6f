package roundtrip_test

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/gateway"
	gwhttp "github.com/msgbench/msgbench/gateway/http"
	gwquic "github.com/msgbench/msgbench/gateway/quic"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/certs/certstest"
	"github.com/msgbench/msgbench/loadgen"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/loadgen/drivers/driverstest"
	httpdrv "github.com/msgbench/msgbench/loadgen/drivers/http"
	"github.com/msgbench/msgbench/loadgen/drivers/http/roundtrip"
	mqttdrv "github.com/msgbench/msgbench/loadgen/drivers/mqtt"
	"github.com/msgbench/msgbench/loadgen/drivers/mqttquic"
	"github.com/msgbench/msgbench/plan"
)

// link is the emulated link of the test: 30 ms each way, RTT 60 ms — long enough that a round
// trip dwarfs loopback processing, short enough for a quick test.
var link = roundtrip.Link{Up: 30 * time.Millisecond, Down: 30 * time.Millisecond}

// servers is everything on the server side of the link.
type servers struct {
	broker, broker13, broker12 *mosquitto.Process
	httpPlain, httpTLS         *gwhttp.Gateway
	quic                       gateway.Gateway
	ca                         []byte
}

func startServers(t *testing.T) *servers {
	t.Helper()
	ctx := context.Background()
	s := &servers{}
	var err error
	for _, b := range []struct {
		p       **mosquitto.Process
		version string
	}{{&s.broker, ""}, {&s.broker13, "1.3"}, {&s.broker12, "1.2"}} {
		if *b.p, err = mosquitto.Start(ctx, mosquitto.Options{TLS: b.version != "", TLSVersion: b.version}); err != nil {
			t.Fatal(err)
		}
		p := *b.p
		t.Cleanup(func() { _ = p.Stop() })
	}
	bundle, srv := certstest.Loopback(t)
	s.ca = bundle.CACert
	compiled, err := plan.Compile(&v1alpha1.MessagingBenchmarkSpec{Protocol: v1alpha1.ProtocolHTTP, QoS: 1, MQTT: v1alpha1.MQTTSpec{Version: v1alpha1.MQTT311, Inflight: 20}}, plan.Admitted)
	if err != nil {
		t.Fatal(err)
	}
	o := gateway.Options{Listen: "127.0.0.1:0", Broker: s.broker.Addr, Groups: compiled.GatewayGroups("http")}
	if s.httpPlain, err = gwhttp.Start(ctx, o, gwhttp.Limits{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.httpPlain.Close() })
	o.TLS = srv
	if s.httpTLS, err = gwhttp.Start(ctx, o, gwhttp.Limits{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.httpTLS.Close() })
	if s.quic, err = gwquic.Start(ctx, o); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.quic.Close() })
	return s
}

func (s *servers) clientTLS(t *testing.T, ca []byte, version string) *tls.Config {
	c, err := certs.ClientTLS(ca, "127.0.0.1", version)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// setup is how to reach the server of one case through the emulated link.
type setup struct {
	factory roundtrip.Factory
	target  string // server address behind the proxy
	udp     bool
	tls     *tls.Config
	spec    *v1alpha1.MessagingBenchmarkSpec
}

func baseSpec(p v1alpha1.Protocol) *v1alpha1.MessagingBenchmarkSpec {
	return &v1alpha1.MessagingBenchmarkSpec{
		Protocol: p, QoS: 1,
		MQTT:     v1alpha1.MQTTSpec{Version: v1alpha1.MQTT311, Inflight: 1},
		HTTP:     v1alpha1.HTTPSpec{Version: v1alpha1.HTTP11},
		Workload: v1alpha1.WorkloadSpec{PayloadBytes: 16},
	}
}

func (s *servers) setup(t *testing.T, name string) setup {
	mqttF := func(cfg drivers.Config) (drivers.Driver, error) { return mqttdrv.New(cfg, mqttdrv.TCPTransport(cfg)) }
	httpF := func(cfg drivers.Config) (drivers.Driver, error) { return httpdrv.New(cfg, httpdrv.Options{}) }
	quicF := func(cfg drivers.Config) (drivers.Driver, error) { return mqttquic.New(cfg, mqttquic.Options{}) }
	withTLS := func(sp *v1alpha1.MessagingBenchmarkSpec, v v1alpha1.TLSVersion) *v1alpha1.MessagingBenchmarkSpec {
		sp.TLS = &v1alpha1.TLSSpec{Enabled: true, Version: v}
		return sp
	}
	httpSpec := func(v v1alpha1.HTTPVersion, keep bool) *v1alpha1.MessagingBenchmarkSpec {
		sp := baseSpec(v1alpha1.ProtocolHTTP)
		sp.HTTP = v1alpha1.HTTPSpec{Version: v, KeepAlive: &keep}
		return sp
	}
	switch name {
	case "mqtt tcp qos1":
		return setup{mqttF, s.broker.Addr, false, nil, baseSpec(v1alpha1.ProtocolMQTT)}
	case "mqtt tls1.3 qos1":
		return setup{mqttF, s.broker13.TLSAddr, false, s.clientTLS(t, s.broker13.CA, "1.3"), withTLS(baseSpec(v1alpha1.ProtocolMQTT), v1alpha1.TLS13)}
	case "mqtt tls1.2 qos1":
		return setup{mqttF, s.broker12.TLSAddr, false, s.clientTLS(t, s.broker12.CA, "1.2"), withTLS(baseSpec(v1alpha1.ProtocolMQTT), v1alpha1.TLS12)}
	case "mqtt-quic qos1":
		return setup{quicF, s.quic.Addr().String(), true, s.clientTLS(t, s.ca, "1.3"), baseSpec(v1alpha1.ProtocolMQTTQUIC)}
	case "mqtt-quic 0-rtt qos1":
		// The repetitions share the session cache: every connection after the first resumes.
		tc := s.clientTLS(t, s.ca, "1.3")
		tc.ClientSessionCache = tls.NewLRUClientSessionCache(8)
		f := func(cfg drivers.Config) (drivers.Driver, error) {
			return mqttquic.New(cfg, mqttquic.Options{ZeroRTT: true})
		}
		return setup{f, s.quic.Addr().String(), true, tc, baseSpec(v1alpha1.ProtocolMQTTQUIC)}
	case "http1.1":
		return setup{httpF, s.httpPlain.Addr().String(), false, nil, httpSpec(v1alpha1.HTTP11, true)}
	case "http1.1 tls1.3":
		return setup{httpF, s.httpTLS.Addr().String(), false, s.clientTLS(t, s.ca, "1.3"), withTLS(httpSpec(v1alpha1.HTTP11, true), v1alpha1.TLS13)}
	case "http1.1 tls1.2":
		return setup{httpF, s.httpTLS.Addr().String(), false, s.clientTLS(t, s.ca, "1.2"), withTLS(httpSpec(v1alpha1.HTTP11, true), v1alpha1.TLS12)}
	case "http1.1 no keep-alive":
		return setup{httpF, s.httpPlain.Addr().String(), false, nil, httpSpec(v1alpha1.HTTP11, false)}
	case "http1.1 tls1.3 no keep-alive":
		return setup{httpF, s.httpTLS.Addr().String(), false, s.clientTLS(t, s.ca, "1.3"), withTLS(httpSpec(v1alpha1.HTTP11, false), v1alpha1.TLS13)}
	case "http2 h2c":
		return setup{httpF, s.httpPlain.Addr().String(), false, nil, httpSpec(v1alpha1.HTTP2, true)}
	case "http2 tls1.3":
		return setup{httpF, s.httpTLS.Addr().String(), false, s.clientTLS(t, s.ca, "1.3"), withTLS(httpSpec(v1alpha1.HTTP2, true), v1alpha1.TLS13)}
	case "http3":
		return setup{httpF, s.httpTLS.HTTP3Addr().String(), true, s.clientTLS(t, s.ca, "1.3"), httpSpec(v1alpha1.HTTP3, true)}
	case "http3 no keep-alive":
		return setup{httpF, s.httpTLS.HTTP3Addr().String(), true, s.clientTLS(t, s.ca, "1.3"), httpSpec(v1alpha1.HTTP3, false)}
	}
	t.Fatalf("no set-up for case %q", name)
	return setup{}
}

// TestRoundTrips measures every case of roundtrip.Table through the delay proxy and checks
// connect, first-message and acknowledgement latencies against the derived round-trip counts.
func TestRoundTrips(t *testing.T) {
	if testing.Short() {
		t.Skip("round trips take a few seconds")
	}
	s := startServers(t)
	for _, c := range roundtrip.Table {
		t.Run(c.Name, func(t *testing.T) {
			st := s.setup(t, c.Name)
			var addr string
			if st.udp {
				p, err := roundtrip.NewUDPProxy(st.target, link)
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				addr = p.Addr()
			} else {
				p, err := roundtrip.NewTCPProxy(st.target, link)
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				addr = p.Addr()
			}
			cfg := drivers.Config{Group: driverstest.Group(t, st.spec), Address: addr, TLS: st.tls, Dial: roundtrip.Dialer(link)}
			tol := withMachineCost(t, roundtrip.DefaultTolerance(link.RTT()), machineCost(t, st, c.Name))
			// Three repetitions, checked by their minimum; on a busy machine up to two more sets
			// of three (noise only adds time, so more samples can only bring the minimum closer
			// to the protocol's own latency, never below it).
			var ms []roundtrip.Measurement
			rtt := link.RTT()
			var err error
			for set := 0; set < 3; set++ {
				for range 3 {
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					m, merr := roundtrip.Measure(ctx, st.factory, cfg, "rt/"+c.Name, 2)
					cancel()
					if merr != nil {
						t.Fatalf("repetition %d: %v", len(ms), merr)
					}
					t.Logf("repetition %d: %+v", len(ms), m)
					ms = append(ms, m)
				}
				m := roundtrip.Min(ms)
				t.Logf("minimum of %d: sub connect %.2f RTT, pub connect %.2f RTT, first message %.2f RTT, acks %.2f/%.2f RTT", len(ms),
					float64(m.SubscriberConnect)/float64(rtt), float64(m.PublisherConnect)/float64(rtt), float64(m.FirstMessage)/float64(rtt),
					float64(m.Acks[0])/float64(rtt), float64(m.Acks[1])/float64(rtt))
				if err = c.Check(m, rtt, tol); err == nil {
					break
				}
			}
			if err != nil {
				t.Error(err)
			}
		})
	}
}

// machineCost is what the case takes with no delay at all: the handshakes' computing (TLS 1.3
// with X25519MLKEM768 under -race takes milliseconds) and the scheduling, which the link's round
// trips come on top of. The slowest figure, the least of three repetitions.
func machineCost(t *testing.T, st setup, name string) time.Duration {
	t.Helper()
	var addr string
	if st.udp {
		p, err := roundtrip.NewUDPProxy(st.target, roundtrip.Link{})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		addr = p.Addr()
	} else {
		p, err := roundtrip.NewTCPProxy(st.target, roundtrip.Link{})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		addr = p.Addr()
	}
	cfg := drivers.Config{Group: driverstest.Group(t, st.spec), Address: addr, TLS: st.tls, Dial: roundtrip.Dialer(roundtrip.Link{})}
	var ms []roundtrip.Measurement
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		m, err := roundtrip.Measure(ctx, st.factory, cfg, "rt0/"+name, 2)
		cancel()
		if err != nil {
			t.Fatalf("without delay: %v", err)
		}
		ms = append(ms, m)
	}
	m := roundtrip.Min(ms)
	return max(m.SubscriberConnect, m.PublisherConnect, m.FirstMessage, m.Acks[0], m.Acks[1])
}

// withMachineCost is tol with the machine's own cost allowed above, as long as a count one half
// round trip off still fails; a machine slower than that cannot count round trips at all.
func withMachineCost(t *testing.T, tol roundtrip.Tolerance, cost time.Duration) roundtrip.Tolerance {
	t.Helper()
	tol.Above += cost
	t.Logf("the machine's own cost without delay: %v; tolerance -%v/+%v", cost.Round(100*time.Microsecond), tol.Below, tol.Above.Round(100*time.Microsecond))
	if tol.Above >= link.RTT()/2 {
		t.Skipf("the machine takes %v without any delay, so a round trip (%v) more or less cannot be told apart: too busy to count", cost, link.RTT())
	}
	return tol
}

// TestEngineFigures runs loadgen.Run through the proxy for HTTP/3 and MQTT over QUIC: the
// engine's first-message latency, timed from the publisher's dial, agrees with the table — the
// study-2 result that HTTP/3 saves MQTT over QUIC's CONNECT round trip.
func TestEngineFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("round trips take a few seconds")
	}
	s := startServers(t)
	for _, name := range []string{"http3", "mqtt-quic qos1"} {
		c, _ := roundtrip.Lookup(name)
		tol := withMachineCost(t, roundtrip.DefaultTolerance(link.RTT()), machineCost(t, s.setup(t, name), name))
		var err error
		best := time.Duration(1 << 62)
		for attempt := 0; attempt < 6; attempt++ { // on a busy machine, the best of up to six runs
			fm, lost, count := engineFirstMessage(t, s, name)
			best = min(best, fm)
			t.Logf("%s: first message p50 %v = %.2f RTT, lost %d", name, fm, float64(fm)/float64(link.RTT()), lost)
			if count != 2 || lost != 0 {
				t.Fatalf("%s: %d first messages, lost %d", name, count, lost)
			}
			if err = c.Check(roundtrip.Measurement{FirstMessage: best, SubscriberConnect: -1, PublisherConnect: -1}, link.RTT(), tol); err == nil {
				break
			}
		}
		if err != nil {
			t.Error(err)
		}
	}
}

// engineFirstMessage runs 2 publishers and 2 subscribers of a case through loadgen.Run over the
// proxy and returns the first-message p50, messages lost and first messages recorded.
func engineFirstMessage(t *testing.T, s *servers, name string) (time.Duration, int64, int64) {
	st := s.setup(t, name)
	p, err := roundtrip.NewUDPProxy(st.target, link)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	sp := st.spec
	sp.Workers.Replicas = 1
	sp.Workload = v1alpha1.WorkloadSpec{Publishers: 2, Subscribers: 2, Topics: 2, TopicPrefix: "engine/", PayloadBytes: 64, Messages: 20,
		Duration: metav1.Duration{Duration: time.Second}, TimelineInterval: metav1.Duration{Duration: time.Second}}
	sp.MQTT.Inflight = 20
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := loadgen.Run(ctx, loadgen.Options{Name: "rt", Spec: sp, Address: p.Addr(), TLS: st.tls, Dial: roundtrip.Dialer(link)})
	if err != nil {
		t.Fatal(err)
	}
	return time.Duration(res.Latency.FirstMessage.P50Micros) * time.Microsecond, *res.Lost, res.Latency.FirstMessage.Count
}
