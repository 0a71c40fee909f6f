package http_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/gateway"
	gwhttp "github.com/msgbench/msgbench/gateway/http"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/certs/certstest"
	"github.com/msgbench/msgbench/loadgen"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/loadgen/drivers/driverstest"
	httpdrv "github.com/msgbench/msgbench/loadgen/drivers/http"
	"github.com/msgbench/msgbench/loadgen/drivers/http/roundtrip"
	"github.com/msgbench/msgbench/plan"
)

func spec(version v1alpha1.HTTPVersion, tlsOn, keepAlive bool, qos int32) *v1alpha1.MessagingBenchmarkSpec {
	s := &v1alpha1.MessagingBenchmarkSpec{
		Protocol: v1alpha1.ProtocolHTTP,
		QoS:      qos,
		HTTP:     v1alpha1.HTTPSpec{Version: version, KeepAlive: &keepAlive},
		MQTT:     v1alpha1.MQTTSpec{Version: v1alpha1.MQTT311, Inflight: 20},
		Workers:  v1alpha1.WorkersSpec{Replicas: 1},
		Workload: v1alpha1.WorkloadSpec{
			Publishers: 2, Subscribers: 2, Topics: 2, TopicPrefix: "http/", PayloadBytes: 100, Rate: 300,
			Duration: metav1.Duration{Duration: time.Second}, Warmup: metav1.Duration{Duration: 200 * time.Millisecond},
			TimelineInterval: metav1.Duration{Duration: 100 * time.Millisecond},
		},
	}
	if tlsOn {
		s.TLS = &v1alpha1.TLSSpec{Enabled: true, Version: v1alpha1.TLS13}
	}
	return s
}

// gatewayGroups are the groups of s's compiled plan that the gateway of mode serves.
func gatewayGroups(t testing.TB, s *v1alpha1.MessagingBenchmarkSpec, mode string) []plan.Group {
	t.Helper()
	p, err := plan.Compile(s, plan.Admitted)
	if err != nil {
		t.Fatal(err)
	}
	return p.GatewayGroups(mode)
}

// gateways are a cleartext and a TLS gateway in front of one Mosquitto.
type gateways struct {
	plain, secure *gwhttp.Gateway
	clientTLS     *tls.Config
}

