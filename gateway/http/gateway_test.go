package http_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/gateway"
	gwhttp "github.com/msgbench/msgbench/gateway/http"
	"github.com/msgbench/msgbench/gateway/http/stream"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/certs/certstest"
	"github.com/msgbench/msgbench/plan"
)

// gatewayGroups are the groups of spec's compiled plan that the http gateway serves.
func gatewayGroups(t testing.TB, spec *v1alpha1.MessagingBenchmarkSpec) []plan.Group {
	t.Helper()
	p, err := plan.Compile(spec, plan.Admitted)
	if err != nil {
		t.Fatal(err)
	}
	g := p.GatewayGroups("http")
	if len(g) == 0 {
		t.Fatalf("no http gateway group in the plan of %+v", spec)
	}
	return g
}

type env struct {
	broker    *mosquitto.Process
	plain     *gwhttp.Gateway // cleartext HTTP/1.1 + h2c
	secure    *gwhttp.Gateway // HTTPS + HTTP/3
	clientTLS *tls.Config
}

func start(t *testing.T, l gwhttp.Limits) *env {
	t.Helper()
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{MaxInflight: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	bundle, srv := certstest.Loopback(t)
	spec := &v1alpha1.MessagingBenchmarkSpec{Protocol: v1alpha1.ProtocolHTTP, QoS: 1, MQTT: v1alpha1.MQTTSpec{Version: v1alpha1.MQTT311, Inflight: 20}}
	groups := gatewayGroups(t, spec)
	e := &env{broker: b}
	if e.plain, err = gwhttp.Start(context.Background(), gateway.Options{Listen: "127.0.0.1:0", Broker: b.Addr, Groups: groups}, l); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.plain.Close() })
	if e.secure, err = gwhttp.Start(context.Background(), gateway.Options{Listen: "127.0.0.1:0", Broker: b.Addr, Groups: groups, TLS: srv}, l); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.secure.Close() })
	if e.clientTLS, err = certs.ClientTLS(bundle.CACert, "127.0.0.1", "1.3"); err != nil {
		t.Fatal(err)
	}
	return e
}

// client is an HTTP client of one version and its base URL.
func (e *env) client(t *testing.T, version string) (*http.Client, string) {
	var p http.Protocols
	switch version {
	case "1.1":
		p.SetHTTP1(true)
		return &http.Client{Transport: &http.Transport{Protocols: &p}}, "http://" + e.plain.Addr().String()
	case "2":
		p.SetUnencryptedHTTP2(true)
		return &http.Client{Transport: &http.Transport{Protocols: &p}}, "http://" + e.plain.Addr().String()
	case "1.1-tls":
		p.SetHTTP1(true)
		return &http.Client{Transport: &http.Transport{Protocols: &p, TLSClientConfig: e.clientTLS.Clone()}}, "https://" + e.secure.Addr().String()
	case "2-tls":
		p.SetHTTP2(true)
		return &http.Client{Transport: &http.Transport{Protocols: &p, TLSClientConfig: e.clientTLS.Clone()}}, "https://" + e.secure.Addr().String()
	case "3":
		tr := &http3.Transport{TLSClientConfig: e.clientTLS.Clone()}
		t.Cleanup(func() { _ = tr.Close() })
		return &http.Client{Transport: tr}, "https://" + e.secure.HTTP3Addr().String()
	}
	t.Fatalf("version %s", version)
	return nil, ""
}

