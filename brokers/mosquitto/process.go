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

// Options of a local broker: the fields every local broker shares (MaxInflight sets
// max_inflight_messages, Extra is more mosquitto.conf; HeapMB is unused).
type Options = brokerproc.Options

// Process is a Mosquitto broker this program started.
type Process struct {
	// the process, its folder and log, Stop, Usage (shared with brokers/kafka)
	*brokerproc.Process
	brokerproc.Listeners
}

// Start starts Mosquitto on free loopback ports and waits until it accepts connections.
func Start(ctx context.Context, o Options) (*Process, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	return brokerproc.StartOnFreePorts(o, func(o Options) (*Process, error) { return start(ctx, bin, o) })
}

func start(ctx context.Context, bin string, o Options) (*Process, error) {
	bp, err := brokerproc.New("mosquitto", o.Dir, 5*time.Second)
	if err != nil {
		return nil, err
	}
	p := &Process{Process: bp, Listeners: brokerproc.Listeners{Version: Version(bin)}}
	fail := func(err error) (*Process, error) {
		_ = p.Stop()
		return nil, err
	}
	ports, err := brokerproc.Ports(o, 4) // mqtt, mqtts, ws, wss
	if err != nil {
		return fail(err)
	}
	port := ports[0]
	cfg := Config{Port: port, BindAddress: o.Host, MaxInflight: o.MaxInflight, Extra: o.Extra, Access: o.Access, RunAsRoot: os.Geteuid() == 0}
	p.Addr = net.JoinHostPort(o.Host, strconv.Itoa(port))
	if o.TLS {
		var b *certs.Bundle
		if b, cfg.CAFile, cfg.CertFile, cfg.KeyFile, err = p.WriteTLS(o, "msgbench-mosquitto"); err != nil {
			return fail(err)
		}
		cfg.TLSPort, cfg.TLSVersion, cfg.CiphersTLS13, cfg.Ciphers = ports[1], o.TLSVersion, o.TLS13Suites, o.TLS12Ciphers
		p.TLSAddr = net.JoinHostPort(o.Host, strconv.Itoa(cfg.TLSPort))
		p.CA = b.CACert
		if o.ClientCA != nil {
			// One file for both: the server CA stays where OpenSSL finds the server's chain,
			// and the devices' CA verifies the clients.
			if err := os.WriteFile(cfg.CAFile, append(append(append([]byte(nil), b.CACert...), '\n'), o.ClientCA...), 0o600); err != nil {
				return fail(err)
			}
			cfg.RequireCertificate, cfg.IdentityAsUsername = true, o.IdentityAsUsername
		}
	}
	if o.WebSocket {
		cfg.WSPort = ports[2]
		p.WSAddr, p.WebSocketPath = net.JoinHostPort(o.Host, strconv.Itoa(cfg.WSPort)), o.WSPath()
		if o.TLS {
			cfg.WSSPort = ports[3]
			p.WSSAddr = net.JoinHostPort(o.Host, strconv.Itoa(cfg.WSSPort))
		}
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
	if err := raiseFileLimit(p.PID()); err != nil {
		return fail(err)
	}
	// Ready when every listener accepts a connection (10 s in all).
	deadline := time.Now().Add(10 * time.Second)
	for _, a := range []string{p.Addr, p.TLSAddr, p.WSAddr, p.WSSAddr} {
		if a == "" {
			continue
		}
		err := p.WaitReady(ctx, time.Until(deadline), 20*time.Millisecond, "listen on "+a, func(context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			c, err := o.DialContext(ctx, "tcp", a)
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
