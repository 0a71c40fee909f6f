// Package mosquitto runs Eclipse Mosquitto for a benchmark: the mosquitto.conf msgbench writes
// (shared by the operator's ConfigMap and local runs) and a local broker process.
package mosquitto

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Config is what msgbench needs from a Mosquitto broker.
type Config struct {
	// Port of the plain MQTT listener (0: none). BindAddress restricts it (empty: all).
	Port        int
	BindAddress string

	// TLSPort of the MQTTS listener (0: none), with the PEM files and the TLS version
	// ("1.2" or "1.3") it accepts.
	TLSPort    int
	CAFile     string
	CertFile   string
	KeyFile    string
	TLSVersion string
	// CiphersTLS13 restricts the MQTTS listener's TLS 1.3 suites (OpenSSL's ciphers_tls1.3,
	// colon-separated IANA names; empty: OpenSSL's default): the one place a TLS 1.3 choice of
	// spec.tls.cipherSuites is enforced, as Go's client always offers all three.
	CiphersTLS13 string
	// Ciphers is the listener's TLS 1.2 cipher list (OpenSSL names; empty: Mosquitto's default,
	// which lacks the CHACHA20-POLY1305 suites).
	Ciphers string

	// RequireCertificate makes the TLS listeners (MQTTS, WSS) ask every client for a
	// certificate, refuse a handshake without one and verify it against CAFile, which then holds
	// the devices' CA too (spec.tls.clientCertificates). IdentityAsUsername makes the
	// certificate's common name the client's username, which ACLs and the log name
	// (use_identity_as_username).
	RequireCertificate, IdentityAsUsername bool

	// WSPort and WSSPort are the MQTT-over-WebSocket listeners (0: none), WSS with TLSPort's
	// files. Mosquitto serves MQTT at any HTTP path, and its libwebsockets takes no TLS version
	// (the client's offer decides it).
	WSPort, WSSPort int

	// MaxInflight is Mosquitto's window of unacknowledged QoS 1/2 messages towards each
	// subscriber (max_inflight_messages); msgbench uses the benchmark's mqtt.inflight.
	MaxInflight int

	// RunAsRoot keeps Mosquitto from dropping privileges to the "mosquitto" user when started
	// as root (local runs, whose certificate files only root can read).
	RunAsRoot bool

	// Extra holds spec.broker.config: more mosquitto.conf keys.
	Extra map[string]string
	// Access holds access keys msgbench's own tests of credentials set (never a spec's).
	Access map[string]string
}

// managedKeys are set by msgbench; a benchmark cannot work if broker.config changes them.
var managedKeys = map[string]string{
	"listener":              "msgbench opens the listeners the benchmark needs",
	"port":                  "msgbench opens the listeners the benchmark needs",
	"bind_address":          "msgbench opens the listeners the benchmark needs",
	"cafile":                "TLS files come from spec.tls",
	"certfile":              "TLS files come from spec.tls",
	"keyfile":               "TLS files come from spec.tls",
	"tls_version":           "set spec.tls.version",
	"include_dir":           "all settings go through spec.broker.config",
	"per_listener_settings": "msgbench's settings are global",
	"user":                  "the container's user is set by its security context",
	"pid_file":              "msgbench tracks the broker by its process",
}

// Render writes mosquitto.conf. Comments say why each setting differs from Mosquitto's default.
func (c Config) Render() (string, error) {
	if err := CheckConfig(c.Extra); err != nil {
		return "", err
	}
	inflight := c.MaxInflight
	if inflight <= 0 {
		inflight = 20
	}
	var b strings.Builder
	b.WriteString("# mosquitto.conf written by msgbench for one benchmark run\n")
	b.WriteString("per_listener_settings false\n")
	b.WriteString("allow_anonymous true\n")
	b.WriteString("# a benchmark measures the broker, not its disk\n")
	b.WriteString("persistence false\n")
	b.WriteString("log_dest stderr\n")
	b.WriteString("log_type error\nlog_type warning\n")
	b.WriteString("# Nagle's algorithm would hold small PUBLISHes back for up to 40 ms\n")
	b.WriteString("set_tcp_nodelay true\n")
	b.WriteString("# no $SYS traffic between the benchmark's messages\n")
	b.WriteString("sys_interval 0\n")
	fmt.Fprintf(&b, "# the benchmark's inflight window also applies towards subscribers\nmax_inflight_messages %d\n", inflight)
	b.WriteString("# the default of 1000 queued messages per client drops QoS 1/2 messages under load\n")
	b.WriteString("max_queued_messages 1000000\n")
	if c.RunAsRoot {
		b.WriteString("user root\n")
	}
	for _, k := range slices.Sorted(maps.Keys(c.Extra)) {
		fmt.Fprintf(&b, "%s %s\n", k, c.Extra[k])
	}
	for _, k := range slices.Sorted(maps.Keys(c.Access)) {
		fmt.Fprintf(&b, "%s %s\n", k, c.Access[k])
	}
	if c.Port > 0 {
		b.WriteString("\nlistener " + listenerAddress(c.Port, c.BindAddress) + "\n")
		b.WriteString("protocol mqtt\nmax_connections -1\n")
	}
	if c.TLSPort > 0 {
		b.WriteString("\nlistener " + listenerAddress(c.TLSPort, c.BindAddress) + "\n")
		b.WriteString("protocol mqtt\nmax_connections -1\n")
		fmt.Fprintf(&b, "cafile %s\ncertfile %s\nkeyfile %s\n", c.CAFile, c.CertFile, c.KeyFile)
		c.writeClientCertificates(&b)
		switch c.TLSVersion {
		case "1.2":
			b.WriteString("tls_version tlsv1.2\n")
		default:
			b.WriteString("tls_version tlsv1.3\n")
		}
		if c.CiphersTLS13 != "" {
			fmt.Fprintf(&b, "ciphers_tls1.3 %s\n", c.CiphersTLS13)
		}
		if c.Ciphers != "" {
			fmt.Fprintf(&b, "ciphers %s\n", c.Ciphers)
		}
	}
	if c.WSPort > 0 {
		b.WriteString("\nlistener " + listenerAddress(c.WSPort, c.BindAddress) + "\n")
		b.WriteString("protocol websockets\nmax_connections -1\n")
	}
	if c.WSSPort > 0 {
		b.WriteString("\nlistener " + listenerAddress(c.WSSPort, c.BindAddress) + "\n")
		b.WriteString("protocol websockets\nmax_connections -1\n")
		fmt.Fprintf(&b, "cafile %s\ncertfile %s\nkeyfile %s\n", c.CAFile, c.CertFile, c.KeyFile)
		c.writeClientCertificates(&b)
		if c.Ciphers != "" {
			fmt.Fprintf(&b, "ciphers %s\n", c.Ciphers)
		}
	}
	return b.String(), nil
}

func listenerAddress(port int, bind string) string {
	if bind == "" {
		return fmt.Sprint(port)
	}
	return fmt.Sprintf("%d %s", port, bind)
}

// writeClientCertificates adds a TLS listener's client certificate settings.
func (c Config) writeClientCertificates(b *strings.Builder) {
	if c.RequireCertificate {
		b.WriteString("require_certificate true\n")
		if c.IdentityAsUsername {
			b.WriteString("use_identity_as_username true\n")
		}
	}
}
