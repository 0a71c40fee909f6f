package http

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	gohttp "net/http"
	"net/url"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"
	"golang.org/x/net/http2/hpack"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/gateway"
	gwhttp "github.com/msgbench/msgbench/gateway/http"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/certs/certstest"
	"github.com/msgbench/msgbench/internal/mqtt"
	"github.com/msgbench/msgbench/internal/proc"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/loadgen/drivers/driverstest"
	"github.com/msgbench/msgbench/loadgen/drivers/mqttquic/quicconn"
)

// h3Env is a real Mosquitto behind the real HTTP gateway, which serves HTTP/3 with TLS.
type h3Env struct {
	broker *mosquitto.Process
	addr   string
	tls    *tls.Config
}

func startH3Env(tb testing.TB, limits gwhttp.Limits) *h3Env {
	tb.Helper()
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{MaxInflight: 20})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = syscall.Kill(b.PID(), syscall.SIGCONT); _ = b.Stop() })
	bundle, srv := certstest.Loopback(tb)
	gw, err := gwhttp.Start(context.Background(), gateway.Options{Listen: "127.0.0.1:0", Broker: b.Addr, TLS: srv}, limits)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = gw.Close() })
	clientTLS, err := certs.ClientTLS(bundle.CACert, "127.0.0.1", "1.3")
	if err != nil {
		tb.Fatal(err)
	}
	return &h3Env{broker: b, addr: gw.Addr().String(), tls: clientTLS}
}

// open connects an HTTP/3 exchanger with inflight readers, POSTing to topic at QoS 1 (or with
// edit's changes to the request head), reporting responses to on.
func (env *h3Env) open(tb testing.TB, inflight int32, topic string, edit func(*requestHead), on responseFunc) (*driver, exchanger) {
	tb.Helper()
	d := env.driver(tb, inflight)
	head := requestHead{scheme: d.scheme, authority: d.host, path: d.path(topic), auth: d.auth}
	if edit != nil {
		edit(&head)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ex, err := d.openH3(ctx, d.clientTLS.For("h3-"+tb.Name()), head, on)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = ex.Close() })
	return d, ex
}

