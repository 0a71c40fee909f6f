package devicetls_test

import (
	"strings"
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/devicetls"
	"github.com/msgbench/msgbench/plan"
)

func mqtts(t v1alpha1.TLSSpec) *v1alpha1.MessagingBenchmarkSpec {
	t.Enabled = true
	if t.Version == "" {
		t.Version = v1alpha1.TLS13
	}
	return &v1alpha1.MessagingBenchmarkSpec{Protocol: v1alpha1.ProtocolMQTT, Broker: v1alpha1.BrokerSpec{Type: v1alpha1.BrokerMosquitto}, TLS: &t}
}

// check is Check of spec's one group as the run plan decides how it reaches its server
// (plan.Plan.TLSPath), as msgbench run and the workers call it.
func check(t *testing.T, spec *v1alpha1.MessagingBenchmarkSpec) error {
	t.Helper()
	p, err := plan.Compile(spec, plan.Admitted)
	if err != nil {
		t.Fatal(err)
	}
	return devicetls.Check(spec, p.TLSPath(p.Groups[0]))
}

// TestCheckRefusesWithTheField: what admission refuses, Check refuses too, naming the field (and
// the index of a bad suite); what runs passes.
func TestCheckRefusesWithTheField(t *testing.T) {
	http2 := mqtts(v1alpha1.TLSSpec{CipherSuites: []string{"TLS_AES_256_GCM_SHA384"}})
	http2.Protocol, http2.HTTP.Version = v1alpha1.ProtocolHTTP, v1alpha1.HTTP2
	noTLS := mqtts(v1alpha1.TLSSpec{Resumption: true})
	noTLS.TLS.Enabled = false
	zeroTCP := mqtts(v1alpha1.TLSSpec{})
	zeroTCP.QUIC = &v1alpha1.QUICSpec{ZeroRTT: true}
	quicGroups := &v1alpha1.MessagingBenchmarkSpec{Protocol: v1alpha1.ProtocolMQTTQUIC, TLS: &v1alpha1.TLSSpec{Groups: []v1alpha1.TLSGroup{v1alpha1.GroupX25519}},
		QUIC: &v1alpha1.QUICSpec{ZeroRTT: true}}
	for _, c := range []struct {
		name string
		spec *v1alpha1.MessagingBenchmarkSpec
		want string // "" accepts
	}{
		{"default", mqtts(v1alpha1.TLSSpec{}), ""},
		{"quic groups and 0-RTT without tls.enabled", quicGroups, ""},
		{"mosquitto enforces a TLS 1.3 suite", mqtts(v1alpha1.TLSSpec{CipherSuites: []string{"TLS_CHACHA20_POLY1305_SHA256"}}), ""},
		{"all three TLS 1.3 suites anywhere", func() *v1alpha1.MessagingBenchmarkSpec {
			s := mqtts(v1alpha1.TLSSpec{CipherSuites: devicetls.TLS13Suites})
			s.Protocol = v1alpha1.ProtocolHTTP
			return s
		}(), ""},
		{"ccm", mqtts(v1alpha1.TLSSpec{CipherSuites: []string{"TLS_AES_128_GCM_SHA256", "TLS_AES_128_CCM_8_SHA256"}}), "spec.tls.cipherSuites[1]: TLS_AES_128_CCM_8_SHA256 is an AES-CCM suite"},
		{"unknown", mqtts(v1alpha1.TLSSpec{Version: v1alpha1.TLS12, CipherSuites: []string{"TLS_FOO"}}), "spec.tls.cipherSuites[0]: TLS_FOO is not a cipher suite"},
		{"insecure", mqtts(v1alpha1.TLSSpec{Version: v1alpha1.TLS12, CipherSuites: []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA"}}), "spec.tls.cipherSuites[1]: TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA is a suite Go lists as insecure"},
		{"1.3 suite with 1.2", mqtts(v1alpha1.TLSSpec{Version: v1alpha1.TLS12, CipherSuites: []string{"TLS_AES_128_GCM_SHA256"}}), "spec.tls.cipherSuites[0]: TLS_AES_128_GCM_SHA256 is a TLS 1.3 suite"},
		{"1.2 suite with 1.3", mqtts(v1alpha1.TLSSpec{CipherSuites: []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}}), "spec.tls.cipherSuites[0]: TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 is a TLS 1.2 suite"},
		{"rsa suite, ecdsa certificate", mqtts(v1alpha1.TLSSpec{Version: v1alpha1.TLS12, CipherSuites: []string{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}}), "spec.tls.cipherSuites: the certificate msgbench generates has an ECDSA key"},
		{"TLS 1.3 suite through the gateway", http2, "spec.tls.cipherSuites: Go's TLS 1.3 client always offers"},
		{"mlkem with 1.2", mqtts(v1alpha1.TLSSpec{Version: v1alpha1.TLS12, Groups: []v1alpha1.TLSGroup{v1alpha1.GroupP256, v1alpha1.GroupX25519MLKEM768}}), "spec.tls.groups[1]: x25519mlkem768 exists only in TLS 1.3"},
		{"1.2 without p256", mqtts(v1alpha1.TLSSpec{Version: v1alpha1.TLS12, Groups: []v1alpha1.TLSGroup{v1alpha1.GroupX25519}}), "spec.tls.groups: in TLS 1.2"},
		{"1.2 without p256 through the Go gateway", func() *v1alpha1.MessagingBenchmarkSpec {
			s := mqtts(v1alpha1.TLSSpec{Version: v1alpha1.TLS12, Groups: []v1alpha1.TLSGroup{v1alpha1.GroupX25519}})
			s.Protocol = v1alpha1.ProtocolHTTP
			return s
		}(), ""},
		{"resumption without tls", noTLS, "spec.tls.resumption: the clients do not use TLS"},
		{"0-RTT over TCP", zeroTCP, "spec.quic.zeroRTT: 0-RTT is a QUIC feature"},
		{"CBC with HTTP/2", func() *v1alpha1.MessagingBenchmarkSpec {
			s := mqtts(v1alpha1.TLSSpec{Version: v1alpha1.TLS12, CipherSuites: []string{"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA"}})
			s.Protocol, s.HTTP.Version = v1alpha1.ProtocolHTTP, v1alpha1.HTTP2
			return s
		}(), "spec.tls.cipherSuites[0]: HTTP/2 forbids the CBC suites"},
	} {
		err := check(t, c.spec)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q…", c.name, err, c.want)
		}
	}
}
