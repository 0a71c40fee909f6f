package artemis_test

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/msgbench/msgbench/brokers/artemis"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/mqtt"
	"github.com/msgbench/msgbench/internal/proc"
	"github.com/msgbench/msgbench/internal/testenv"
)

// broker is one real Artemis (plain and TLS 1.3 acceptors, inflight 20) shared by the package's
// tests: a JVM takes seconds to start on a shared two-core machine.
var (
	broker *artemis.Process
	// noBroker says why there is no broker (hack/artemis.sh could not fetch Artemis).
	noBroker string
	startErr error
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	code := m.Run()
	if broker != nil {
		if err := broker.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop artemis:", err)
			code = 1
		}
	}
	return code
}

var startOnce sync.Once

// needBroker starts the shared broker on first use (Render's unit tests need none), or skips
// the test when Artemis cannot be fetched.
func needBroker(t *testing.T) {
	t.Helper()
	startOnce.Do(func() {
		if _, err := artemis.Home(); err != nil {
			// Fetch the pinned release once (Maven Central); later runs find it in bin/artemis.
			cmd := exec.Command(filepath.Join(testenv.RepoRoot(), "hack", "artemis.sh"))
			cmd.Stderr = os.Stderr
			out, err := cmd.Output()
			if err != nil {
				noBroker = fmt.Sprintf("hack/artemis.sh could not fetch Artemis %s (%v): broker tests skipped", artemis.Version, err)
				return
			}
			_ = os.Setenv(artemis.HomeEnv, strings.TrimSpace(string(out)))
		}
		if _, err := artemis.Java(); err != nil {
			noBroker = err.Error()
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		p, err := artemis.Start(ctx, artemis.Options{TLS: true, TLSVersion: "1.3", MaxInflight: 20, WebSocket: true})
		if err != nil {
			startErr = err
			return
		}
		broker = p
		u, _ := p.Usage()
		fmt.Fprintf(os.Stderr, "artemis %s: started in %s, RSS %d MiB idle\n", p.Version, p.StartTime.Round(time.Millisecond), u.RSS>>20)
	})
	if noBroker != "" {
		t.Skip(noBroker)
	}
	if startErr != nil {
		t.Fatalf("start artemis: %v", startErr)
	}
}

// dial opens an MQTT connection to addr (TLS when tc is set).
func dial(t *testing.T, addr string, tc *tls.Config, o mqtt.Options) *mqtt.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if tc != nil {
		tlc := tls.Client(nc, tc)
		if err := tlc.HandshakeContext(ctx); err != nil {
			_ = nc.Close()
			t.Fatalf("TLS handshake with %s: %v", addr, err)
		}
		nc = tlc
	}
	c, err := mqtt.Connect(ctx, nc, o)
	if err != nil {
		_ = nc.Close()
		t.Fatalf("MQTT CONNECT to %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// pubSub publishes n numbered messages at qos on a fresh topic and returns how many times each
// arrived at a subscriber of that topic.
func pubSub(t *testing.T, addr string, tc *tls.Config, version, qos byte, n int) []int {
	t.Helper()
	var mu sync.Mutex
	got := make([]int, n)
	total := 0
	all := make(chan struct{})
	topic := fmt.Sprintf("msgbench/test/%s/%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano())
	sub := dial(t, addr, tc, mqtt.Options{
		Connect:  mqtt.ConnectOptions{Version: version, ClientID: "sub-" + fmt.Sprint(time.Now().UnixNano()), CleanSession: true},
		Inflight: 20,
		OnPublish: func(p *mqtt.Publish) {
			i := int(binary.BigEndian.Uint32(p.Payload))
			mu.Lock()
			defer mu.Unlock()
			if i < n {
				got[i]++
			}
			if total++; total == n {
				close(all)
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	granted, err := sub.Subscribe(ctx, mqtt.Subscription{Filter: topic, QoS: qos})
	if err != nil || len(granted) != 1 || granted[0] != qos {
		t.Fatalf("SUBSCRIBE at QoS %d: granted %v, %v", qos, granted, err)
	}
	pub := dial(t, addr, tc, mqtt.Options{
		Connect:  mqtt.ConnectOptions{Version: version, ClientID: "pub-" + fmt.Sprint(time.Now().UnixNano()), CleanSession: true},
		Inflight: 20,
	})
	payload := make([]byte, 64)
	for i := range n {
		binary.BigEndian.PutUint32(payload, uint32(i))
		if _, err := pub.Publish(topic, payload, qos, false, true); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
	}
	if err := pub.WaitInflight(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-all:
	case <-ctx.Done():
	}
	// A duplicate would arrive after the n-th delivery: give it a moment.
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	return append([]int(nil), got...)
}

// exactlyOnce fails unless every message arrived once.
func exactlyOnce(t *testing.T, got []int) {
	t.Helper()
	missing, dup := 0, 0
	for _, c := range got {
		switch {
		case c == 0:
			missing++
		case c > 1:
			dup += c - 1
		}
	}
	if missing > 0 || dup > 0 {
		t.Fatalf("%d of %d messages missing, %d duplicates", missing, len(got), dup)
	}
}

func TestPubSub(t *testing.T) {
	needBroker(t)
	for _, tc := range []struct {
		name    string
		version byte
		qos     byte
		n       int
	}{
		{"mqtt311-qos0", mqtt.V311, 0, 200},
		{"mqtt311-qos1", mqtt.V311, 1, 1000},
		{"mqtt311-qos2", mqtt.V311, 2, 1000},
		{"mqtt5-qos1", mqtt.V5, 1, 1000},
		{"mqtt5-qos2", mqtt.V5, 2, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// QoS 0 may drop by the protocol, but not on an idle loopback broker.
			exactlyOnce(t, pubSub(t, broker.Addr, nil, tc.version, tc.qos, tc.n))
		})
	}
}

// An MQTT 5 CONNECT is accepted as MQTT 5, with QoS 2 and no window imposed on the client
// (Artemis 2.40 sends no Receive Maximum: the benchmark's inflight is the client's own).
func TestMQTT5Connect(t *testing.T) {
	needBroker(t)
	c := dial(t, broker.Addr, nil, mqtt.Options{Connect: mqtt.ConnectOptions{Version: mqtt.V5, ClientID: "v5", CleanSession: true}, Inflight: 100})
	if broker.Version != artemis.Version {
		t.Errorf("broker version %q, want %s (read from the distribution)", broker.Version, artemis.Version)
	}
	if c.Version() != mqtt.V5 {
		t.Fatalf("connected with protocol level %d, want 5", c.Version())
	}
	ack := c.Connack()
	if ack.ReasonCode != 0 || ack.ReceiveMaximum != 65535 || ack.MaximumQoS != 2 {
		t.Fatalf("CONNACK %+v: want success, no Receive Maximum (65535), maximum QoS 2", ack)
	}
	if c.Window() != 100 {
		t.Fatalf("client window %d, want its own 100", c.Window())
	}
}

func clientTLS(t *testing.T, p *artemis.Process, version uint16) *tls.Config {
	t.Helper()
	pool, err := certs.CertPool(p.CA)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: version, MaxVersion: version}
}

// handshake reports whether a TLS handshake at exactly version succeeds.
func handshake(t *testing.T, p *artemis.Process, version uint16) error {
	t.Helper()
	nc, err := net.DialTimeout("tcp", p.TLSAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	return tls.Client(nc, clientTLS(t, p, version)).Handshake()
}

func TestTLS13(t *testing.T) {
	needBroker(t)
	if err := handshake(t, broker, tls.VersionTLS12); err == nil {
		t.Fatal("a TLS 1.3 acceptor accepted TLS 1.2")
	}
	exactlyOnce(t, pubSub(t, broker.TLSAddr, clientTLS(t, broker, tls.VersionTLS13), mqtt.V311, 1, 200))
}

// A second broker: TLS 1.2 only, a spec.broker.config acceptor parameter, and Stop.
func TestTLS12ExtraAndStop(t *testing.T) {
	needBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := artemis.Start(ctx, artemis.Options{TLS: true, TLSVersion: "1.2", MaxInflight: 20,
		Extra: map[string]string{"acceptor.maximumPacketSize": "100000", "address-setting.max-size-messages": "-1"}})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = p.Stop()
		}
	}()
	if err := handshake(t, p, tls.VersionTLS13); err == nil {
		t.Fatal("a TLS 1.2 acceptor accepted TLS 1.3")
	}
	tc := clientTLS(t, p, tls.VersionTLS12)
	exactlyOnce(t, pubSub(t, p.TLSAddr, tc, mqtt.V5, 2, 200))
	c := dial(t, p.TLSAddr, tc, mqtt.Options{Connect: mqtt.ConnectOptions{Version: mqtt.V5, ClientID: "v5-extra", CleanSession: true}, Inflight: 20})
	if mps := c.Connack().MaximumPacketSize; mps != 100000 {
		t.Fatalf("CONNACK Maximum Packet Size %d: spec.broker.config acceptor.maximumPacketSize=100000 did not reach the acceptor", mps)
	}
	_ = c.Close()

	pid, dir := p.PID(), p.Dir
	if u, err := p.Usage(); err != nil || u.RSS == 0 {
		t.Fatalf("usage of the running broker: %+v, %v", u, err)
	}
	stopped = true
	if err := p.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	select {
	case <-p.Exited():
	default:
		t.Fatal("Stop returned while the broker still runs")
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("pid %d after Stop: kill(0) = %v, want ESRCH (no such process)", pid, err)
	}
	if _, err := proc.Of(pid); err == nil {
		t.Fatalf("pid %d still has a /proc entry after Stop", pid)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("instance folder %s still there after Stop (%v)", dir, err)
	}
}

// Bad spec.broker.config is refused before anything starts, even where Artemis is missing.
func TestStartRefusesManagedKey(t *testing.T) {
	dir := t.TempDir()
	_, err := artemis.Start(context.Background(), artemis.Options{Dir: dir, Extra: map[string]string{"acceptor.sslEnabled": "false"}})
	if err == nil || !strings.Contains(err.Error(), "spec.broker.config") || !strings.Contains(err.Error(), "acceptor.sslEnabled") {
		t.Fatalf("Start with a managed key: %v, want an error naming spec.broker.config and the key", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("Start wrote %d entries into the instance folder before refusing", len(entries))
	}
}
