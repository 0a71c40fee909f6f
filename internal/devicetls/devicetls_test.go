package devicetls

import (
	"crypto/tls"
	"slices"
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

func mqtts(t v1alpha1.TLSSpec) *v1alpha1.MessagingBenchmarkSpec {
	t.Enabled = true
	if t.Version == "" {
		t.Version = v1alpha1.TLS13
	}
	return &v1alpha1.MessagingBenchmarkSpec{Protocol: v1alpha1.ProtocolMQTT, Broker: v1alpha1.BrokerSpec{Type: v1alpha1.BrokerMosquitto}, TLS: &t}
}

// TestApply: groups become CurvePreferences in order, TLS 1.2 suites CipherSuites; TLS 1.3 suites
// go to the server (ServerTLS13), and the OpenSSL names of TLS 1.2 suites to Mosquitto.
func TestApply(t *testing.T) {
	s := mqtts(v1alpha1.TLSSpec{Version: v1alpha1.TLS12, Groups: []v1alpha1.TLSGroup{v1alpha1.GroupP384, v1alpha1.GroupP256},
		CipherSuites: []string{"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}})
	// protocol mqtt straight to Mosquitto, TLS 1.2 (plan.Plan.TLSPath; check_test.go goes through the plan)
	cfg, err := Client(nil, "example", string(v1alpha1.TLS12), OfferOf(s))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.CurvePreferences, []tls.CurveID{tls.CurveP384, tls.CurveP256}) ||
		!slices.Equal(cfg.CipherSuites, []uint16{tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}) ||
		cfg.MaxVersion != tls.VersionTLS12 {
		t.Errorf("curves %v suites %v max %x", cfg.CurvePreferences, cfg.CipherSuites, cfg.MaxVersion)
	}
	if got := ServerTLS12(s); got != "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-GCM-SHA256" {
		t.Errorf("ServerTLS12 %q", got)
	}
	s13 := mqtts(v1alpha1.TLSSpec{CipherSuites: []string{"TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_256_GCM_SHA384"}})
	if got := ServerTLS13(s13); got != "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384" {
		t.Errorf("ServerTLS13 %q", got)
	}
	if got := ServerTLS13(mqtts(v1alpha1.TLSSpec{CipherSuites: TLS13Suites})); got != "" {
		t.Errorf("all three TLS 1.3 suites restrict nothing, got %q", got)
	}
	// Every TLS 1.2 suite msgbench accepts has an OpenSSL name for Mosquitto.
	for _, name := range Secure12() {
		if openSSLNames[name] == "" {
			t.Errorf("%s has no OpenSSL name", name)
		}
	}
}
