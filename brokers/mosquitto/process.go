package mosquitto

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/msgbench/msgbench/brokers/brokerproc"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/spawn"
)

// ErrNotInstalled means no mosquitto binary was found.
var ErrNotInstalled = errors.New("mosquitto is not installed: run hack/apt-packages.sh (Debian package mosquitto) or put mosquitto on PATH")

// BinaryEnv names an environment variable that overrides where the mosquitto binary is
// (set it to a missing path to make a machine without Mosquitto).
const BinaryEnv = "MSGBENCH_MOSQUITTO"

// Binary finds the mosquitto executable ($MSGBENCH_MOSQUITTO, PATH, then /usr/sbin where
// Debian puts it).
func Binary() (string, error) {
	if p, ok := os.LookupEnv(BinaryEnv); ok {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
		return "", fmt.Errorf("%w ($%s=%s does not exist)", ErrNotInstalled, BinaryEnv, p)
	}
	if p, err := exec.LookPath("mosquitto"); err == nil {
		return p, nil
	}
	for _, p := range []string{"/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"} {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", ErrNotInstalled
}

// Version returns e.g. "2.0.11".
func Version(binary string) string {
	out, _ := spawn.CombinedOutput(exec.Command(binary, "-h"))
	if m := regexp.MustCompile(`mosquitto version ([0-9][0-9.]*)`).FindSubmatch(out); m != nil {
		return string(m[1])
	}
	return "unknown"
}

// Options of a local broker.
type Options struct {
	// TLS adds an MQTTS listener with certificates generated for this broker (valid for
	// 127.0.0.1, ::1 and localhost), accepting TLSVersion.
	TLS        bool
	TLSVersion string
	// Host is the address to listen on (default 127.0.0.1); also put in the certificate.
	Host string
	// Port pins the plain listener's port (0: a free one).
	Port int
	// Bundle is the TLS material to serve (default: generated for this broker).
	Bundle *certs.Bundle
	// MaxInflight and Extra as in Config.
	MaxInflight int
	Extra       map[string]string
	// Dir holds mosquitto.conf and the certificates (default: a new temporary folder,
	// removed by Stop, or by msgbench's guardian if msgbench dies first).
	Dir string
	// Start, when set, starts the broker's command (for example inside a network namespace)
	// instead of spawn.Start. Either way the broker must get a parent-death signal.
	Start func(cmd *exec.Cmd) error
	// Listen, when set, finds free ports (in the namespace the broker runs in).
	Listen func(ctx context.Context, network, address string) (net.Listener, error)
	// Dial, when set, probes the broker's listener (from the namespace it runs in).
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// Process is a Mosquitto broker this program started.
type Process struct {
	// the process, its folder and log, Stop, Usage (shared with brokers/kafka)
	*brokerproc.Process
	Addr    string // host:port of the plain listener
	TLSAddr string // host:port of the MQTTS listener, when TLS
	// CA is the PEM CA certificate clients trust, when TLS.
	CA      []byte
	Version string
}

// Start starts Mosquitto on free loopback ports and waits until it accepts connections.
func Start(ctx context.Context, o Options) (*Process, error) {
	bin, err := Binary()
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
		p, err := start(ctx, bin, o)
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

func start(ctx context.Context, bin string, o Options) (*Process, error) {
	bp, err := brokerproc.New("mosquitto", o.Dir, 5*time.Second)
	if err != nil {
		return nil, err
	}
	p := &Process{Process: bp, Version: Version(bin)}
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
	cfg := Config{Port: port, BindAddress: o.Host, MaxInflight: o.MaxInflight, Extra: o.Extra, RunAsRoot: os.Geteuid() == 0}
	p.Addr = net.JoinHostPort(o.Host, strconv.Itoa(port))
	if o.TLS {
		b := o.Bundle
		if b == nil {
			if b, err = certs.New("msgbench-mosquitto", []string{o.Host, "localhost", "127.0.0.1", "::1"}, 24*time.Hour); err != nil {
				return fail(err)
			}
		}
		cfg.CAFile, cfg.CertFile, cfg.KeyFile = filepath.Join(p.Dir, "ca.crt"), filepath.Join(p.Dir, "tls.crt"), filepath.Join(p.Dir, "tls.key")
		for f, data := range map[string][]byte{cfg.CAFile: b.CACert, cfg.CertFile: b.ServerCert, cfg.KeyFile: b.ServerKey} {
			if err := os.WriteFile(f, data, 0o600); err != nil {
				return fail(err)
			}
		}
		cfg.TLSPort = ports[1]
		if cfg.TLSPort == port { // a pinned port that happens to be the free one found
			return fail(fmt.Errorf("port %d: in use by the TLS listener", port))
		}
		cfg.TLSVersion = o.TLSVersion
		p.TLSAddr = net.JoinHostPort(o.Host, strconv.Itoa(cfg.TLSPort))
		p.CA = b.CACert
	}
	conf, err := cfg.Render()
	if err != nil {
		return fail(err)
	}
	confPath := filepath.Join(p.Dir, "mosquitto.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		return fail(err)
	}
	if err := p.Start(exec.Command(bin, "-c", confPath), o.Start); err != nil {
		return fail(err)
	}
	// Ready when every listener accepts a connection (10 s in all).
	deadline := time.Now().Add(10 * time.Second)
	for _, a := range []string{p.Addr, p.TLSAddr} {
		if a == "" {
			continue
		}
		err := p.WaitReady(ctx, time.Until(deadline), 20*time.Millisecond, "listen on "+a, func(context.Context) error {
			c, err := o.dial(a)
			if err == nil {
				_ = c.Close()
			}
			return err
		})
		if err != nil {
			return fail(err)
		}
	}
	return p, nil
}

// dial probes the listener: from the broker's network namespace when it runs in one.
func (o Options) dial(addr string) (net.Conn, error) {
	if o.Dial != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		return o.Dial(ctx, "tcp", addr)
	}
	return net.DialTimeout("tcp", addr, 200*time.Millisecond)
}
