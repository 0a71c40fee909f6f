package http_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/qpack"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"github.com/quic-go/quic-go/quicvarint"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/gateway"
	gwhttp "github.com/msgbench/msgbench/gateway/http"
	"github.com/msgbench/msgbench/gateway/http/stream"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/certs/certstest"
	"github.com/msgbench/msgbench/loadgen/drivers/http/roundtrip"
)

// earlyEnv is a TLS gateway (HTTPS and HTTP/3) whose groups set spec.http.acceptEarlyPublishes
// as asked, in front of a real Mosquitto, and a 100 ms-each-way link to its HTTP/3 port: a
// client's 0-RTT request reaches the gateway a whole round trip (200 ms) before the client's
// Finished does, so the gateway sees it before the handshake completes however busy the machine.
type earlyEnv struct {
	gw        *gwhttp.Gateway
	clientTLS *tls.Config
	caPEM     []byte              // the CA of the gateway's certificate
	link      *roundtrip.UDPProxy // to the gateway's HTTP/3 port
}

func startEarly(t *testing.T, accept bool) *earlyEnv {
	t.Helper()
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{MaxInflight: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	bundle, srv := certstest.Loopback(t)
	spec := &v1alpha1.MessagingBenchmarkSpec{Protocol: v1alpha1.ProtocolHTTP, QoS: 1,
		MQTT: v1alpha1.MQTTSpec{Version: v1alpha1.MQTT311, Inflight: 20},
		HTTP: v1alpha1.HTTPSpec{Version: v1alpha1.HTTP3, AcceptEarlyPublishes: accept},
		QUIC: &v1alpha1.QUICSpec{ZeroRTT: true}}
	groups := gatewayGroups(t, spec)
	if o := groups[0].GatewayOptions; o == nil || o.AcceptEarlyPublishes != accept {
		t.Fatalf("the plan's gateway options %+v do not carry acceptEarlyPublishes %v", o, accept)
	}
	e := &earlyEnv{caPEM: bundle.CACert}
	if e.gw, err = gwhttp.Start(context.Background(), gateway.Options{Listen: "127.0.0.1:0", Broker: b.Addr, Groups: groups, TLS: srv}, gwhttp.Limits{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.gw.Close() })
	if e.clientTLS, err = certs.ClientTLS(bundle.CACert, "127.0.0.1", "1.3"); err != nil {
		t.Fatal(err)
	}
	link := roundtrip.Link{Up: 100 * time.Millisecond, Down: 100 * time.Millisecond}
	if e.link, err = roundtrip.NewUDPProxy(e.gw.HTTP3Addr().String(), link); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.link.Close() })
	return e
}

// subscribe opens a subscription over HTTPS on TCP (no early data) and returns its frames.
func (e *earlyEnv) subscribe(t *testing.T, ctx context.Context, topic string) *stream.Reader {
	t.Helper()
	var p http.Protocols
	p.SetHTTP2(true)
	c := &http.Client{Transport: &http.Transport{Protocols: &p, TLSClientConfig: e.clientTLS.Clone()}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+e.gw.Addr().String()+"/topics/"+topic+"?qos=1", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("subscribe %s: %s", topic, resp.Status)
	}
	return stream.NewReader(resp.Body, 1<<20)
}

// zeroRTTClient is quic-go's HTTP/3 client holding a session ticket of the gateway, so that its
// next connection resumes and may send requests in 0-RTT.
type zeroRTTClient struct {
	tls  *tls.Config
	addr string
}

func (e *earlyEnv) zeroRTTClient(t *testing.T, ctx context.Context) *zeroRTTClient {
	t.Helper()
	conf := e.clientTLS.Clone()
	conf.NextProtos = []string{http3.NextProtoH3}
	conf.ClientSessionCache = tls.NewLRUClientSessionCache(4)
	c := &zeroRTTClient{tls: conf, addr: e.link.Addr()}
	// A first connection with a full handshake brings the ticket (a NewSessionTicket after the
	// handshake: a request answered after it means the ticket is in).
	conn, cc := c.dial(t, ctx)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+c.addr+"/topics/ticket", strings.NewReader("x"))
	resp, err := cc.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("a POST after the handshake: %s, want 204", resp.Status)
	}
	if conn.ConnectionState().Used0RTT {
		t.Fatal("the first connection used 0-RTT without a ticket")
	}
	_ = conn.CloseWithError(0, "")
	return c
}

// dial opens a connection that may send 0-RTT data at once (with a ticket).
func (c *zeroRTTClient) dial(t *testing.T, ctx context.Context) (*quic.Conn, *http3.ClientConn) {
	t.Helper()
	conn, err := quic.DialAddrEarly(ctx, c.addr, c.tls, &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.CloseWithError(0, "") })
	return conn, (&http3.Transport{}).NewClientConn(conn)
}

