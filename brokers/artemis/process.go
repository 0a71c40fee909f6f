package artemis

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/msgbench/msgbench/brokers/brokerproc"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/mqtt"
)

// HomeEnv names an Artemis distribution folder (what hack/artemis.sh prints); it overrides the
// search.
const HomeEnv = "MSGBENCH_ARTEMIS_HOME"

// ErrNotInstalled means no Artemis distribution or no java was found.
var ErrNotInstalled = errors.New("artemis is not installed: run hack/artemis.sh (fetches Apache ActiveMQ Artemis " + Version +
	" from Maven Central into bin/artemis) or set " + HomeEnv + " to an Artemis distribution folder; java 17+ must be on PATH")

// Home finds the Artemis distribution: $MSGBENCH_ARTEMIS_HOME, else
// bin/artemis/<Version>/apache-artemis-<Version> in the current folder or one above it, else
// beside the msgbench source tree this was built from.
func Home() (string, error) {
	if d := os.Getenv(HomeEnv); d != "" {
		if isHome(d) {
			return d, nil
		}
		return "", fmt.Errorf("%w (%s=%s holds no lib/artemis-boot.jar)", ErrNotInstalled, HomeEnv, d)
	}
	var roots []string
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			roots = append(roots, d)
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		roots = append(roots, filepath.Join(filepath.Dir(file), "..", ".."))
	}
	for _, r := range roots {
		d := filepath.Join(r, "bin", "artemis", Version, "apache-artemis-"+Version)
		if isHome(d) {
			return d, nil
		}
	}
	return "", ErrNotInstalled
}

func isHome(d string) bool {
	st, err := os.Stat(filepath.Join(d, "lib", "artemis-boot.jar"))
	return err == nil && !st.IsDir()
}

// HomeVersion reads the Artemis version of a distribution from its server jar's name.
func HomeVersion(home string) string {
	m, _ := filepath.Glob(filepath.Join(home, "lib", "artemis-server-*.jar"))
	if len(m) == 0 {
		return "unknown"
	}
	return strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m[0]), "artemis-server-"), ".jar")
}

// Java finds the java that runs the broker (the first on PATH), or ErrNotInstalled.
func Java() (string, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return "", ErrNotInstalled
	}
	return java, nil
}

