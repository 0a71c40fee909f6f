package mosquitto

import (
	"bytes"
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
	"sync"
	"time"

	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/guardian"
	"github.com/msgbench/msgbench/internal/proc"
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
	cmd     *exec.Cmd
	Addr    string // host:port of the plain listener
	TLSAddr string // host:port of the MQTTS listener, when TLS
	// CA is the PEM CA certificate clients trust, when TLS.
	CA      []byte
	Version string

	dir, ownDir string
	stderr      *lockedBuffer
	exited      chan struct{}
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
	p := &Process{dir: o.Dir, Version: Version(bin), stderr: &lockedBuffer{}, exited: make(chan struct{})}
	if p.dir == "" {
		d, err := guardian.MkdirTemp("", "msgbench-mosquitto-")
		if err != nil {
			return nil, err
		}
		p.dir, p.ownDir = d, d
	}
	port := o.Port
	if port == 0 {
		var err error
		if port, err = o.freePort(o.Host); err != nil {
			p.cleanup()
			return nil, err
		}
	}
	cfg := Config{Port: port, BindAddress: o.Host, MaxInflight: o.MaxInflight, Extra: o.Extra, RunAsRoot: os.Geteuid() == 0}
	p.Addr = net.JoinHostPort(o.Host, strconv.Itoa(port))
	if o.TLS {
		b := o.Bundle
		if b == nil {
			var err error
			if b, err = certs.New("msgbench-mosquitto", []string{o.Host, "localhost", "127.0.0.1", "::1"}, 24*time.Hour); err != nil {
				p.cleanup()
				return nil, err
			}
		}
		cfg.CAFile, cfg.CertFile, cfg.KeyFile = filepath.Join(p.dir, "ca.crt"), filepath.Join(p.dir, "tls.crt"), filepath.Join(p.dir, "tls.key")
		for f, data := range map[string][]byte{cfg.CAFile: b.CACert, cfg.CertFile: b.ServerCert, cfg.KeyFile: b.ServerKey} {
			if err := os.WriteFile(f, data, 0o600); err != nil {
				p.cleanup()
				return nil, err
			}
		}
		var err error
		if cfg.TLSPort, err = o.freePort(o.Host); err != nil {
			p.cleanup()
			return nil, err
		}
		cfg.TLSVersion = o.TLSVersion
		p.TLSAddr = net.JoinHostPort(o.Host, strconv.Itoa(cfg.TLSPort))
		p.CA = b.CACert
	}
	conf, err := cfg.Render()
	if err != nil {
		p.cleanup()
		return nil, err
	}
	confPath := filepath.Join(p.dir, "mosquitto.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		p.cleanup()
		return nil, err
	}
	p.cmd = exec.Command(bin, "-c", confPath)
	p.cmd.Stderr = p.stderr
	p.cmd.Stdout = p.stderr
	startCmd := o.Start
	if startCmd == nil {
		startCmd = spawn.Start // SIGKILL when msgbench dies, however it dies
	}
	if err := startCmd(p.cmd); err != nil {
		p.cleanup()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		_ = p.cmd.Wait()
		spawn.Forget(p.cmd)
		close(p.exited)
	}()
	if err := p.waitReady(ctx, o); err != nil {
		_ = p.Stop()
		return nil, err
	}
	return p, nil
}

func (p *Process) waitReady(ctx context.Context, o Options) error {
	deadline := time.Now().Add(10 * time.Second)
	addrs := []string{p.Addr}
	if p.TLSAddr != "" {
		addrs = append(addrs, p.TLSAddr)
	}
	for _, a := range addrs {
		for {
			select {
			case <-p.exited:
				return fmt.Errorf("mosquitto exited at start: %s", strings.TrimSpace(p.stderr.String()))
			case <-ctx.Done():
				return ctx.Err()
			default:
			}
			c, err := o.dial(a)
			if err == nil {
				_ = c.Close()
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("mosquitto did not listen on %s within 10s: %s", a, strings.TrimSpace(p.stderr.String()))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
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

// PID is the broker's process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited is closed when the broker process has ended.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Log is what the broker wrote to stderr so far.
func (p *Process) Log() string { return p.stderr.String() }

// Usage returns the broker's CPU time and peak RSS so far.
func (p *Process) Usage() (proc.Usage, error) { return proc.Of(p.PID()) }

// Stop terminates the broker by PID and removes its temporary folder.
func (p *Process) Stop() error {
	var err error
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
			err = errors.New("mosquitto did not stop within 5s of SIGINT; killed")
		}
	}
	p.cleanup()
	return err
}

func (p *Process) cleanup() {
	if p.ownDir != "" {
		_ = guardian.RemoveAll(p.ownDir)
	}
}

func (o Options) freePort(host string) (int, error) {
	listen := o.Listen
	if listen == nil {
		var lc net.ListenConfig
		listen = lc.Listen
	}
	l, err := listen(context.Background(), "tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 1<<20 { // bounded: keep the first MiB of the broker's log
		return len(p), nil
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
