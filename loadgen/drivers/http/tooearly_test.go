package http_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/certs/certstest"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/loadgen/drivers/driverstest"
	"github.com/msgbench/msgbench/loadgen/drivers/http/roundtrip"
)

type quicConnKey struct{}

// strictFront is an HTTP/3 reverse proxy in front of the gateway (quic-go's http3.Server, then
// net/http's ReverseProxy to the gateway's HTTPS port) that, like a CDN refusing all early data,
// answers every request that arrives before its QUIC handshake completed 425 Too Early — a GET
// too, which msgbench's gateway serves at once.
type strictFront struct {
	srv      *http3.Server
	pc       net.PacketConn
	tooEarly atomic.Int64
	served   atomic.Int64
}

func startStrictFront(t *testing.T, g *gateways) (*strictFront, *certs.Bundle) {
	t.Helper()
	bundle, srvTLS := certstest.Loopback(t)
	target, _ := url.Parse("https://" + g.secure.Addr().String())
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = &http.Transport{TLSClientConfig: g.clientTLS.Clone(), ForceAttemptHTTP2: true}
	rp.FlushInterval = -1 // the subscription stream, frame by frame
	f := &strictFront{}
	f.srv = &http3.Server{
		TLSConfig:  http3.ConfigureTLSConfig(srvTLS.Clone()),
		QUICConfig: &quic.Config{Allow0RTT: true},
		ConnContext: func(ctx context.Context, c *quic.Conn) context.Context {
			return context.WithValue(ctx, quicConnKey{}, c)
		},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Value(quicConnKey{}).(*quic.Conn).HandshakeComplete():
			default:
				f.tooEarly.Add(1)
				http.Error(w, "too early", http.StatusTooEarly)
				return
			}
			f.served.Add(1)
			rp.ServeHTTP(w, r)
		}),
	}
	var err error
	if f.pc, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	go func() { _ = f.srv.Serve(f.pc) }()
	t.Cleanup(func() { _ = f.srv.Close(); _ = f.pc.Close() })
	return f, bundle
}

type messages chan []byte

func (m messages) Message(p []byte)    { m <- append([]byte(nil), p...) }
func (messages) Completed(int64, bool) {}

// TestHTTP3SubscriberRetriesTooEarly (RFC 8470 §5.2): a subscriber with spec.quic.zeroRTT sends
// its GET in 0-RTT when it reconnects; a server that will not act on early data answers 425, and
// the driver sends the GET again once the handshake is complete — once, not in early data (quic-go's
// client does not retry by itself) — and the subscription works. The server is a strict HTTP/3
// front proxy before the real gateway, through a link of 100 ms each way so that the 0-RTT GET
// arrives a round trip before the client's Finished.
func TestHTTP3SubscriberRetriesTooEarly(t *testing.T) {
	if testing.Short() {
		t.Skip("round trips through a 200 ms link")
	}
	g := startGateways(t)
	front, bundle := startStrictFront(t, g)
	clientTLS, err := certs.ClientTLS(bundle.CACert, "127.0.0.1", "1.3")
	if err != nil {
		t.Fatal(err)
	}
	link := roundtrip.Link{Up: 100 * time.Millisecond, Down: 100 * time.Millisecond}
	proxy, err := roundtrip.NewUDPProxy(front.pc.LocalAddr().String(), link)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	s := spec(v1alpha1.HTTP3, false, true, 1)
	s.QUIC = &v1alpha1.QUICSpec{ZeroRTT: true}
	drv, err := drivers.New(string(v1alpha1.ProtocolHTTP), drivers.Config{Group: driverstest.Group(t, s), Address: proxy.Addr(), TLS: clientTLS,
		Dial: roundtrip.Dialer(link), Now: func() int64 { return time.Now().UnixNano() }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	connect := func(topic string, h drivers.Handler) drivers.Session {
		sess, err := drv.Connect(ctx, drivers.Client{ID: "dev-0", Role: drivers.Subscriber, Topic: topic}, h)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		return sess
	}
	// The first connection takes the full handshake (its GET waits for it) and brings a ticket.
	first := connect("te/first", nopHandler{})
	time.Sleep(100 * time.Millisecond)
	_ = first.Close()
	if n := front.tooEarly.Load(); n != 0 {
		t.Fatalf("%d requests too early on the first connection, which had no ticket", n)
	}
	// The reconnect's GET rides in 0-RTT, gets 425, and is retried after the handshake.
	got := make(messages, 4)
	sess := connect("te/retried", got)
	defer sess.Close()
	if n := front.tooEarly.Load(); n != 1 {
		t.Fatalf("the front answered %d requests 425, want the one 0-RTT GET", n)
	}
	if n := front.served.Load(); n != 2 {
		t.Fatalf("the front served %d GETs, want 2 (the first connection's and the retry)", n)
	}
	// The retried subscription is the gateway's: a publish reaches it.
	h3 := &http3.Transport{TLSClientConfig: g.clientTLS.Clone()}
	defer h3.Close()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+g.secure.HTTP3Addr().String()+"/topics/te/retried", strings.NewReader("after 425"))
	resp, err := h3.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("publish: %s", resp.Status)
	}
	select {
	case p := <-got:
		if string(p) != "after 425" {
			t.Fatalf("got %q", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the retried subscription received nothing")
	}
	if st := drv.(drivers.TLSReporter).TLSStats(); st.ZeroRTT != 1 || st.Handshakes != 2 {
		t.Errorf("stats %+v: want 2 handshakes, the second in 0-RTT", st)
	}
}