func startGateways(t testing.TB) *gateways {
	t.Helper()
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{MaxInflight: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	bundle, srv := certstest.Loopback(t)
	g := &gateways{}
	gs := gatewayGroups(t, spec(v1alpha1.HTTP11, false, true, 1), "http")
	if g.plain, err = gwhttp.Start(context.Background(), gateway.Options{Listen: "127.0.0.1:0", Broker: b.Addr, Groups: gs}, gwhttp.Limits{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.plain.Close() })
	if g.secure, err = gwhttp.Start(context.Background(), gateway.Options{Listen: "127.0.0.1:0", Broker: b.Addr, Groups: gs, TLS: srv}, gwhttp.Limits{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.secure.Close() })
	if g.clientTLS, err = certs.ClientTLS(bundle.CACert, "127.0.0.1", "1.3"); err != nil {
		t.Fatal(err)
	}
	return g
}

// options are the loadgen options that reach the right listener for a spec.
func (g *gateways) options(s *v1alpha1.MessagingBenchmarkSpec) loadgen.Options {
	o := loadgen.Options{Name: "http", Spec: s, Address: g.plain.Addr().String()}
	if s.HTTP.Version == v1alpha1.HTTP3 || (s.TLS != nil && s.TLS.Enabled) {
		o.Address, o.TLS = g.secure.Addr().String(), g.clientTLS
	}
	return o
}

// TestEndToEnd runs the http driver through loadgen.Run for every HTTP version, with and
// without TLS and keep-alive, at QoS 0, 1 and 2: nothing is lost at QoS 1/2, every publish gets
// its response, and the wire counters saw every message.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short (make test-unit): runs in make test")
	}
	g := startGateways(t)
	type variant struct {
		version   v1alpha1.HTTPVersion
		tls, keep bool
	}
	for _, v := range []variant{
		{v1alpha1.HTTP11, false, true}, {v1alpha1.HTTP11, true, true}, {v1alpha1.HTTP11, false, false},
		{v1alpha1.HTTP2, false, true}, {v1alpha1.HTTP2, true, true},
		{v1alpha1.HTTP3, false, true}, {v1alpha1.HTTP3, false, false},
	} {
		for _, qos := range []int32{0, 1, 2} {
			if !v.keep && qos != 1 {
				continue // one QoS is enough to show a connection per message works
			}
			name := fmt.Sprintf("http%s tls=%v keepAlive=%v qos=%d", v.version, v.tls, v.keep, qos)
			s := spec(v.version, v.tls, v.keep, qos)
			if !v.keep {
				s.Workload.Rate = 100
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			res, err := loadgen.Run(ctx, g.options(s))
			cancel()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			t.Logf("%s: %s sent %d acked %d received %d lost %d wire %d/%d B datagrams %v connect p50 %d µs e2e p50 %d µs",
				name, res.Phase, res.Sent, res.Acked, res.Received, *res.Lost, res.Wire.BytesSent, res.Wire.BytesReceived,
				res.Wire.DatagramsSent, res.Latency.Connect.P50Micros, res.Latency.EndToEnd.P50Micros)
			if res.Phase != "Succeeded" || res.Sent < int64(s.Workload.Rate)*9/10 {
				t.Errorf("%s: phase %s, sent %d: %s", name, res.Phase, res.Sent, res.Message)
				continue
			}
			if res.Acked != res.Sent {
				t.Errorf("%s: %d of %d publishes got a 2xx response", name, res.Acked, res.Sent)
			}
			// The environment says what was spoken: the HTTP version and, over TLS or QUIC, what
			// the handshakes negotiated (Go on both sides: TLS 1.3 with the hybrid group).
			wantTLS, wantGroup := "", ""
			if v.tls || v.version == v1alpha1.HTTP3 {
				wantTLS, wantGroup = "TLS 1.3", "X25519MLKEM768"
			}
			if env := res.Environment; env.Protocol != "HTTP/"+string(v.version) || env.TLSVersion != wantTLS || env.TLSGroup != wantGroup {
				t.Errorf("%s: environment says %q, %q, %q; want HTTP/%s, %q, %q", name, env.Protocol, env.TLSVersion, env.TLSGroup, v.version, wantTLS, wantGroup)
			}
			if qos > 0 && *res.Lost != 0 {
				t.Errorf("%s: lost %d", name, *res.Lost)
			}
			if qos == 2 && *res.Duplicates != 0 {
				t.Errorf("%s: %d duplicates", name, *res.Duplicates)
			}
			if res.Wire.BytesSent < res.Sent*100 || res.Wire.BytesReceived < res.Received*100 {
				t.Errorf("%s: wire %d/%d bytes for %d/%d messages of 100 bytes", name, res.Wire.BytesSent, res.Wire.BytesReceived, res.Sent, res.Received)
			}
			// The window's publisher bytes include every measured POST, also those a sender
			// goroutine still held when the window closed.
			if perMsg := float64(res.Wire.PublishBytesTotal) / float64(res.Wire.PublishMessageCount); v.keep && perMsg < 100 {
				t.Errorf("%s: publisher uplink %.1f B per 100-byte message", name, perMsg)
			}
			if quic := v.version == v1alpha1.HTTP3; quic != (res.Wire.DatagramsSent != nil) {
				t.Errorf("%s: datagram counts %v", name, res.Wire.DatagramsSent)
			}
			if !v.keep && res.Wire.Connections != 4 {
				t.Errorf("%s: %d sessions", name, res.Wire.Connections)
			}
		}
	}
}