// TestPublishSubscribe: for every HTTP version and QoS, a streaming GET receives what a POST
// published, byte for byte (binary payloads with CR, LF, NUL), and the POST answers 204 only
// after the broker accepted the message.
func TestPublishSubscribe(t *testing.T) {
	e := start(t, gwhttp.Limits{})
	for _, version := range []string{"1.1", "2", "1.1-tls", "2-tls", "3"} {
		c, base := e.client(t, version)
		for qos := 0; qos <= 2; qos++ {
			topic := fmt.Sprintf("it/%s/%d", version, qos)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/topics/"+topic+fmt.Sprintf("?qos=%d", qos), nil)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatalf("%s qos %d: subscribe: %v", version, qos, err)
			}
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != stream.ContentType || resp.Header.Get(gwhttp.QoSHeader) != fmt.Sprint(qos) {
				t.Fatalf("%s qos %d: subscribe answered %s %v", version, qos, resp.Status, resp.Header)
			}
			wantProto := map[string]int{"1.1": 1, "2": 2, "1.1-tls": 1, "2-tls": 2, "3": 3}[version]
			if resp.ProtoMajor != wantProto {
				t.Errorf("%s: response over HTTP/%d", version, resp.ProtoMajor)
			}
			frames := stream.NewReader(resp.Body, 1<<20)
			for i, payload := range [][]byte{{0, 0, 0, 1, 0xff, '\r', '\n', 0, 'x'}, bytes.Repeat([]byte{7}, 70_000), {}} {
				preq, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/topics/"+topic, bytes.NewReader(payload))
				preq.Header.Set(gwhttp.QoSHeader, fmt.Sprint(qos))
				presp, err := c.Do(preq)
				if err != nil {
					t.Fatalf("%s qos %d: publish: %v", version, qos, err)
				}
				_, _ = io.Copy(io.Discard, presp.Body)
				_ = presp.Body.Close()
				if presp.StatusCode != http.StatusNoContent {
					t.Fatalf("%s qos %d: publish answered %s", version, qos, presp.Status)
				}
				got, err := frames.Next()
				if err != nil || !bytes.Equal(got, payload) {
					t.Fatalf("%s qos %d message %d: got %d bytes (%v), want %d", version, qos, i, len(got), err, len(payload))
				}
			}
			cancel()
			_ = resp.Body.Close()
		}
	}
}

// rawRequest sends raw bytes to the cleartext listener and returns the status code of the answer.
func rawRequest(t *testing.T, addr, request string) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, request); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%q: %v", request, err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// TestMalformedRequests: every bad request gets a clear 4xx and the gateway keeps serving.
func TestMalformedRequests(t *testing.T) {
	e := start(t, gwhttp.Limits{MaxBodyBytes: 1000})
	addr := e.plain.Addr().String()
	post := func(path, headers, body string) string {
		return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n%s\r\n%s", path, len(body), headers, body)
	}
	for _, tc := range []struct {
		name, request string
		want          int
	}{
		{"not under /topics", post("/other", "", "x"), 404},
		{"empty topic", post("/topics/", "", "x"), 400},
		{"wildcard +", post("/topics/a/+/b", "", "x"), 400},
		{"wildcard # escaped", post("/topics/a/%23", "", "x"), 400},
		{"NUL escaped", post("/topics/a%00b", "", "x"), 400},
		{"invalid UTF-8", post("/topics/%ff%fe", "", "x"), 400},
		{"QoS 3 in header", post("/topics/a", "Mqtt-Qos: 3\r\n", "x"), 400},
		{"QoS not a number", post("/topics/a?qos=one", "", "x"), 400},
		{"bad query", post("/topics/a?qos=%zz", "", "x"), 400},
		{"PUT", "PUT /topics/a HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 405},
		{"DELETE", "DELETE /topics/a HTTP/1.1\r\nHost: x\r\n\r\n", 405},
		{"bearer token", post("/topics/a", "Authorization: Bearer abc\r\n", "x"), 401},
		{"basic not base64", post("/topics/a", "Authorization: Basic !!!\r\n", "x"), 401},
		{"basic without colon", post("/topics/a", "Authorization: Basic dXNlcg==\r\n", "x"), 401},
		{"declared too large", "POST /topics/a HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\n\r\n", 413},
		{"chunked too large", "POST /topics/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n7d0\r\n" + strings.Repeat("a", 2000) + "\r\n0\r\n\r\n", 413},
		{"garbage request line", "THIS IS NOT AN HTTP REQUEST LINE\r\n\r\n", 400},
		{"huge header", "GET /topics/a HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("b", 64<<10) + "\r\n\r\n", 431},
		{"chunked within limit", "POST /topics/ok HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", 204},
		{"exactly the limit", post("/topics/ok", "", strings.Repeat("z", 1000)), 204},
	} {
		if got := rawRequest(t, addr, tc.request); got != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, got, tc.want)
		}
	}
	select {
	case <-e.plain.Done():
		t.Fatal("gateway stopped")
	default:
	}
	if got := rawRequest(t, addr, post("/topics/still/alive", "", "x")); got != 204 {
		t.Errorf("after the bad requests a good publish got %d", got)
	}
}

