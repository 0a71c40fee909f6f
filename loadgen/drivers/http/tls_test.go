package http_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/loadgen"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/loadgen/drivers/driverstest"
	"github.com/msgbench/msgbench/loadgen/drivers/http/roundtrip"
)

// TestResumptionWithoutKeepAlive: the one kind of run whose clients reconnect on their own is
// HTTP with keepAlive false (a connection per message). With spec.tls.resumption every
// connection after a publisher's first resumes that publisher's session, and the result counts
// them; without, none does. One message in flight per publisher, so each connection starts after
// the previous one brought its ticket. A closed loop of 50 messages each: the counts are the
// subject, not a rate (a connection and handshake per message at 100 msg/s was not sustained on
// a loaded machine).
func TestResumptionWithoutKeepAlive(t *testing.T) {
	g := startGateways(t)
	for _, v := range []struct {
		version v1alpha1.HTTPVersion
		resume  bool
	}{{v1alpha1.HTTP11, true}, {v1alpha1.HTTP11, false}, {v1alpha1.HTTP3, true}} {
		t.Run(fmt.Sprintf("http%s resumption=%v", v.version, v.resume), func(t *testing.T) {
			s := spec(v.version, v.version != v1alpha1.HTTP3, false, 1)
			s.Workload.Rate, s.Workload.Messages, s.Workload.Warmup.Duration = 0, 100, 0
			s.MQTT.Inflight = 1
			if s.TLS == nil {
				s.TLS = &v1alpha1.TLSSpec{}
			}
			s.TLS.Resumption = v.resume
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			res, err := loadgen.Run(ctx, g.options(s))
			cancel()
			if err != nil || res.Phase != "Succeeded" {
				t.Fatalf("%v %s: %s", err, res.Phase, res.Message)
			}
			w := res.Wire
			if w.TLSHandshakes == nil {
				t.Fatal("no handshake counts")
			}
			t.Logf("handshakes %d, resumed %d, 0-RTT %d, sent %d", *w.TLSHandshakes, *w.TLSResumed, *w.ZeroRTT, res.Sent)
			clients := int64(s.Workload.Publishers + s.Workload.Subscribers)
			if *w.TLSHandshakes < res.Sent {
				t.Errorf("%d handshakes for %d messages sent on a connection each", *w.TLSHandshakes, res.Sent)
			}
			want := int64(0)
			if v.resume {
				want = *w.TLSHandshakes - clients
			}
			if *w.TLSResumed != want || *w.ZeroRTT != 0 {
				t.Errorf("resumed %d, 0-RTT %d: want %d (all but each client's first), 0", *w.TLSResumed, *w.ZeroRTT, want)
			}
		})
	}
}

type nopHandler struct{}

func (nopHandler) Message([]byte)        {}
func (nopHandler) Completed(int64, bool) {}

// TestHTTP3ZeroRTTSubscribe: with spec.quic.zeroRTT an HTTP/3 subscriber that reconnects sends its
// GET in 0-RTT: through a link of 100 ms each way its connect (until the response headers, which
// follow the broker's SUBACK) takes 1 RTT instead of 2 (handshake, then GET). A publisher's POST
// is not idempotent and never rides in 0-RTT (quic-go's http3 sends only GET and HEAD early).
func TestHTTP3ZeroRTTSubscribe(t *testing.T) {
	if testing.Short() {
		t.Skip("round trips through a 200 ms link")
	}
	g := startGateways(t)
	link := roundtrip.Link{Up: 100 * time.Millisecond, Down: 100 * time.Millisecond}
	proxy, err := roundtrip.NewUDPProxy(g.secure.HTTP3Addr().String(), link)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	s := spec(v1alpha1.HTTP3, false, true, 1)
	s.QUIC = &v1alpha1.QUICSpec{ZeroRTT: true}
	drv, err := drivers.New(string(v1alpha1.ProtocolHTTP), drivers.Config{Group: driverstest.Group(t, s), Address: proxy.Addr(), TLS: g.clientTLS, Dial: roundtrip.Dialer(link),
		Now: func() int64 { return time.Now().UnixNano() }})
	if err != nil {
		t.Fatal(err)
	}
	rtt := link.RTT()
	connect := func(id string) time.Duration {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		start := time.Now()
		sess, err := drv.Connect(ctx, drivers.Client{ID: id, Role: drivers.Subscriber, Topic: "zr/" + id}, nopHandler{})
		took := time.Since(start)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		_ = sess.Close()
		return took
	}
	var problem error
	for attempt := range 3 {
		dev := fmt.Sprintf("dev-%d", attempt)
		full := connect(dev)
		time.Sleep(50 * time.Millisecond)
		zero := connect(dev)
		t.Logf("attempt %d: first %v (%.2f RTT), reconnect %v (%.2f RTT)", attempt, full, float64(full)/float64(rtt), zero, float64(zero)/float64(rtt))
		if full < 2*rtt || zero < rtt {
			t.Fatalf("faster than the round trips allow: %v, %v", full, zero)
		}
		problem = nil
		if full >= 2*rtt+rtt/2 || zero >= rtt+rtt/2 {
			problem = fmt.Errorf("first %v, reconnect %v: want 2 RTT and 1 RTT (+ 0.5 of slack) on a %v link", full, zero, rtt)
			continue
		}
		break
	}
	if problem != nil {
		t.Error(problem)
	}
	// A 0-RTT connection's handshake completes (and is counted) after Connect returned.
	time.Sleep(200 * time.Millisecond)
	if st := drv.(drivers.TLSReporter).TLSStats(); st.ZeroRTT == 0 || st.ZeroRTT != st.Resumed || st.Handshakes != 2*st.Resumed {
		t.Errorf("stats %+v: want every other connection resumed with 0-RTT", st)
	}
}