// TestCredentials: the driver's Basic credentials reach a broker that requires them, for a
// publisher and a subscriber of every HTTP version.
func TestCredentials(t *testing.T) {
	pwfile := t.TempDir() + "/passwd"
	if out, err := exec.Command("mosquitto_passwd", "-c", "-b", pwfile, "dev", "pw").CombinedOutput(); err != nil {
		t.Skipf("mosquitto_passwd: %v %s", err, out)
	}
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{Access: map[string]string{"password_file": pwfile, "allow_anonymous": "false"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	addr, clientTLS := tlsGateway(t, b.Addr, gwhttp.Limits{})
	for _, version := range []v1alpha1.HTTPVersion{v1alpha1.HTTP11, v1alpha1.HTTP2, v1alpha1.HTTP3} {
		for _, pw := range []string{"pw", "bad"} {
			cfg := drivers.Config{Group: driverstest.Group(t, spec(version, true, true, 1)), Address: addr, TLS: clientTLS}
			factory := func(cfg drivers.Config) (drivers.Driver, error) {
				return httpdrv.New(cfg, httpdrv.Options{Username: "dev", Password: pw})
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, err := roundtrip.Measure(ctx, factory, cfg, "cred/"+string(version), 1)
			cancel()
			if (err == nil) != (pw == "pw") {
				t.Errorf("HTTP/%s with password %q: %v", version, pw, err)
			}
		}
	}
}

// TestIdleReconnect: a gateway that closes idle keep-alive connections does not end a
// publisher's session; its next message goes out on a new connection, once, for every version.
func TestIdleReconnect(t *testing.T) {
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	addr, clientTLS := tlsGateway(t, b.Addr, gwhttp.Limits{IdleTimeout: 300 * time.Millisecond})
	for _, version := range []v1alpha1.HTTPVersion{v1alpha1.HTTP11, v1alpha1.HTTP2, v1alpha1.HTTP3} {
		for _, inflight := range []int32{1, 4} {
			drv := tlsDriver(t, version, inflight, addr, clientTLS)
			h := &counting{}
			sess, err := drv.Connect(context.Background(), drivers.Client{ID: "idle", Role: drivers.Publisher, Topic: "idle"}, h)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				if err := sess.Publish([]byte("x"), true); err != nil {
					t.Fatalf("HTTP/%s inflight %d: publish %d: %v", version, inflight, i, err)
				}
				if err := sess.Drain(context.Background()); err != nil {
					t.Fatalf("HTTP/%s inflight %d: drain %d: %v", version, inflight, i, err)
				}
				time.Sleep(600 * time.Millisecond) // past the gateway's idle timeout
			}
			if h.ok.Load() != 3 || sess.Err() != nil {
				t.Errorf("HTTP/%s inflight %d: %d of 3 publishes answered 2xx, session error %v", version, inflight, h.ok.Load(), sess.Err())
			}
			_ = sess.Close()
		}
	}
}

// TestCloseWithRequestsInFlight: Close returns promptly while POSTs wait on a broker that has
// stopped answering (SIGSTOP), for every version and with senders (inflight 4) or without.
// It once deadlocked: a sender whose request Close interrupted re-took a lock it held.
func TestCloseWithRequestsInFlight(t *testing.T) {
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(b.PID(), syscall.SIGCONT); _ = b.Stop() })
	addr, clientTLS := tlsGateway(t, b.Addr, gwhttp.Limits{})
	for _, version := range []v1alpha1.HTTPVersion{v1alpha1.HTTP11, v1alpha1.HTTP2, v1alpha1.HTTP3} {
		for _, inflight := range []int32{1, 4} {
			drv := tlsDriver(t, version, inflight, addr, clientTLS)
			name := fmt.Sprintf("HTTP/%s inflight %d", version, inflight)
			sess, err := drv.Connect(context.Background(), drivers.Client{ID: "stall", Role: drivers.Publisher, Topic: "stall"}, &counting{})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if err := syscall.Kill(b.PID(), syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			published := make(chan struct{})
			go func() {
				defer close(published)
				for range inflight {
					_ = sess.Publish([]byte("x"), true) // inflight 1 blocks here until Close
				}
			}()
			time.Sleep(300 * time.Millisecond) // the requests reach the gateway and wait
			closed := make(chan struct{})
			go func() { _ = sess.Close(); close(closed) }()
			select {
			case <-closed:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: Close still waiting after 10 s with requests in flight", name)
			}
			select {
			case <-published:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: Publish still blocked 10 s after Close", name)
			}
			_ = syscall.Kill(b.PID(), syscall.SIGCONT)
		}
	}
}

// TestOneMessageWindowCountsItsBytes: a window of one message per publisher counts that
// message's uplink bytes, though HTTP/2 and HTTP/3 senders (and QUIC's send loop) write it after
// Publish returned. Once such a run reported 0 bytes per message.
func TestOneMessageWindowCountsItsBytes(t *testing.T) {
	g := startGateways(t)
	for _, version := range []v1alpha1.HTTPVersion{v1alpha1.HTTP11, v1alpha1.HTTP2, v1alpha1.HTTP3} {
		s := spec(version, version == v1alpha1.HTTP3, true, 1)
		s.MQTT.Inflight = 4
		s.Workload.PayloadBytes, s.Workload.Messages, s.Workload.Rate = 4000, 2, 0
		s.Workload.Warmup.Duration = 0
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		res, err := loadgen.Run(ctx, g.options(s))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if res.Wire.PublishMessageCount != 2 || res.Wire.PublishBytesTotal < 2*4000 {
			t.Errorf("HTTP/%s: %d bytes for %d measured 4000-byte messages (%s %s)", version,
				res.Wire.PublishBytesTotal, res.Wire.PublishMessageCount, res.Phase, res.Message)
		}
	}
}

// tlsGateway starts an HTTP gateway with a fresh certificate in front of broker and returns its
// address and a client TLS configuration that trusts it.
func tlsGateway(t *testing.T, broker string, limits gwhttp.Limits) (string, *tls.Config) {
	t.Helper()
	bundle, srv := certstest.Loopback(t)
	gw, err := gwhttp.Start(context.Background(), gateway.Options{Listen: "127.0.0.1:0", Broker: broker, TLS: srv}, limits)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Close() })
	clientTLS, _ := certs.ClientTLS(bundle.CACert, "127.0.0.1", "1.3")
	return gw.Addr().String(), clientTLS
}

