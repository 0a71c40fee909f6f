// Package devicetls turns spec.tls's device settings (key-exchange groups, cipher suites, session
// resumption) and spec.quic.zeroRTT into Go TLS configuration, and refuses what Go's crypto/tls
// cannot do as a device would, naming the field. Admission (CEL) refuses the same things first;
// Check is the local safety net for specs built in code. docs/tls.md explains each decision. How
// the clients reach the server their TLS ends at (Path: protocol, gateway, TLS version) is the run
// plan's decision, which the caller passes in.
package devicetls

import (
	"crypto/tls"
	"fmt"
	"slices"
	"strings"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/certs"
)

// Curve is the Go group of a spec group.
func Curve(g v1alpha1.TLSGroup) (tls.CurveID, bool) {
	switch g {
	case v1alpha1.GroupX25519:
		return tls.X25519, true
	case v1alpha1.GroupP256:
		return tls.CurveP256, true
	case v1alpha1.GroupP384:
		return tls.CurveP384, true
	case v1alpha1.GroupP521:
		return tls.CurveP521, true
	case v1alpha1.GroupX25519MLKEM768:
		return tls.X25519MLKEM768, true
	}
	return 0, false
}

// TLS13Suites are the three TLS 1.3 suites Go implements. Its client offers all three in every
// ClientHello whatever tls.Config.CipherSuites says, and its server ignores that setting too.
var TLS13Suites = []string{"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"}

// suite looks a name up among Go's suites: id, whether it is TLS 1.3, and whether Go lists it
// as insecure.
func suite(name string) (id uint16, tls13, insecure, ok bool) {
	for _, c := range tls.CipherSuites() {
		if c.Name == name {
			return c.ID, slices.Contains(c.SupportedVersions, tls.VersionTLS13), false, true
		}
	}
	for _, c := range tls.InsecureCipherSuites() {
		if c.Name == name {
			return c.ID, false, true, true
		}
	}
	return 0, false, false, false
}

// Path is what the run plan decides about how a group's clients reach the server their TLS ends
// at: all that Check, Apply and Client need besides spec.tls and spec.quic. plan.Plan.TLSPath
// builds it for each group (devicetls cannot import plan, which imports it).
type Path struct {
	// Version is the TLS version the clients use ("1.2" or "1.3"; QUIC is always 1.3).
	Version string
	// QUIC: the clients talk over QUIC (mqtt-quic, HTTP/3), which always encrypts, with TLS 1.3.
	QUIC bool
	// Broker: the clients' TLS ends at the broker itself (protocol mqtt or kafka), whose TLS stack
	// (OpenSSL, the JVM's) enforces the TLS 1.2 groups on its certificate; Go's server, the
	// gateways', does not.
	Broker bool
	// EnforcesTLS13: a TLS 1.3 suite choice can be enforced, which only the server can do, and
	// the only server msgbench runs that can restrict TLS 1.3 suites is Mosquitto (OpenSSL's
	// ciphers_tls1.3), reached directly by protocol mqtt over TCP. Go servers (the gateways, the
	// embedded broker) ignore tls.Config.CipherSuites for TLS 1.3.
	EnforcesTLS13 bool
	// HTTP2: the clients speak HTTP/2, which forbids the CBC suites.
	HTTP2 bool
}

// Encrypted reports whether the clients use TLS at all: spec.tls.enabled, or QUIC.
func Encrypted(spec *v1alpha1.MessagingBenchmarkSpec, path Path) bool {
	return spec.TLSEnabled() || path.QUIC
}