// TestBounds: a full subscription table answers 503, a full publish table 429 (the broker is
// paused so the first publish waits for its PUBACK).
func TestBounds(t *testing.T) {
	e := start(t, gwhttp.Limits{MaxSubscriptions: 1, MaxPublishes: 1})
	c, base := e.client(t, "1.1")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	get := func() *http.Response {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/topics/bounded", nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first := get()
	defer first.Body.Close()
	second := get()
	_ = second.Body.Close()
	if second.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("second subscription: %s, want 503", second.Status)
	}

	if err := syscall.Kill(e.broker.PID(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(e.broker.PID(), syscall.SIGCONT) }()
	slow := make(chan int, 1)
	go func() {
		resp, err := c.Post(base+"/topics/bounded?qos=1", "application/octet-stream", strings.NewReader("one"))
		if err != nil {
			slow <- 0
			return
		}
		_ = resp.Body.Close()
		slow <- resp.StatusCode
	}()
	deadline := time.Now().Add(5 * time.Second)
	got := 0
	for time.Now().Before(deadline) && got != http.StatusTooManyRequests {
		time.Sleep(20 * time.Millisecond)
		resp, err := c.Post(base+"/topics/bounded?qos=1", "application/octet-stream", strings.NewReader("two"))
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		got = resp.StatusCode
	}
	if got != http.StatusTooManyRequests {
		t.Errorf("publish while another waits for the paused broker: %d, want 429", got)
	}
	_ = syscall.Kill(e.broker.PID(), syscall.SIGCONT)
	if s := <-slow; s != http.StatusNoContent {
		t.Errorf("the waiting publish ended with %d once the broker resumed, want 204", s)
	}
}

// TestHTTP3NeedsTLS: spec.http.version 3 without a certificate is refused with a clear error.
func TestHTTP3NeedsTLS(t *testing.T) {
	spec := &v1alpha1.MessagingBenchmarkSpec{Protocol: v1alpha1.ProtocolHTTP, HTTP: v1alpha1.HTTPSpec{Version: v1alpha1.HTTP3}}
	_, err := gwhttp.Start(context.Background(), gateway.Options{Listen: "127.0.0.1:0", Broker: "127.0.0.1:1", Groups: gatewayGroups(t, spec)}, gwhttp.Limits{})
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("HTTP/3 without TLS: %v", err)
	}
}