// tlsDriver is an http driver of the version, with TLS and keep-alive, at QoS 1.
func tlsDriver(t *testing.T, version v1alpha1.HTTPVersion, inflight int32, addr string, clientTLS *tls.Config) drivers.Driver {
	t.Helper()
	s := spec(version, true, true, 1)
	s.MQTT.Inflight = inflight
	start := time.Now()
	drv, err := httpdrv.New(drivers.Config{Group: driverstest.Group(t, s), Address: addr, TLS: clientTLS, Now: func() int64 { return int64(time.Since(start)) }}, httpdrv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return drv
}

// TestFirstRequestAfterTheServerClosedAnIdleConnection: a device that connects and publishes its
// first message later than the server waits for a request (Go's ReadHeaderTimeout closes such a
// connection; nginx's client_header_timeout too) sends it again on a new connection, as after a
// kept-alive connection's idle close — it used to fail the publisher (an NB-IoT sensor posting a
// reading a minute through msgbench's gateway, whose ReadHeaderTimeout is 10 s).
func TestFirstRequestAfterTheServerClosedAnIdleConnection(t *testing.T) {
	var conns atomic.Int64
	srv := &http.Server{ReadHeaderTimeout: 300 * time.Millisecond,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusNoContent)
		}),
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	start := time.Now()
	drv, err := httpdrv.New(drivers.Config{Group: driverstest.Group(t, spec(v1alpha1.HTTP11, false, true, 1)), Address: ln.Addr().String(),
		Now: func() int64 { return int64(time.Since(start)) }}, httpdrv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var st statuses
	sess, err := drv.Connect(context.Background(), drivers.Client{ID: "late", Role: drivers.Publisher, Topic: "http/0"}, &st)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	time.Sleep(1200 * time.Millisecond) // the server has closed the new connection by now
	for i := range 2 {
		if err := sess.Publish(make([]byte, 100), true); err != nil {
			t.Fatalf("publish %d: %v", i+1, err)
		}
	}
	if st.ok.Load() != 2 || conns.Load() != 2 {
		t.Errorf("%d of 2 publishes accepted over %d connections; want 2 over 2 (the first closed idle, one more)", st.ok.Load(), conns.Load())
	}
}
