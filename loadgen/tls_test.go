package loadgen_test

import (
	"context"
	"net"
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/embedded"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/internal/certs/certstest"
	"github.com/msgbench/msgbench/internal/devicetls"
	"github.com/msgbench/msgbench/loadgen"
	"github.com/msgbench/msgbench/loadgen/drivers/driverstest"
	"github.com/msgbench/msgbench/results"
)

// tlsRun runs a short MQTTS benchmark with spec.tls t against a real Mosquitto (the server
// enforcing TLS 1.3 suites as a local run configures it) or, with goServer, against a Go TLS
// server (the embedded broker), and returns the result.
func tlsRun(tb testing.TB, t *v1alpha1.TLSSpec, goServer bool) *results.Result {
	tb.Helper()
	spec := baseSpec()
	spec.Workload.Publishers, spec.Workload.Subscribers, spec.Workload.Topics = 1, 1, 1
	spec.Workload.Rate = 50
	t.Enabled = true
	if t.Version == "" {
		t.Version = v1alpha1.TLS13
	}
	spec.TLS = t
	var ca []byte
	var addr string
	if goServer {
		bundle, srv := certstest.Loopback(tb)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		b, err := embedded.Start(ln, srv, 20)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = b.Stop() })
		ca, addr = bundle.CACert, b.Addr
	} else {
		b, err := mosquitto.Start(context.Background(), mosquitto.Options{TLS: true, TLSVersion: string(t.Version), MaxInflight: 20,
			TLS13Suites: devicetls.ServerTLS13(spec)})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = b.Stop() })
		ca, addr = b.CA, b.TLSAddr
	}
	cfg, err := devicetls.Client(ca, "127.0.0.1", driverstest.TLSPath(tb, spec).Version, devicetls.OfferOf(spec))
	if err != nil {
		tb.Fatal(err)
	}
	return run(tb, spec, loadgen.Options{Address: addr, TLS: cfg})
}

// TestNegotiatedTLSInResult: the result names the group and suite the handshakes negotiated, for
// Mosquitto's own choice (AES-256-GCM), a classical choice that Mosquitto enforces (P-256,
// ChaCha20-Poly1305 through ciphers_tls1.3: Go's client offers all three TLS 1.3 suites), a TLS
// 1.2 suite the client restricts and the server is told to accept (Mosquitto's default cipher
// list lacks ChaCha20), and the hybrid post-quantum group against a Go server (Mosquitto's
// OpenSSL 3.0 has none); every connection's handshake is counted.
func TestNegotiatedTLSInResult(t *testing.T) {
	if testing.Short() {
		t.Skip("-short (make test-unit): runs in make test")
	}
	for _, c := range []struct {
		name         string
		tls          v1alpha1.TLSSpec
		goServer     bool
		group, suite string
	}{
		{"mosquitto default", v1alpha1.TLSSpec{}, false, "X25519", "TLS_AES_256_GCM_SHA384"},
		{"mosquitto p256 chacha20", v1alpha1.TLSSpec{Groups: []v1alpha1.TLSGroup{v1alpha1.GroupP256}, CipherSuites: []string{"TLS_CHACHA20_POLY1305_SHA256"}}, false, "CurveP256", "TLS_CHACHA20_POLY1305_SHA256"},
		{"mosquitto tls1.2 chacha20 p384", v1alpha1.TLSSpec{Version: v1alpha1.TLS12, Groups: []v1alpha1.TLSGroup{v1alpha1.GroupP384, v1alpha1.GroupP256},
			// OpenSSL picks the group by its own order among those offered
			CipherSuites: []string{"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"}}, false, "CurveP256", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"},
		{"go x25519mlkem768", v1alpha1.TLSSpec{Groups: []v1alpha1.TLSGroup{v1alpha1.GroupX25519MLKEM768}}, true, "X25519MLKEM768", "TLS_AES_128_GCM_SHA256"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := tlsRun(t, &c.tls, c.goServer)
			env := res.Environment
			if env.TLSGroup != c.group || env.TLSCipherSuite != c.suite {
				t.Errorf("negotiated %s / %s, want %s / %s", env.TLSGroup, env.TLSCipherSuite, c.group, c.suite)
			}
			// One publisher, one subscriber: two connections, each one full handshake.
			if res.Wire.TLSHandshakes == nil || *res.Wire.TLSHandshakes != 2 || *res.Wire.TLSResumed != 0 || *res.Wire.ZeroRTT != 0 {
				t.Errorf("handshakes %v resumed %v 0-RTT %v, want 2, 0, 0", res.Wire.TLSHandshakes, res.Wire.TLSResumed, res.Wire.ZeroRTT)
			}
		})
	}
}

// TestHybridKeyShareBytes measures what the hybrid post-quantum group costs a TLS 1.3 connection
// (the result's connectBytes: TLS handshake + CONNECT/CONNACK, below TLS). Go's default offers an
// X25519MLKEM768 key share (1184-byte ML-KEM-768 encapsulation key + 32-byte X25519 share, 4 bytes
// of header) next to a plain X25519 one, and lists 7 groups (Go 1.26: three hybrids, X25519,
// P-256/384/521) where [x25519] lists 1: the ClientHello is 1220 + 12 = 1232 bytes longer. A Go
// server picks the hybrid and answers with a 1088-byte ML-KEM ciphertext + 32 bytes where X25519
// sends 32: 1088 more, 2320 in all. Mosquitto on OpenSSL 3.0 knows no ML-KEM and picks X25519:
// the default then costs only the longer ClientHello, 1232 bytes. Mosquitto's side varies more
// from run to run than Go's (a connection's mean was 2194–2206 bytes with [x25519] over 7 runs:
// OpenSSL's two session tickets and the ECDSA signature carry DER integers whose length depends
// on their random values), so its window is ±16 where Go's is ±8.
func TestHybridKeyShareBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short (make test-unit): runs in make test")
	}
	x25519 := []v1alpha1.TLSGroup{v1alpha1.GroupX25519}
	for _, c := range []struct {
		name     string
		goServer bool
		lo, hi   float64
	}{
		{"go server (hybrid negotiated)", true, 2320 - 8, 2320 + 8},
		{"mosquitto, OpenSSL 3.0 (x25519 negotiated)", false, 1232 - 16, 1232 + 16},
	} {
		t.Run(c.name, func(t *testing.T) {
			def := tlsRun(t, &v1alpha1.TLSSpec{}, c.goServer)
			classical := tlsRun(t, &v1alpha1.TLSSpec{Groups: x25519}, c.goServer)
			d := *def.Wire.ConnectBytes - *classical.Wire.ConnectBytes
			t.Logf("connectBytes: default %.0f (%s), x25519 %.0f (%s): difference %.0f", *def.Wire.ConnectBytes, def.Environment.TLSGroup,
				*classical.Wire.ConnectBytes, classical.Environment.TLSGroup, d)
			if classical.Environment.TLSGroup != "X25519" {
				t.Errorf("groups [x25519] negotiated %s", classical.Environment.TLSGroup)
			}
			if d < c.lo || d > c.hi {
				t.Errorf("the default groups cost %.0f bytes more than x25519, want %.0f..%.0f", d, c.lo, c.hi)
			}
		})
	}
}