// TestCredentials: with a broker that requires a password, Basic credentials in the request
// reach the broker's CONNECT: right ones publish and subscribe, wrong or missing ones get 401.
func TestCredentials(t *testing.T) {
	dir := t.TempDir()
	pwfile := dir + "/passwd"
	if out, err := exec.Command("mosquitto_passwd", "-c", "-b", pwfile, "sensor7", "s3cret").CombinedOutput(); err != nil {
		t.Skipf("mosquitto_passwd: %v %s", err, out)
	}
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{Access: map[string]string{"password_file": pwfile, "allow_anonymous": "false"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	gw, err := gwhttp.Start(context.Background(), gateway.Options{Listen: "127.0.0.1:0", Broker: b.Addr}, gwhttp.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Close() })
	base := "http://" + gw.Addr().String() + "/topics/secured"
	do := func(method, user, pass string) *http.Response {
		req, _ := http.NewRequest(method, base, strings.NewReader("payload"))
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	sub := do(http.MethodGet, "sensor7", "s3cret")
	defer sub.Body.Close()
	if sub.StatusCode != http.StatusOK {
		t.Fatalf("subscribe with the right password: %s", sub.Status)
	}
	for _, tc := range []struct {
		user, pass string
		want       int
	}{{"", "", 401}, {"sensor7", "wrong", 401}, {"nobody", "s3cret", 401}, {"sensor7", "s3cret", 204}} {
		resp := do(http.MethodPost, tc.user, tc.pass)
		_ = resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("publish as %q/%q: %s, want %d", tc.user, tc.pass, resp.Status, tc.want)
		}
	}
	got, err := stream.NewReader(sub.Body, 1024).Next()
	if err != nil || string(got) != "payload" {
		t.Errorf("subscriber got %q, %v", got, err)
	}
	if resp := do(http.MethodGet, "sensor7", "wrong"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("subscribe with a wrong password: %s", resp.Status)
		_ = resp.Body.Close()
	} else {
		_ = resp.Body.Close()
	}
}

// TestErrorsOverEveryVersion: the same bad requests get the same answers over HTTP/2 and
// HTTP/3 as over HTTP/1.1, and random datagrams at the HTTP/3 port change nothing.
func TestErrorsOverEveryVersion(t *testing.T) {
	e := start(t, gwhttp.Limits{MaxBodyBytes: 100})
	for _, version := range []string{"2", "2-tls", "3"} {
		c, base := e.client(t, version)
		for _, tc := range []struct {
			method, path string
			body         string
			want         int
		}{
			{http.MethodPut, "/topics/a", "x", 405},
			{http.MethodPost, "/topics/a/%2B", "x", 400},
			{http.MethodPost, "/topics/a?qos=7", "x", 400},
			{http.MethodPost, "/nope", "x", 404},
			{http.MethodPost, "/topics/a", strings.Repeat("y", 101), 413},
			{http.MethodPost, "/topics/a", strings.Repeat("y", 100), 204},
		} {
			req, _ := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
			resp, err := c.Do(req)
			if err != nil {
				t.Fatalf("%s %s %s: %v", version, tc.method, tc.path, err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("HTTP/%s %s %s: %d, want %d", version, tc.method, tc.path, resp.StatusCode, tc.want)
			}
		}
	}
	udp, err := net.Dial("udp", e.secure.HTTP3Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	junk := make([]byte, 1500)
	for i := range 200 {
		for j := range junk {
			junk[j] = byte(i*31 + j*7)
		}
		junk[0] = byte(i) // long and short header forms, every version field
		_, _ = udp.Write(junk[:1+i*7%1400])
	}
	c, base := e.client(t, "3")
	resp, err := c.Post(base+"/topics/after-junk", "application/octet-stream", strings.NewReader("ok"))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("HTTP/3 after junk datagrams: %s", resp.Status)
	}
}

// The limits grow with every group the gateway serves, and what it holds once (the MQTT version
// of its broker connections) must agree between them.
func TestLimitsAndSettingsOfSeveralGroups(t *testing.T) {
	spec := func(publishers, subscribers, inflight, payload int32, version v1alpha1.MQTTVersion) *v1alpha1.MessagingBenchmarkSpec {
		return &v1alpha1.MessagingBenchmarkSpec{Protocol: v1alpha1.ProtocolHTTP, QoS: 1,
			MQTT:     v1alpha1.MQTTSpec{Version: version, Inflight: inflight},
			Workload: v1alpha1.WorkloadSpec{Publishers: publishers, Subscribers: subscribers, Topics: 1, PayloadBytes: payload}}
	}
	a := gatewayGroups(t, spec(3000, 6000, 2, 2<<20, v1alpha1.MQTT311))[0]
	b := gatewayGroups(t, spec(1000, 5000, 20, 16, v1alpha1.MQTT311))[0]
	b.Name = "meters"
	l := gwhttp.Limits{}.WithDefaults([]plan.Group{a, b})
	if l.MaxPublishes != 3000*2+1000*20 || l.MaxSubscriptions != 11000 || l.MaxBodyBytes != 2<<20+64<<10 {
		t.Errorf("limits of two groups: %+v", l)
	}
	if d := (gwhttp.Limits{}).WithDefaults(nil); d.MaxPublishes != 4096 || d.MaxSubscriptions != 10000 || d.MaxBodyBytes != 1<<20 {
		t.Errorf("limits without groups: %+v", d)
	}
	c := gatewayGroups(t, spec(1, 1, 1, 16, v1alpha1.MQTT5))[0]
	c.Name = "meters"
	_, err := gwhttp.Start(context.Background(), gateway.Options{Listen: "127.0.0.1:0", Broker: "127.0.0.1:1", Groups: []plan.Group{a, c}}, gwhttp.Limits{})
	if err == nil || !strings.Contains(err.Error(), "spec.mqtt.version") || !strings.Contains(err.Error(), `"meters"`) {
		t.Errorf("groups of two MQTT versions: %v", err)
	}
}