// Check refuses spec.tls device settings and spec.quic.zeroRTT that cannot run as asked by clients
// that reach their server by path, with the field and the reason.
func Check(spec *v1alpha1.MessagingBenchmarkSpec, path Path) error {
	if spec.QUIC != nil && spec.QUIC.ZeroRTT && !path.QUIC {
		return fmt.Errorf("spec.quic.zeroRTT: 0-RTT is a QUIC feature: protocol mqtt-quic, or http with http.version \"3\"")
	}
	t := spec.TLS
	if t == nil {
		return nil
	}
	if !Encrypted(spec, path) {
		switch {
		case len(t.Groups) > 0:
			return fmt.Errorf("spec.tls.groups: the clients do not use TLS; set spec.tls.enabled (QUIC protocols always do)")
		case len(t.CipherSuites) > 0:
			return fmt.Errorf("spec.tls.cipherSuites: the clients do not use TLS; set spec.tls.enabled (QUIC protocols always do)")
		case t.Resumption:
			return fmt.Errorf("spec.tls.resumption: the clients do not use TLS; set spec.tls.enabled (QUIC protocols always do)")
		}
		return nil
	}
	version := path.Version
	for i, g := range t.Groups {
		if _, ok := Curve(g); !ok {
			return fmt.Errorf("spec.tls.groups[%d]: %q is not a group (x25519, p256, p384, p521, x25519mlkem768)", i, g)
		}
		if g == v1alpha1.GroupX25519MLKEM768 && version == string(v1alpha1.TLS12) {
			return fmt.Errorf("spec.tls.groups[%d]: x25519mlkem768 exists only in TLS 1.3; spec.tls.version is 1.2", i)
		}
	}
	// Brokers enforce it (OpenSSL refuses the handshake); Go's server, the gateways', does not.
	if len(t.Groups) > 0 && version == string(v1alpha1.TLS12) && path.Broker && generatedCert(spec) && !slices.Contains(t.Groups, v1alpha1.GroupP256) {
		return fmt.Errorf("spec.tls.groups: in TLS 1.2 the groups also name the curves a client accepts in the server's ECDSA certificate (RFC 8422), " +
			"which brokers enforce, and the one msgbench generates is P-256: add p256, or set spec.tls.secretRef")
	}
	var tls12, tls13 []string
	for i, name := range t.CipherSuites {
		field := fmt.Sprintf("spec.tls.cipherSuites[%d]", i)
		if strings.Contains(name, "_CCM") {
			return fmt.Errorf("%s: %s is an AES-CCM suite, which many small devices use, but Go's crypto/tls implements no AES-CCM suite, so msgbench's clients cannot offer it (docs/tls.md)", field, name)
		}
		_, is13, insecure, ok := suite(name)
		switch {
		case !ok:
			return fmt.Errorf("%s: %s is not a cipher suite Go's crypto/tls offers; TLS 1.3: %s; TLS 1.2: %s", field, name, strings.Join(TLS13Suites, ", "), strings.Join(Secure12(), ", "))
		case insecure:
			return fmt.Errorf("%s: %s is a suite Go lists as insecure (no forward secrecy, RC4, 3DES or CBC with SHA-256); msgbench does not offer it", field, name)
		case is13 && version == string(v1alpha1.TLS12):
			return fmt.Errorf("%s: %s is a TLS 1.3 suite; spec.tls.version is 1.2", field, name)
		case !is13 && version == string(v1alpha1.TLS13):
			return fmt.Errorf("%s: %s is a TLS 1.2 suite; the clients use TLS 1.3 (spec.tls.version, or QUIC)", field, name)
		}
		if strings.Contains(name, "_CBC_") && path.HTTP2 {
			return fmt.Errorf("%s: HTTP/2 forbids the CBC suites (RFC 9113 section 9.2.2): the gateway would refuse the connection; choose an AES-GCM or ChaCha20 suite", field)
		}
		if is13 {
			tls13 = append(tls13, name)
		} else {
			tls12 = append(tls12, name)
		}
	}
	if len(tls13) > 0 && len(tls13) < len(TLS13Suites) && !path.EnforcesTLS13 {
		return fmt.Errorf("spec.tls.cipherSuites: Go's TLS 1.3 client always offers all three TLS 1.3 suites and the server picks one; " +
			"msgbench can enforce a TLS 1.3 suite only on the Mosquitto broker it runs (ciphers_tls1.3, protocol mqtt), " +
			"not on a Go server (the msgbench gateways, the embedded broker) nor another broker (docs/tls.md)")
	}
	if len(tls12) > 0 && generatedCert(spec) &&
		!slices.ContainsFunc(tls12, func(s string) bool { return strings.Contains(s, "_ECDSA_") }) {
		return fmt.Errorf("spec.tls.cipherSuites: the certificate msgbench generates has an ECDSA key, so a TLS 1.2 suite must be an ECDHE_ECDSA one; add one or set spec.tls.secretRef to an RSA certificate")
	}
	return nil
}

// generatedCert reports whether the server's certificate is the one msgbench generates (ECDSA
// P-256): no spec.tls.secretRef and not an external broker.
func generatedCert(spec *v1alpha1.MessagingBenchmarkSpec) bool {
	return spec.TLS.SecretRef == nil && spec.Broker.Type != v1alpha1.BrokerExternal
}

// Secure12 names the TLS 1.2 suites Go offers and msgbench accepts.
func Secure12() []string {
	var out []string
	for _, c := range tls.CipherSuites() {
		if !slices.Contains(c.SupportedVersions, tls.VersionTLS13) {
			out = append(out, c.Name)
		}
	}
	return out
}

// Offer is what the clients offer in their handshake beyond the version: spec.tls.groups and
// spec.tls.cipherSuites, as written (Check has judged them against the path).
type Offer struct {
	Groups       []v1alpha1.TLSGroup
	CipherSuites []string
}

