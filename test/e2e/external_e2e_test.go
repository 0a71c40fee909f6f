//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/internal/testenv"
)

// TestExternalTargetsOnTheNode: msgbench measures systems it did not start, from the samples that
// describe them, through the operator, with worker pods on the node reaching out of the cluster
// to the node's own address (as to a gateway or endpoint on the user's network):
//
//   - mqtt-sn-external-gateway.yaml against bisquitt (a transparent MQTT-SN gateway in Go, from
//     the Go module proxy, hack/bisquitt.sh) in front of aedes (an MQTT broker in Node.js, from
//     npm, hack/aedes.sh): neither written here, both run by this test on the node. The gateway is
//     configured with the sample's predefined topic ids; msgbench starts no gateway and no broker,
//     and every message published through bisquitt reaches the subscribers through it, exactly
//     once (at QoS 0: bisquitt grants no more to a subscription).
//   - http-endpoint.yaml against an ingestion endpoint of Go's net/http served by this test on the
//     node, which checks every request against the sample's template and accepts it (202): every
//     message the run counts as acknowledged is one the endpoint accepted, from the device the
//     request names.
func TestExternalTargetsOnTheNode(t *testing.T) {
	nodeIP := cfg["E2E_NODE_IP"]
	if nodeIP == "" {
		t.Fatal("E2E_NODE_IP is not set (hack/e2e-node.sh writes it to e2e.env)")
	}
	// The two runs are light (100 msg/s each) and go side by side.
	t.Run("mqtt-sn-external-gateway", func(t *testing.T) {
		t.Parallel()
		broker := testenv.StartAedesOn(t, nodeIP)
		written, err := manifest.ReadFile(filepath.Join(repo, "config", "samples", "mqtt-sn-external-gateway.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		// bisquitt is configured with the sample's predefined topic ids, as a deployed gateway
		// would be: the manifest says what the gateway was given.
		predefined := map[string]uint16{}
		for topic, id := range written.Spec.MQTTSN.PredefinedTopicIDs {
			predefined[topic] = uint16(id)
		}
		gw := testenv.StartBisquittOn(t, nodeIP, broker.Addr, predefined)
		mb := load(t, sample{file: "mqtt-sn-external-gateway.yaml", edit: func(spec map[string]any) {
			spec["broker"].(map[string]any)["external"].(map[string]any)["address"] = broker.Addr
			spec["gateway"].(map[string]any)["external"].(map[string]any)["address"] = gw.Addr
			// QoS 0: bisquitt 0.6.0's SUBACK grants QoS 0 whatever was asked (docs/interop.md), and
			// msgbench refuses a subscription granted below the run's QoS.
			spec["qos"] = 0
		}})
		start := time.Now()
		final, phases := runToEnd(t, mb, 5*time.Minute, nil)
		defer deleteBenchmark(t, final)
		if final.Status.Phase != v1alpha1.PhaseSucceeded {
			t.Logf("bisquitt's log:\n%s\naedes' stderr:\n%s", gw.Log(), broker.Stderr())
		}
		mustSucceed(t, final)
		checkSucceeded(t, final)
		checkPods(t, final)
		checkObjectStore(t, final)
		// Every message, exactly once, to each subscriber of its topic: through bisquitt both ways.
		sum, w := final.Status.Summary, final.Spec.Workload
		if want := sum.Sent * int64(w.Subscribers) / int64(w.Topics); sum.Received != want || sum.Lost != 0 || sum.Duplicates != 0 {
			t.Errorf("sent %d, received %d (%d duplicates), lost %d; want %d deliveries, each once", sum.Sent, sum.Received, sum.Duplicates, sum.Lost, want)
		}
		if c := meta.FindStatusCondition(final.Status.Conditions, v1alpha1.ConditionGatewayReady); c == nil || c.Reason != "External" {
			t.Errorf("GatewayReady %+v; want reason External (msgbench starts no gateway)", c)
		}
		record("%-28s Succeeded in %4.0fs  %v  through bisquitt %s to aedes %s: sent %d received %d lost %d dup %d  p50 %dµs p99 %dµs",
			mb.Name, time.Since(start).Seconds(), phases, gw.Version, broker.Version, sum.Sent, sum.Received, sum.Lost, sum.Duplicates,
			ptr.Deref(sum.LatencyP50Micros, 0), ptr.Deref(sum.LatencyP99Micros, 0))
	})
	t.Run("http-endpoint", func(t *testing.T) {
		t.Parallel()
		ep := startEndpoint(t, nodeIP)
		mb := load(t, sample{file: "http-endpoint.yaml", edit: func(spec map[string]any) {
			spec["http"].(map[string]any)["endpoint"].(map[string]any)["url"] = "http://" + ep.addr + "/v1/devices/{device}/readings?seq={seq}"
		}})
		start := time.Now()
		final, phases := runToEnd(t, mb, 5*time.Minute, nil)
		defer deleteBenchmark(t, final)
		mustSucceed(t, final)
		checkPods(t, final)
		checkObjectStore(t, final)
		accepted, bad, devices := ep.counts()
		for _, b := range bad {
			t.Errorf("the endpoint refused a request that does not follow the template: %s", b)
		}
		r := storedResult(t, final)
		// The endpoint counts the warm-up's requests too; the result only the window's.
		if r.Sent <= 0 || r.Acked != r.Sent || r.Acked > accepted || r.Errors != 0 || r.Unsent != 0 {
			t.Errorf("sent %d, acked %d, errors %d, unsent %d in the window, endpoint accepted %d in all: want every message sent acked, and no more than the endpoint accepted",
				r.Sent, r.Acked, r.Errors, r.Unsent, accepted)
		}
		if r.Received != 0 || r.Expected != 0 || ptr.Deref(r.Lost, 0) != 0 {
			t.Errorf("received %d of %d expected, lost %d: a publish-only run observes no delivery and must claim none lost",
				r.Received, r.Expected, ptr.Deref(r.Lost, 0))
		}
		if want := int(mb.Spec.Workload.Publishers); len(devices) != want {
			t.Errorf("requests came from devices %v; want %d publishers", devices, want)
		}
		if c := meta.FindStatusCondition(final.Status.Conditions, v1alpha1.ConditionGatewayReady); c == nil || c.Reason != "External" {
			t.Errorf("GatewayReady %+v; want reason External (msgbench starts no gateway)", c)
		}
		record("%-28s Succeeded in %4.0fs  %v  to an endpoint on the node: sent %d acked %d (the endpoint accepted %d with the warm-up's) from %d devices",
			mb.Name, time.Since(start).Seconds(), phases, r.Sent, r.Acked, accepted, len(devices))
	})
}

// checkClientCertificatesRequired: the real Mosquitto image the operator ran for a spec with
// spec.tls.clientCertificates refuses a TLS client without a certificate, and accepts one with a
// certificate signed by the devices' CA the operator generated (Secret <name>-client-ca), up to
// an MQTT CONNACK: the broker requires and verifies device certificates, it does not just ask.
func checkClientCertificatesRequired(t *testing.T, mb *v1alpha1.MessagingBenchmark) {
	t.Helper()
	ctx := context.Background()
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(mb.Namespace),
		client.MatchingLabels{v1alpha1.LabelBenchmark: mb.Name, v1alpha1.LabelComponent: v1alpha1.ComponentBroker}); err != nil || len(pods.Items) != 1 {
		t.Fatalf("broker pods of %s: %d (%v)", mb.Name, len(pods.Items), err)
	}
	addr := net.JoinHostPort(pods.Items[0].Status.PodIP, "8883")
	var ca corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: mb.Namespace, Name: v1alpha1.ShortName(mb.Name, "-client-ca")}, &ca); err != nil {
		t.Fatalf("the devices' CA Secret: %v", err)
	}
	issuer, err := certs.NewIssuer(ca.Data["tls.crt"], ca.Data["tls.key"], "ecdsa-p256", "{clientId}")
	if err != nil {
		t.Fatalf("the devices' CA Secret %s: %v", ca.Name, err)
	}
	// The server's certificate is the operator's; what is checked here is the client's side.
	base := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13} //nolint:gosec // the broker's identity is not what this checks
	if err := mqttConnect(addr, base, "e2e-no-certificate"); err == nil {
		t.Errorf("%s accepted a TLS client without a certificate", addr)
	} else if !strings.Contains(err.Error(), "certificate required") {
		t.Errorf("%s refused a client without a certificate with %q; want the TLS alert \"certificate required\"", addr, err)
	}
	withCert := base.Clone()
	withCert.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return issuer.Certificate("e2e-device") }
	if err := mqttConnect(addr, withCert, "e2e-device"); err != nil {
		t.Errorf("%s refused a device certificate signed by the operator's CA: %v", addr, err)
	}
	record("%-28s broker %s: no client certificate refused (certificate required), a device certificate of the run's CA accepted",
		mb.Name, addr)
}