// earlyPost sends a POST with body in 0-RTT on a new resumed connection — what quic-go's
// RoundTrip never does (it holds every request but GET_0RTT and HEAD_0RTT until the handshake
// completes) and a third-party client may: the HTTP/3 connection is quic-go's, the request's
// frames (QPACK by quic-go's encoder) go on a request stream before the handshake is done. It
// returns the response's status and body, and checks that the connection did use 0-RTT.
func (c *zeroRTTClient) earlyPost(t *testing.T, ctx context.Context, topic string, body []byte) (int, string) {
	t.Helper()
	conn, _ := c.dial(t, ctx) // the ClientConn opens the control stream with its SETTINGS
	select {
	case <-conn.HandshakeComplete():
		t.Fatal("the handshake completed before the request was sent: not 0-RTT")
	default:
	}
	str, err := conn.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	var fields bytes.Buffer
	enc := qpack.NewEncoder(&fields)
	for _, f := range [][2]string{{":method", "POST"}, {":scheme", "https"}, {":authority", c.addr}, {":path", "/topics/" + topic},
		{"content-length", strconv.Itoa(len(body))}} {
		_ = enc.WriteField(qpack.HeaderField{Name: f[0], Value: f[1]})
	}
	b := quicvarint.Append(quicvarint.Append(nil, 0x1), uint64(fields.Len())) // HEADERS
	b = append(b, fields.Bytes()...)
	b = quicvarint.Append(quicvarint.Append(b, 0x0), uint64(len(body))) // DATA
	b = append(b, body...)
	if _, err := str.Write(b); err != nil {
		t.Fatal(err)
	}
	_ = str.Close()
	_ = str.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := quicvarint.NewReader(str)
	status, msg := 0, ""
	for {
		typ, err := quicvarint.Read(r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n, err := quicvarint.Read(r)
		if err != nil {
			t.Fatal(err)
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(r, p); err != nil {
			t.Fatal(err)
		}
		switch {
		case typ == 0x1 && status == 0:
			decode := qpack.NewDecoder().Decode(p)
			for {
				f, err := decode()
				if err != nil {
					break
				}
				if f.Name == ":status" {
					status, _ = strconv.Atoi(f.Value)
				}
			}
		case typ == 0x0:
			msg += string(p)
		}
	}
	<-conn.HandshakeComplete()
	if !conn.ConnectionState().Used0RTT {
		t.Fatal("the gateway refused 0-RTT: the test would prove nothing")
	}
	return status, msg
}

// next reads the subscription's next message, or fails after a while.
func next(t *testing.T, frames *stream.Reader) []byte {
	t.Helper()
	p, ok := poll(frames, 10*time.Second)
	if !ok {
		t.Fatal("no message within 10 s")
	}
	return p
}

// poll reads the subscription's next message within wait (ok false: none, or the stream ended).
// A read still waiting when it gives up takes the next message, so poll is the last read.
func poll(frames *stream.Reader, wait time.Duration) ([]byte, bool) {
	ch := make(chan []byte, 1)
	go func() {
		p, err := frames.Next()
		if err != nil {
			p = nil
		}
		ch <- append([]byte(nil), p...)
	}()
	select {
	case p := <-ch:
		return p, p != nil
	case <-time.After(wait):
		return nil, false
	}
}

// TestZeroRTTPublishTooEarly (RFC 8470): a POST that quic-go's HTTP/3 client sends in 0-RTT, on a
// resumed connection before its handshake completes, is answered 425 Too Early and not published
// (it could be a replay); the same POST once the handshake is done is published. A GET in 0-RTT
// (a subscription, as msgbench's own subscribers send it with spec.quic.zeroRTT) is served at
// once. With spec.http.acceptEarlyPublishes the 0-RTT POST is published.
func TestZeroRTTPublishTooEarly(t *testing.T) {
	if testing.Short() {
		t.Skip("round trips through a 200 ms link")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	t.Run("default", func(t *testing.T) {
		e := startEarly(t, false)
		frames := e.subscribe(t, ctx, "early/default")
		c := e.zeroRTTClient(t, ctx)

		status, msg := c.earlyPost(t, ctx, "early/default", []byte("replayable"))
		if status != http.StatusTooEarly {
			t.Fatalf("0-RTT POST: %d %s, want 425 Too Early", status, msg)
		}
		if !strings.Contains(msg, "RFC 8470") {
			t.Errorf("425's body %q does not say why", msg)
		}
		if n := e.gw.TooEarly(); n != 1 {
			t.Errorf("the gateway counted %d requests too early, want 1", n)
		}

		// The same client's GET in 0-RTT, on another resumed connection: served before the
		// handshake completes.
		conn, cc := c.dial(t, ctx)
		req, _ := http.NewRequestWithContext(ctx, http3.MethodGet0RTT, "https://"+c.addr+"/topics/early/default?qos=1", nil)
		resp, err := cc.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != stream.ContentType {
			t.Fatalf("0-RTT GET: %s %v, want 200 and a stream", resp.Status, resp.Header)
		}
		<-conn.HandshakeComplete()
		if !conn.ConnectionState().Used0RTT {
			t.Fatal("the GET's connection did not use 0-RTT")
		}
		early := stream.NewReader(resp.Body, 1<<20)

		// Nothing was published by the 425: the first message both subscribers see is the POST
		// sent after the handshake (quic-go's RoundTrip waits for it).
		req, _ = http.NewRequestWithContext(ctx, http.MethodPost, "https://"+c.addr+"/topics/early/default", strings.NewReader("after the handshake"))
		resp2, err := cc.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp2.Body.Close()
		if resp2.StatusCode != http.StatusNoContent {
			t.Fatalf("POST after the handshake: %s, want 204", resp2.Status)
		}
		for _, f := range []*stream.Reader{frames, early} {
			if got := next(t, f); string(got) != "after the handshake" {
				t.Fatalf("subscriber got %q first, want the POST sent after the handshake (the 0-RTT one was published)", got)
			}
		}
	})

	t.Run("acceptEarlyPublishes", func(t *testing.T) {
		e := startEarly(t, true)
		frames := e.subscribe(t, ctx, "early/accept")
		c := e.zeroRTTClient(t, ctx)
		status, msg := c.earlyPost(t, ctx, "early/accept", []byte("accepted early"))
		if status != http.StatusNoContent {
			t.Fatalf("0-RTT POST with acceptEarlyPublishes: %d %s, want 204", status, msg)
		}
		if got := next(t, frames); string(got) != "accepted early" {
			t.Fatalf("subscriber got %q", got)
		}
		if n := e.gw.TooEarly(); n != 0 {
			t.Errorf("%d requests answered too early with acceptEarlyPublishes", n)
		}
	})
}

// TestEarlyDataHeader (RFC 8470 §5.1): a proxy that received a request in TLS early data forwards
// it with "Early-Data: 1". Over any HTTP version a POST so marked gets 425 (the proxy or its
// client retries once its handshake is done) and is not published; a GET so marked is served; with
// spec.http.acceptEarlyPublishes the POST is published.
func TestEarlyDataHeader(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, accept := range []bool{false, true} {
		t.Run(fmt.Sprintf("acceptEarlyPublishes=%v", accept), func(t *testing.T) {
			e := startEarly(t, accept)
			topic := fmt.Sprintf("early/header/%v", accept)
			frames := e.subscribe(t, ctx, topic)
			var p http.Protocols
			p.SetHTTP1(true)
			p.SetHTTP2(true)
			h3 := &http3.Transport{TLSClientConfig: e.clientTLS.Clone()}
			defer h3.Close()
			for _, c := range []struct {
				name string
				rt   http.RoundTripper
				base string
			}{
				{"HTTP/2", &http.Transport{Protocols: &p, TLSClientConfig: e.clientTLS.Clone()}, "https://" + e.gw.Addr().String()},
				{"HTTP/3", h3, "https://" + e.gw.HTTP3Addr().String()},
			} {
				for _, value := range []string{"1", "1, 1"} {
					body := c.name + " Early-Data: " + value
					req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/topics/"+topic, bytes.NewReader([]byte(body)))
					req.Header.Set(gwhttp.EarlyDataHeader, value)
					resp, err := c.rt.RoundTrip(req)
					if err != nil {
						t.Fatal(err)
					}
					_ = resp.Body.Close()
					want := http.StatusTooEarly
					if accept {
						want = http.StatusNoContent
					}
					if resp.StatusCode != want {
						t.Fatalf("%s: %s, want %d", body, resp.Status, want)
					}
					if accept {
						if got := next(t, frames); string(got) != body {
							t.Fatalf("got %q, want %q", got, body)
						}
					}
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/topics/"+topic+"?qos=1", nil)
				req.Header.Set(gwhttp.EarlyDataHeader, "1")
				resp, err := c.rt.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("%s GET with Early-Data: 1: %s, want 200", c.name, resp.Status)
				}
				// Without the header (and after the handshake) a POST is published as always.
				body := c.name + " not early"
				req, _ = http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/topics/"+topic, strings.NewReader(body))
				if resp, err = c.rt.RoundTrip(req); err != nil {
					t.Fatal(err)
				}
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusNoContent {
					t.Fatalf("%s POST: %s", c.name, resp.Status)
				}
				if got := next(t, frames); string(got) != body {
					t.Fatalf("got %q, want %q (a POST answered 425 was published)", got, body)
				}
			}
			if want := map[bool]uint64{false: 4, true: 0}[accept]; e.gw.TooEarly() != want {
				t.Errorf("the gateway counted %d requests too early, want %d", e.gw.TooEarly(), want)
			}
		})
	}
}
