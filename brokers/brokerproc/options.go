package brokerproc

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/mqtt"
	"github.com/msgbench/msgbench/internal/wsconn"
)

// Options of a local MQTT broker (brokers/mosquitto, rabbitmq, artemis alias it): one value a
// local run fills once, whichever broker the spec names.
type Options struct {
	// TLS adds an MQTTS listener with certificates generated for this broker (valid for
	// 127.0.0.1, ::1 and localhost), accepting TLSVersion ("1.2" or "1.3"; empty accepts both).
	TLS        bool
	TLSVersion string
	// TLS13Suites restricts the TLS 1.3 cipher suites the broker accepts (colon-separated IANA
	// names; empty: its defaults), where the broker can (Mosquitto): Go's client always offers
	// all three, so only the server enforces spec.tls.cipherSuites' TLS 1.3 choice.
	TLS13Suites string
	// TLS12Ciphers is the same for TLS 1.2, in OpenSSL's names (colon-separated): the client
	// restricts its offer itself, but the server's default list may lack a suite it offers.
	TLS12Ciphers string
	// WebSocket adds MQTT-over-WebSocket listeners at WebSocketPath (default /mqtt): ws, and
	// wss with TLS, where the broker has them apart from its MQTT listeners.
	WebSocket     bool
	WebSocketPath string
	// Host is the address to listen on (default 127.0.0.1); also put in the certificate.
	Host string
	// Port pins the plain listener's port (0: a free one).
	Port int
	// Bundle is the TLS material to serve (default: generated for this broker).
	Bundle *certs.Bundle
	// ClientCA, when set with TLS, is the PEM CA of the devices' client certificates
	// (spec.tls.clientCertificates): the broker requires a certificate from every TLS client and
	// verifies it against this CA (Mosquitto; the other local brokers refuse it).
	// IdentityAsUsername then makes its common name the client's username (Mosquitto's
	// use_identity_as_username), as msgbench's tests of per-device ACLs set.
	ClientCA           []byte
	IdentityAsUsername bool
	// MaxInflight is spec.mqtt.inflight, applied where the broker has a setting for it.
	MaxInflight int
	// Extra is spec.broker.config: more settings in the broker's own terms.
	Extra map[string]string
	// Access is Mosquitto's access settings (password_file, allow_anonymous false) for msgbench's
	// own tests of credentials: keys spec.broker.config may not set, written as given.
	Access map[string]string
	// HeapMB is the JVM heap of a Java broker (default 512: enough for a benchmark broker, small
	// on a shared machine); others ignore it.
	HeapMB int
	// Dir holds the broker's configuration, certificates and data (default: a new temporary
	// folder, removed by Stop, or by msgbench's guardian if msgbench dies first).
	Dir string
	// Start, when set, starts the broker's commands (for example inside a network namespace)
	// instead of spawn.Start. Either way they must get a parent-death signal.
	Start func(cmd *exec.Cmd) error
	// Listen, when set, finds free ports (in the namespace the broker runs in).
	Listen func(ctx context.Context, network, address string) (net.Listener, error)
	// Dial, when set, probes the broker's listeners (from the namespace it runs in).
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// WSPath is WebSocketPath, /mqtt when unset.
func (o Options) WSPath() string {
	if o.WebSocketPath == "" {
		return "/mqtt"
	}
	return o.WebSocketPath
}

// DialContext dials a listener of the broker: from its network namespace when it runs in one.
func (o Options) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if o.Dial != nil {
		return o.Dial(ctx, network, addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// StartOnFreePorts calls start with o (Host defaulted to 127.0.0.1) up to three times while it
// fails because a port it chose is in use: a free port can be taken between the probe that found
// it and the broker's bind. A pinned port (o.Port) does not become free by retrying.
func StartOnFreePorts[P any](o Options, start func(Options) (P, error)) (P, error) {
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	var p P
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if attempt > 0 && o.Port != 0 {
			break
		}
		if p, err = start(o); err == nil || !inUse(err) {
			break
		}
	}
	return p, err
}

// inUse reports an address-in-use error, as the OS (EADDRINUSE) or Erlang (eaddrinuse) says it.
func inUse(err error) bool {
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "in use") || strings.Contains(s, "eaddrinuse")
}

// WriteTLS writes the broker's TLS material into its folder as ca.crt, tls.crt and tls.key
// (o.Bundle, or a certificate made for name valid for o.Host and loopback) and returns the
// bundle and the three paths.
func (p *Process) WriteTLS(o Options, name string) (b *certs.Bundle, caFile, certFile, keyFile string, err error) {
	b = o.Bundle
	if b == nil {
		if b, err = certs.New(name, []string{o.Host, "localhost", "127.0.0.1", "::1"}, 24*time.Hour); err != nil {
			return nil, "", "", "", err
		}
	}
	caFile, certFile, keyFile = filepath.Join(p.Dir, "ca.crt"), filepath.Join(p.Dir, "tls.crt"), filepath.Join(p.Dir, "tls.key")
	for f, data := range map[string][]byte{caFile: b.CACert, certFile: b.ServerCert, keyFile: b.ServerKey} {
		if err := os.WriteFile(f, data, 0o600); err != nil {
			return nil, "", "", "", err
		}
	}
	return b, caFile, certFile, keyFile, nil
}

// WaitMQTT waits, for at most timeout in all, until the broker answers an MQTT CONNECT on its
// plain listener and, when tlsAddr is set, through a TLS handshake on tlsAddr that trusts only ca
// and offers only o.TLSVersion: the JVM and Erlang brokers open their ports before they serve
// MQTT, and a listener that refuses the run's TLS version is not ready for the run.
func (p *Process) WaitMQTT(ctx context.Context, o Options, timeout time.Duration, plain, tlsAddr string, ca []byte) error {
	deadline := time.Now().Add(timeout)
	type target struct {
		addr string
		tls  *tls.Config
	}
	targets := []target{{addr: plain}}
	if tlsAddr != "" {
		cfg, err := certs.ClientTLS(ca, o.Host, o.TLSVersion)
		if err != nil {
			return err
		}
		targets = append(targets, target{tlsAddr, cfg})
	}
	for _, t := range targets {
		err := p.WaitReady(ctx, time.Until(deadline), 100*time.Millisecond, "answer an MQTT CONNECT on "+t.addr, func(ctx context.Context) error {
			pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			return mqtt.Probe(pctx, o.Dial, t.addr, t.tls)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// WaitWebSocket waits like WaitMQTT for the broker's MQTT-over-WebSocket listeners (wss trusting
// only ca), each to answer an MQTT CONNECT through the upgrade at path: a WebSocket plugin starts
// after the broker's MQTT listener.
func (p *Process) WaitWebSocket(ctx context.Context, o Options, timeout time.Duration, l Listeners, path string) error {
	deadline := time.Now().Add(timeout)
	var wss *tls.Config
	if l.WSSAddr != "" {
		var err error
		if wss, err = certs.ClientTLS(l.CA, o.Host, o.TLSVersion); err != nil {
			return err
		}
	}
	for addr, cfg := range map[string]*tls.Config{l.WSAddr: nil, l.WSSAddr: wss} {
		if addr == "" {
			continue
		}
		dial := wsconn.Dialer(o.Dial, cfg, path)
		err := p.WaitReady(ctx, time.Until(deadline), 100*time.Millisecond, "answer an MQTT CONNECT over WebSocket on "+addr+path, func(ctx context.Context) error {
			pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			return mqtt.Probe(pctx, dial, addr, nil)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Listeners is where a local MQTT broker serves, and which broker it is.
type Listeners struct {
	Addr    string // host:port of the plain MQTT listener
	TLSAddr string // host:port of the MQTTS listener, when TLS
	// WSAddr and WSSAddr are host:port of the MQTT-over-WebSocket listeners (ws, and wss when
	// TLS), when Options.WebSocket; WebSocketPath is their HTTP path.
	WSAddr, WSSAddr string
	WebSocketPath   string
	// CA is the PEM CA certificate clients trust, when TLS.
	CA      []byte
	Version string
}

// Ports finds n distinct free ports for a broker's listeners; the first is the plain MQTT
// listener's, o.Port when it is pinned. A pinned port that happens to be one of the others found
// is refused (the caller's next attempt finds others).
func Ports(o Options, n int) ([]int, error) {
	ports, err := FreePorts(o.Listen, o.Host, n)
	if err != nil {
		return nil, err
	}
	if o.Port != 0 {
		for _, q := range ports[1:] {
			if q == o.Port {
				return nil, fmt.Errorf("port %d: in use by another of the broker's listeners", o.Port)
			}
		}
		ports[0] = o.Port
	}
	return ports, nil
}

// FindInBin finds a broker fetched into the repository's bin folder (hack/kafka.sh,
// hack/artemis.sh): rel under bin/ in the current folder or one above it, else beside the msgbench
// source tree this was built from; ok says whether a candidate holds the broker.
func FindInBin(rel string, ok func(dir string) bool) (string, bool) {
	var roots []string
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			roots = append(roots, d)
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if _, file, _, found := runtime.Caller(0); found {
		roots = append(roots, filepath.Join(filepath.Dir(file), "..", ".."))
	}
	for _, r := range roots {
		if d := filepath.Join(r, "bin", rel); ok(d) {
			return d, true
		}
	}
	return "", false
}