// mqttConnect opens TLS to addr, sends an MQTT 3.1.1 CONNECT and wants CONNACK 0. In TLS 1.3 the
// server's verdict on the client's certificate arrives after the client's handshake ends, so it
// shows on the first read.
func mqttConnect(addr string, cfg *tls.Config, clientID string) error {
	d := &net.Dialer{Timeout: 10 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	vh := []byte{0, 4, 'M', 'Q', 'T', 'T', 4, 0x02, 0, 60, byte(len(clientID) >> 8), byte(len(clientID))}
	body := append(vh, clientID...)
	if _, err := conn.Write(append([]byte{0x10, byte(len(body))}, body...)); err != nil {
		return err
	}
	ack := make([]byte, 4)
	if _, err := io.ReadFull(conn, ack); err != nil {
		return err
	}
	if ack[0] != 0x20 || ack[3] != 0 {
		return fmt.Errorf("CONNACK % x", ack)
	}
	return nil
}

// ---------------------------------------------------------------- an ingestion endpoint

type endpoint struct {
	addr string

	mu       sync.Mutex
	accepted int64
	bad      []string
	devices  map[string]int64 // device → the last seq it sent
}

var readingPath = regexp.MustCompile(`^/v1/devices/([^/]+)/readings$`)

// startEndpoint serves http-endpoint.yaml's ingestion API on host: POST
// /v1/devices/{device}/readings?seq={seq} with X-Device: {device} and a JSON body
// {"topic", "seq", "data": base64 of the 48-byte payload}. A request that follows the template
// is accepted (202); one that does not is answered 400 and kept, for the test to report.
func startEndpoint(t *testing.T, host string) *endpoint {
	t.Helper()
	ep := &endpoint{devices: map[string]int64{}}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	ep.addr = ln.Addr().String()
	srv := &http.Server{Handler: http.HandlerFunc(ep.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ep
}

func (ep *endpoint) serve(w http.ResponseWriter, r *http.Request) {
	if err := ep.check(r); err != nil {
		ep.mu.Lock()
		ep.bad = append(ep.bad, fmt.Sprintf("%s %s: %v", r.Method, r.URL, err))
		ep.mu.Unlock()
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

func (ep *endpoint) check(r *http.Request) error {
	m := readingPath.FindStringSubmatch(r.URL.Path)
	if r.Method != http.MethodPost || m == nil {
		return errors.New("not POST /v1/devices/{device}/readings")
	}
	device := m[1]
	if h := r.Header.Get("X-Device"); h != device {
		return fmt.Errorf("X-Device %q, the path's device %q", h, device)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		return fmt.Errorf("Content-Type %q", ct)
	}
	var body struct {
		Topic string `json:"topic"`
		Seq   int64  `json:"seq"`
		Data  string `json:"data"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		return fmt.Errorf("body: %v", err)
	}
	seq, err := strconv.ParseInt(r.URL.Query().Get("seq"), 10, 64)
	if err != nil || seq != body.Seq {
		return fmt.Errorf("seq %q in the URL, %d in the body", r.URL.Query().Get("seq"), body.Seq)
	}
	if data, err := base64.StdEncoding.DecodeString(body.Data); err != nil || len(data) != 48 {
		return fmt.Errorf("data: %d bytes (%v), want the 48-byte payload in base64", len(data), err)
	}
	if body.Topic == "" {
		return errors.New("no topic")
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	// Over HTTP/1.1 a device has one request in flight: its messages arrive in order, each once.
	if last, ok := ep.devices[device]; ok && seq <= last {
		return fmt.Errorf("device %s sent seq %d after %d", device, seq, last)
	}
	ep.devices[device] = seq
	ep.accepted++
	return nil
}

// counts returns the requests accepted, those refused, and the devices seen.
func (ep *endpoint) counts() (int64, []string, []string) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	var devices []string
	for d := range ep.devices {
		devices = append(devices, d)
	}
	return ep.accepted, append([]string(nil), ep.bad...), devices
}