// driver is an HTTP/3 driver at QoS 1 for the gateway.
func (env *h3Env) driver(tb testing.TB, inflight int32) *driver {
	tb.Helper()
	s := &v1alpha1.MessagingBenchmarkSpec{Protocol: v1alpha1.ProtocolHTTP, QoS: 1,
		HTTP: v1alpha1.HTTPSpec{Version: v1alpha1.HTTP3}, MQTT: v1alpha1.MQTTSpec{Inflight: inflight},
		Workload: v1alpha1.WorkloadSpec{PayloadBytes: 256}}
	drv, err := New(drivers.Config{Group: driverstest.Group(tb, s), Address: env.addr, TLS: env.tls}, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return drv.(*driver)
}

// h3Outcome is one responseFunc call.
type h3Outcome struct {
	sentAt int64
	status int
	err    error
}

// h3Log records responseFunc calls.
type h3Log struct {
	mu  sync.Mutex
	got []h3Outcome
	n   chan struct{} // a token per call
}

func newH3Log() *h3Log { return &h3Log{n: make(chan struct{}, 1024)} }

func (l *h3Log) on(sentAt int64, status int, err error) {
	l.mu.Lock()
	l.got = append(l.got, h3Outcome{sentAt, status, err})
	l.mu.Unlock()
	l.n <- struct{}{}
}

func (l *h3Log) wait(t *testing.T, n int) []h3Outcome {
	t.Helper()
	for i := range n {
		select {
		case <-l.n:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d responses after 10 s", i, n)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]h3Outcome(nil), l.got...)
}

func (l *h3Log) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.got)
}

// TestH3PostsReachTheBroker: POSTs at QoS 1, up to four in flight, each answered 204 through
// onResponse once with its sentAt, and a real MQTT subscriber receives every body byte for byte
// (the caller's buffer is reused after each Post, as the contract allows).
func TestH3PostsReachTheBroker(t *testing.T) {
	env := startH3Env(t, gwhttp.Limits{})
	const topic, n = "h3/exchange", 40
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	nc, err := net.Dial("tcp", env.broker.Addr)
	if err != nil {
		t.Fatal(err)
	}
	delivered := make(chan []byte, n)
	sub, err := mqtt.Connect(ctx, nc, mqtt.Options{Connect: mqtt.ConnectOptions{ClientID: "h3-sub", CleanSession: true},
		OnPublish: func(p *mqtt.Publish) { delivered <- bytes.Clone(p.Payload) }})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := sub.Subscribe(ctx, mqtt.Subscription{Filter: topic, QoS: 1}); err != nil {
		t.Fatal(err)
	}

	log := newH3Log()
	window := make(chan struct{}, 4)
	d, ex := env.open(t, 4, topic, nil, func(sentAt int64, status int, err error) {
		log.on(sentAt, status, err)
		<-window
	})
	body := func(i int, b []byte) []byte {
		for j := range b {
			b[j] = byte(i*7 + j)
		}
		return b
	}
	payload := make([]byte, 256)
	for i := range n {
		window <- struct{}{}
		if err := ex.Post(body(i, payload), int64(i), i%2 == 0); err != nil {
			t.Fatalf("post %d: %v", i, err)
		}
	}
	seen := map[int64]bool{}
	for _, o := range log.wait(t, n) {
		if o.status != 204 || o.err != nil || seen[o.sentAt] {
			t.Errorf("response for sentAt %d: status %d, error %v, seen before %v; want one 204", o.sentAt, o.status, o.err, seen[o.sentAt])
		}
		seen[o.sentAt] = true
	}
	want := map[string]int{}
	for i := range n {
		want[string(body(i, make([]byte, 256)))] = i
	}
	for range n {
		select {
		case p := <-delivered:
			if _, ok := want[string(p)]; !ok {
				t.Fatalf("the subscriber got a body no POST sent: % x…", p[:min(len(p), 16)])
			}
			delete(want, string(p))
		case <-ctx.Done():
			t.Fatalf("the subscriber got %d of %d bodies", n-len(want), n)
		}
	}
	c := ex.Counters()
	t.Logf("%d POSTs of 256 B: %d B in %d datagrams sent, %d B in %d received", n, c.BytesSent, c.DatagramsSent, c.BytesReceived, c.DatagramsReceived)
	if c.BytesSent < n*256 || ex.Err() != nil {
		t.Errorf("%d bytes sent for %d 256-byte bodies; Err %v", c.BytesSent, n, ex.Err())
	}
	if cs := d.TLSState(); cs == nil || cs.NegotiatedProtocol != "h3" {
		t.Errorf("TLS state noted: %+v; want the h3 handshake's", cs)
	}
	if err := ex.Close(); err != nil || ex.Err() == nil || ex.Post(payload, 0, true) == nil {
		t.Errorf("after Close: Close %v, Err %v, and Post succeeded", err, ex.Err())
	}
}

// TestH3ErrorStatuses: the statuses the gateway refuses requests with arrive as they were sent:
// 400 and others from the static table, 401 and 413 as Huffman-coded literals (413 with the
// request stream stopped, as the gateway does for a body too large); the connection goes on.
func TestH3ErrorStatuses(t *testing.T) {
	env := startH3Env(t, gwhttp.Limits{MaxBodyBytes: 1000})
	for _, c := range []struct {
		name string
		edit func(*requestHead)
		size int
		want int
	}{
		{"bad QoS", func(h *requestHead) { h.path = "/topics/h3/bad?qos=3" }, 10, 400},
		{"wildcard topic", func(h *requestHead) { h.path = "/topics/h3/%23?qos=1" }, 10, 400},
		{"not Basic credentials", func(h *requestHead) { h.auth = "Bearer x" }, 10, 401},
		{"body too large", nil, 2000, 413},
	} {
		log := newH3Log()
		_, ex := env.open(t, 2, "h3/status", c.edit, log.on)
		if err := ex.Post(make([]byte, c.size), 1, true); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := log.wait(t, 1)[0]; got.status != c.want || got.err != nil {
			t.Errorf("%s: status %d, error %v; want %d", c.name, got.status, got.err, c.want)
		}
		if c.edit == nil { // the same connection still publishes
			if err := ex.Post(make([]byte, 10), 2, true); err != nil {
				t.Fatal(err)
			}
			if got := log.wait(t, 1)[1]; got.status != 204 || got.err != nil {
				t.Errorf("%s, then a good request: status %d, error %v", c.name, got.status, got.err)
			}
		}
	}
}

// TestH3CloseWithRequestsOutstanding: with the broker stopped, requests wait for their
// responses; Close gives each exactly one errClosed before it returns and nothing follows,
// called from outside or from within a responseFunc (the 413 of a body too large, answered
// while the others wait).
func TestH3CloseWithRequestsOutstanding(t *testing.T) {
	env := startH3Env(t, gwhttp.Limits{MaxBodyBytes: 1000})
	for _, inside := range []bool{false, true} {
		log := newH3Log()
		var ex exchanger
		var closeReturned atomic.Bool
		var lateErrors atomic.Int32
		on := func(sentAt int64, status int, err error) {
			if closeReturned.Load() {
				lateErrors.Add(1)
			}
			log.on(sentAt, status, err)
			if status == 413 {
				_ = ex.Close()
				closeReturned.Store(true)
			}
		}
		_, ex = env.open(t, 4, "h3/stall", nil, on)
		if err := syscall.Kill(env.broker.PID(), syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if err := ex.Post([]byte("x"), int64(i), true); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(300 * time.Millisecond) // the requests reach the gateway and wait for the broker
		if got := log.count(); got != 0 {
			t.Fatalf("inside %v: %d responses from a stopped broker", inside, got)
		}
		if inside {
			if err := ex.Post(make([]byte, 2000), 3, true); err != nil {
				t.Fatal(err)
			}
			log.wait(t, 1)
		} else {
			_ = ex.Close()
			closeReturned.Store(true)
		}
		time.Sleep(200 * time.Millisecond)
		_ = syscall.Kill(env.broker.PID(), syscall.SIGCONT)
		got := log.wait(t, 3)
		time.Sleep(200 * time.Millisecond)
		seen := map[int64]bool{}
		for _, o := range got[len(got)-3:] {
			if !errors.Is(o.err, errClosed) || seen[o.sentAt] {
				t.Errorf("inside %v: request %d ended with status %d, error %v (seen before %v); want errClosed once", inside, o.sentAt, o.status, o.err, seen[o.sentAt])
			}
			seen[o.sentAt] = true
		}
		if want := map[bool]int{false: 3, true: 4}[inside]; log.count() != want || lateErrors.Load() != 0 {
			t.Errorf("inside %v: %d responseFunc calls, %d after Close returned; want %d, 0", inside, log.count(), lateErrors.Load(), want)
		}
	}
}

// TestH3IdleGatewayEndsTheConnection: a gateway that closes idle connections (GOAWAY, then
// CONNECTION_CLOSE) makes Err non-nil, so the publisher knows to dial again, and Post refuses.
func TestH3IdleGatewayEndsTheConnection(t *testing.T) {
	env := startH3Env(t, gwhttp.Limits{IdleTimeout: 300 * time.Millisecond})
	log := newH3Log()
	_, ex := env.open(t, 1, "h3/idle", nil, log.on)
	if err := ex.Post([]byte("x"), 1, true); err != nil {
		t.Fatal(err)
	}
	if got := log.wait(t, 1)[0]; got.status != 204 {
		t.Fatalf("status %d, error %v", got.status, got.err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for ex.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("Err after the gateway's idle timeout: %v", ex.Err())
	if ex.Err() == nil || ex.Post([]byte("x"), 2, true) == nil {
		t.Errorf("5 s after a 300 ms idle timeout: Err %v, and Post was accepted", ex.Err())
	}
}

// TestH3GoAway: quic-go's HTTP/3 server shutting down gracefully sends GOAWAY; the connection
// then takes no new request (Err is errGone) while the request in progress gets its response.
func TestH3GoAway(t *testing.T) {
	bundle, srvTLS := certstest.Loopback(t)
	release := make(chan struct{})
	srv := &http3.Server{TLSConfig: http3.ConfigureTLSConfig(srvTLS), Handler: gohttp.HandlerFunc(func(w gohttp.ResponseWriter, r *gohttp.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		<-release
		w.WriteHeader(gohttp.StatusNoContent)
	})}
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(udp) }()
	t.Cleanup(func() { _ = srv.Close(); _ = udp.Close() })
	clientTLS, err := certs.ClientTLS(bundle.CACert, "127.0.0.1", "1.3")
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before srv.Close, which waits for the handler
	log := newH3Log()
	_, ex := (&h3Env{addr: udp.LocalAddr().String(), tls: clientTLS}).open(t, 2, "goaway", nil, log.on)
	if err := ex.Post([]byte("x"), 1, true); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the request reaches the handler
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		shut <- srv.Shutdown(ctx)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for ex.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !errors.Is(ex.Err(), errGone) || ex.Post([]byte("x"), 2, true) == nil {
		t.Fatalf("after GOAWAY: Err %v, and Post was accepted; want errGone and a refusal", ex.Err())
	}
	unblock()
	if got := log.wait(t, 1)[0]; got.status != 204 || got.err != nil || got.sentAt != 1 {
		t.Errorf("the request sent before GOAWAY: %+v; want its 204", got)
	}
	_ = ex.Close()
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

// TestQPACKStatus decodes every status the way quic-go's encoder and others may send it.
func TestQPACKStatus(t *testing.T) {
	section := func(lines ...[]byte) []byte {
		b := []byte{0, 0}
		for _, l := range lines {
			b = append(b, l...)
		}
		return b
	}
	other := appendQPACKLiteral(nil, 0, 92, "msgbench") // server: msgbench, before the status
	for st := 100; st <= 599; st++ {
		v := fmt.Sprint(st)
		forms := map[string][]byte{
			"name ref, plain":   append(appendQPACKInt(nil, 0x50, 4, qpackStatus103), append([]byte{3}, v...)...),
			"name ref, Huffman": append(appendQPACKInt(nil, 0x50, 4, qpackStatus103), huffmanLiteral(v)...),
			"literal name":      append(append(appendQPACKInt(nil, 0x20, 3, 7), ":status"...), huffmanLiteral(v)...),
			"Huffman name":      append(append(appendQPACKInt(nil, 0x28, 3, uint64(len(qpackStatusHuffman))), qpackStatusHuffman...), 3, v[0], v[1], v[2]),
		}
		for idx := range uint64(qpackStaticEntries) {
			if qpackStaticStatus(idx) == st {
				forms["indexed"] = appendQPACKIndexed(nil, idx)
			}
		}
		for name, line := range forms {
			if got, err := qpackStatus(section(other, line)); got != st || err != nil {
				t.Fatalf("%d %s (% x): %d, %v", st, name, line, got, err)
			}
		}
	}
	for name, p := range map[string][]byte{
		"no status":       section(other),
		"dynamic indexed": section([]byte{0x80}),
		"post-base":       section([]byte{0x10}),
		"insert count":    {1, 0, 0xd9},
		"truncated":       section([]byte{0x5f}),
		"two digits":      section(append(appendQPACKInt(nil, 0x50, 4, qpackStatus103), 2, '2', '0')),
	} {
		if st, err := qpackStatus(p); err == nil {
			t.Errorf("%s: status %d, no error", name, st)
		}
	}
}

// huffmanLiteral is a string literal forced to Huffman coding.
func huffmanLiteral(s string) []byte {
	return hpack.AppendHuffmanString(appendQPACKInt(nil, 0x80, 7, hpack.HuffmanEncodeLength(s)), s)
}

// BenchmarkH3Exchange is one HTTP/3 exchanger POSTing 256 B at QoS 1 closed loop through the
// gateway to a real Mosquitto, with 1 or 16 requests in flight. The gateway runs in a child
// process (alloc_test.go's TestMain), as for BenchmarkPublish, so allocs/op, B/op and a
// -memprofile are the client's alone; BenchmarkH3RoundTrip is quic-go's client doing the same.
func BenchmarkH3Exchange(b *testing.B) {
	env := h3BenchEnv(b)
	for _, inflight := range []int32{1, 16} {
		b.Run(fmt.Sprintf("inflight%d", inflight), func(b *testing.B) {
			window := make(chan struct{}, inflight)
			var ok atomic.Int64
			_, ex := env.open(b, inflight, "bench/h3", nil, func(_ int64, status int, _ error) {
				if status == 204 {
					ok.Add(1)
				}
				<-window
			})
			payload := make([]byte, 256)
			b.ReportAllocs()
			for b.Loop() {
				window <- struct{}{}
				if err := ex.Post(payload, 0, true); err != nil {
					b.Fatal(err)
				}
			}
			for range inflight {
				window <- struct{}{}
			}
			if ok.Load() != int64(b.N) {
				b.Fatalf("%d of %d responses were 204", ok.Load(), b.N)
			}
		})
	}
}

// BenchmarkH3RoundTrip is the path h3.go replaces, one request at a time: quic-go's
// http3.ClientConn.RoundTrip with an http.Request per message, the body read to its end.
func BenchmarkH3RoundTrip(b *testing.B) {
	env := h3BenchEnv(b)
	d := env.driver(b, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	qc, err := quicconn.Dial(ctx, d.cfg.Dialer(), d.cfg.Address, d.clientTLS.For("rt"), d.quic, false)
	if err != nil {
		b.Fatal(err)
	}
	defer qc.Close()
	cc := (&http3.Transport{}).NewClientConn(qc.Conn)
	u, _ := url.Parse("https://" + d.host + d.path("bench/h3"))
	hdr := gohttp.Header{"Content-Type": {"application/octet-stream"}}
	payload := make([]byte, 256)
	var body bytes.Reader
	b.ReportAllocs()
	for b.Loop() {
		body.Reset(payload)
		resp, err := cc.RoundTrip(&gohttp.Request{Method: gohttp.MethodPost, URL: u, Host: d.host, Header: hdr,
			Body: io.NopCloser(&body), ContentLength: int64(len(payload))})
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != gohttp.StatusNoContent {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}

// h3BenchEnv is the benchmarks' gateway and broker in a child process: this test binary run as
// alloc_test.go's TestMain does with MSGBENCH_TEST_GATEWAY set, which prints its addresses and
// CA.
func h3BenchEnv(b *testing.B) *h3Env {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MSGBENCH_TEST_GATEWAY=1")
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = proc.Stop(cmd, 5*time.Second) })
	var plain, secure string
	var ca []byte
	if _, err := fmt.Fscanf(stdout, "%s %s %x\n", &plain, &secure, &ca); err != nil {
		b.Fatalf("the gateway process: %v", err)
	}
	clientTLS, err := certs.ClientTLS(ca, "127.0.0.1", "1.3")
	if err != nil {
		b.Fatal(err)
	}
	return &h3Env{addr: secure, tls: clientTLS}
}