// OfferOf is spec's Offer (empty without spec.tls).
func OfferOf(spec *v1alpha1.MessagingBenchmarkSpec) Offer {
	if spec.TLS == nil {
		return Offer{}
	}
	return Offer{Groups: spec.TLS.Groups, CipherSuites: spec.TLS.CipherSuites}
}

// Apply sets a client configuration (certs.ClientTLS's, version already set) to the offer's
// groups and TLS 1.2 suites; the plan checked them (Check). TLS 1.3 suites are left to the server
// (ServerTLS13). Resumption is per client (drivers.ClientTLS), not here.
func Apply(cfg *tls.Config, o Offer) error {
	if cfg == nil {
		return nil
	}
	if len(o.Groups) > 0 {
		cfg.CurvePreferences = nil
		for i, g := range o.Groups {
			id, ok := Curve(g)
			if !ok { // a plan compiled without Check (admitted): still refused, not dropped
				return fmt.Errorf("spec.tls.groups[%d]: %q is not a group (x25519, p256, p384, p521, x25519mlkem768)", i, g)
			}
			cfg.CurvePreferences = append(cfg.CurvePreferences, id)
		}
	}
	var ids []uint16
	for i, name := range o.CipherSuites {
		id, is13, _, ok := suite(name)
		if !ok {
			return fmt.Errorf("spec.tls.cipherSuites[%d]: %s is not a cipher suite Go's crypto/tls offers", i, name)
		}
		if !is13 {
			ids = append(ids, id)
		}
	}
	if len(ids) > 0 {
		cfg.CipherSuites = ids
	}
	return nil
}

// ServerTLS13 is the TLS 1.3 suites the server must restrict itself to (Mosquitto's
// ciphers_tls1.3, colon-separated), or "" when the spec lists none or all three.
func ServerTLS13(spec *v1alpha1.MessagingBenchmarkSpec) string {
	if spec.TLS == nil {
		return ""
	}
	var out []string
	for _, name := range spec.TLS.CipherSuites {
		if slices.Contains(TLS13Suites, name) {
			out = append(out, name)
		}
	}
	if len(out) == len(TLS13Suites) {
		return ""
	}
	return strings.Join(out, ":")
}

// openSSLNames are OpenSSL's names of the TLS 1.2 suites Go offers.
var openSSLNames = map[string]string{
	"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA":          "ECDHE-ECDSA-AES128-SHA",
	"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA":          "ECDHE-ECDSA-AES256-SHA",
	"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA":            "ECDHE-RSA-AES128-SHA",
	"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA":            "ECDHE-RSA-AES256-SHA",
	"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256":       "ECDHE-ECDSA-AES128-GCM-SHA256",
	"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384":       "ECDHE-ECDSA-AES256-GCM-SHA384",
	"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256":         "ECDHE-RSA-AES128-GCM-SHA256",
	"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384":         "ECDHE-RSA-AES256-GCM-SHA384",
	"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256":   "ECDHE-RSA-CHACHA20-POLY1305",
	"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
}

// ServerTLS12 is the TLS 1.2 cipher list for an OpenSSL server (Mosquitto's ciphers) in
// OpenSSL's names, or "" when the spec lists no TLS 1.2 suite: the client restricts what it
// offers, and the server must accept it.
func ServerTLS12(spec *v1alpha1.MessagingBenchmarkSpec) string {
	if spec.TLS == nil {
		return ""
	}
	var out []string
	for _, name := range spec.TLS.CipherSuites {
		if n, ok := openSSLNames[name]; ok {
			out = append(out, n)
		}
	}
	return strings.Join(out, ":")
}

// Resumption reports whether clients keep a session cache: spec.tls.resumption, or
// spec.quic.zeroRTT (0-RTT resumes the previous connection's session).
func Resumption(spec *v1alpha1.MessagingBenchmarkSpec) bool {
	return (spec.TLS != nil && spec.TLS.Resumption) || ZeroRTT(spec)
}

// ZeroRTT reports spec.quic.zeroRTT.
func ZeroRTT(spec *v1alpha1.MessagingBenchmarkSpec) bool {
	return spec.QUIC != nil && spec.QUIC.ZeroRTT
}

// Client is the clients' TLS configuration: trusting caPEM (system roots when nil), verifying
// serverName, at TLS version ("1.2", "1.3"), offering o's groups and TLS 1.2 suites.
func Client(caPEM []byte, serverName, version string, o Offer) (*tls.Config, error) {
	cfg, err := certs.ClientTLS(caPEM, serverName, version)
	if err != nil {
		return nil, err
	}
	if err := Apply(cfg, o); err != nil {
		return nil, err
	}
	return cfg, nil
}