// Options of a local broker.
type Options struct {
	// TLS adds an MQTTS acceptor with certificates generated for this broker (valid for
	// 127.0.0.1, ::1 and localhost), accepting TLSVersion ("1.2" or "1.3"; empty accepts both).
	TLS        bool
	TLSVersion string
	// Host is the address to listen on (default 127.0.0.1); also put in the certificate.
	Host string
	// Port pins the plain acceptor's port (0: a free one).
	Port int
	// Bundle is the TLS material to serve (default: generated for this broker).
	Bundle *certs.Bundle
	// MaxInflight is spec.mqtt.inflight. Artemis 2.40 has no broker setting for it: towards a
	// subscriber it keeps as many QoS 1/2 messages unacknowledged as the client's CONNECT
	// Receive Maximum allows (MQTT 5; without one, and for 3.1.1, no limit), and its acceptor's
	// receiveMaximum parameter is never sent in CONNACK. The field keeps the brokers' Options
	// alike; the benchmark's clients bound their own window.
	MaxInflight int
	// Extra as in Config.
	Extra map[string]string
	// HeapMB is the JVM heap (default 512): enough for a benchmark broker, small on a shared
	// machine. Artemis pages messages to disk past half of it (global-max-size).
	HeapMB int
	// Dir is the instance folder: etc, data, certificates (default: a new temporary folder,
	// removed by Stop, or by msgbench's guardian if msgbench dies first).
	Dir string
	// Start, when set, starts the broker's command (for example inside a network namespace)
	// instead of spawn.Start. Either way the broker must get a parent-death signal.
	Start func(cmd *exec.Cmd) error
	// Listen, when set, finds free ports (in the namespace the broker runs in).
	Listen func(ctx context.Context, network, address string) (net.Listener, error)
	// Dial, when set, probes the broker's acceptors (from the namespace it runs in).
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// Process is an Artemis broker this program started.
type Process struct {
	// the process, its folder and log, Stop, Usage (shared with brokers/mosquitto and kafka)
	*brokerproc.Process
	Addr    string // host:port of the plain MQTT acceptor
	TLSAddr string // host:port of the MQTTS acceptor, when TLS
	// CA is the PEM CA certificate clients trust, when TLS.
	CA      []byte
	Version string
	// StartTime is how long the broker took from exec to answering MQTT on every acceptor.
	StartTime time.Duration
}

// Start starts Artemis on free loopback ports and returns once every acceptor answers an MQTT
// CONNECT.
func Start(ctx context.Context, o Options) (*Process, error) {
	// Bad input first: its error names the field even where Artemis is not installed.
	if err := CheckConfig(o.Extra); err != nil {
		return nil, err
	}
	if o.TLS {
		if _, err := TLSProtocols(o.TLSVersion); err != nil {
			return nil, err
		}
	}
	java, err := Java()
	if err != nil {
		return nil, err
	}
	home, err := Home()
	if err != nil {
		return nil, err
	}
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ { // a free port can be taken between probe and bind
		if attempt > 0 && o.Port != 0 {
			break // a pinned port does not become free by retrying
		}
		p, err := start(ctx, java, home, o)
		if err == nil {
			return p, nil
		}
		lastErr = err
		if !strings.Contains(err.Error(), "in use") {
			break
		}
	}
	return nil, lastErr
}

func start(ctx context.Context, java, home string, o Options) (*Process, error) {
	// Artemis stops in well under a second when idle; a loaded one flushes its journal first.
	bp, err := brokerproc.New("artemis", o.Dir, 15*time.Second)
	if err != nil {
		return nil, err
	}
	p := &Process{Process: bp, Version: HomeVersion(home)}
	fail := func(err error) (*Process, error) {
		_ = p.Stop()
		return nil, err
	}
	ports, err := brokerproc.FreePorts(o.Listen, o.Host, 2)
	if err != nil {
		return fail(err)
	}
	port := o.Port
	if port == 0 {
		port = ports[0]
	}
	etc := filepath.Join(p.Dir, "etc")
	cfg := Config{Layout: Layout{Home: home, Instance: p.Dir, Etc: etc}, Port: port, BindAddress: o.Host, Extra: o.Extra}
	p.Addr = net.JoinHostPort(o.Host, strconv.Itoa(port))
	if err := os.MkdirAll(etc, 0o700); err != nil {
		return fail(err)
	}
	// Netty unpacks its epoll library into java.io.tmpdir, which must exist.
	if err := os.MkdirAll(cfg.TmpDir(), 0o700); err != nil {
		return fail(err)
	}
	if o.TLS {
		b := o.Bundle
		if b == nil {
			if b, err = certs.New("msgbench-artemis", []string{o.Host, "localhost", "127.0.0.1", "::1"}, 24*time.Hour); err != nil {
				return fail(err)
			}
		}
		cfg.CertFile, cfg.KeyFile = filepath.Join(p.Dir, "tls.crt"), filepath.Join(p.Dir, "tls.key")
		for f, data := range map[string][]byte{cfg.CertFile: b.ServerCert, cfg.KeyFile: b.ServerKey} {
			if err := os.WriteFile(f, data, 0o600); err != nil {
				return fail(err)
			}
		}
		cfg.TLSPort = ports[1]
		if cfg.TLSPort == port { // a pinned port that happens to be the free one found
			return fail(fmt.Errorf("port %d: in use by the TLS acceptor", port))
		}
		cfg.TLSVersion = o.TLSVersion
		p.TLSAddr = net.JoinHostPort(o.Host, strconv.Itoa(cfg.TLSPort))
		p.CA = b.CACert
	}
	files, err := cfg.Render()
	if err != nil {
		return fail(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(etc, name), []byte(content), 0o600); err != nil {
			return fail(err)
		}
	}
	began := time.Now()
	if err := p.Start(exec.Command(java, cfg.Args(o.HeapMB)...), o.Start); err != nil {
		return fail(err)
	}
	if err := p.waitReady(ctx, o); err != nil {
		return fail(err)
	}
	p.StartTime = time.Since(began)
	return p, nil
}

// waitReady probes every acceptor with an MQTT CONNECT (the TLS one through a handshake that
// trusts only this broker's CA): Artemis opens its ports before the MQTT protocol manager serves
// them, and a JVM on a loaded two-core machine takes seconds to get there.
func (p *Process) waitReady(ctx context.Context, o Options) error {
	deadline := time.Now().Add(60 * time.Second)
	type target struct {
		addr string
		tls  *tls.Config
	}
	targets := []target{{addr: p.Addr}}
	if p.TLSAddr != "" {
		pool, err := certs.CertPool(p.CA)
		if err != nil {
			return err
		}
		targets = append(targets, target{p.TLSAddr, &tls.Config{RootCAs: pool, ServerName: o.Host, MinVersion: tls.VersionTLS12}})
	}
	for _, t := range targets {
		err := p.WaitReady(ctx, time.Until(deadline), 100*time.Millisecond, "answer MQTT on "+t.addr, func(ctx context.Context) error {
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
