package artemis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/msgbench/msgbench/brokers/brokerproc"
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
	if d, ok := brokerproc.FindInBin(filepath.Join("artemis", Version, "apache-artemis-"+Version), isHome); ok {
		return d, nil
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

// Options of a local broker: the fields every local broker shares. MaxInflight has no effect:
// Artemis 2.40 has no broker setting for it — towards a subscriber it keeps as many QoS 1/2
// messages unacknowledged as the client's CONNECT Receive Maximum allows (MQTT 5; without one,
// and for 3.1.1, no limit), and its acceptor's receiveMaximum parameter is never sent in CONNACK;
// the benchmark's clients bound their own window. HeapMB is the JVM heap (default 512); Artemis
// pages messages to disk past half of it (global-max-size). Dir is the instance folder.
type Options = brokerproc.Options

// Process is an Artemis broker this program started.
type Process struct {
	// the process, its folder and log, Stop, Usage (shared with brokers/mosquitto and kafka)
	*brokerproc.Process
	brokerproc.Listeners
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
	return brokerproc.StartOnFreePorts(o, func(o Options) (*Process, error) { return start(ctx, java, home, o) })
}

func start(ctx context.Context, java, home string, o Options) (*Process, error) {
	// Artemis stops in well under a second when idle; a loaded one flushes its journal first.
	bp, err := brokerproc.New("artemis", o.Dir, 15*time.Second)
	if err != nil {
		return nil, err
	}
	p := &Process{Process: bp, Listeners: brokerproc.Listeners{Version: HomeVersion(home)}}
	fail := func(err error) (*Process, error) {
		_ = p.Stop()
		return nil, err
	}
	ports, err := brokerproc.Ports(o, 2) // mqtt, mqtts
	if err != nil {
		return fail(err)
	}
	port := ports[0]
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
		b, _, certFile, keyFile, err := p.WriteTLS(o, "msgbench-artemis")
		if err != nil {
			return fail(err)
		}
		cfg.CertFile, cfg.KeyFile = certFile, keyFile
		cfg.TLSPort = ports[1]
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
	if err := p.WaitMQTT(ctx, o, 60*time.Second, p.Addr, p.TLSAddr, p.CA); err != nil {
		return fail(err)
	}
	if o.WebSocket { // the MQTT acceptors also take the WebSocket upgrade (Netty's protocol detection)
		p.WSAddr, p.WSSAddr, p.WebSocketPath = p.Addr, p.TLSAddr, o.WSPath()
		if err := p.WaitWebSocket(ctx, o, 30*time.Second, p.Listeners, p.WebSocketPath); err != nil {
			return fail(err)
		}
	}
	p.StartTime = time.Since(began)
	return p, nil
}
