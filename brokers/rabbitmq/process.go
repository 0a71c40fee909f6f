package rabbitmq

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
	"time"

	"github.com/msgbench/msgbench/brokers/brokerproc"
	"github.com/msgbench/msgbench/internal/certs"
)

// ErrNotInstalled means no RabbitMQ server script was found.
var ErrNotInstalled = errors.New("rabbitmq is not installed: run hack/apt-packages.sh rabbitmq-server (Debian package rabbitmq-server, with its Erlang)")

// BinaryEnv names an environment variable that overrides where the rabbitmq-server script is
// (set it to a missing path to make a machine without RabbitMQ).
const BinaryEnv = "MSGBENCH_RABBITMQ"

// debianServer is the server script of Debian's package. /usr/sbin/rabbitmq-server, the one on
// PATH, is a wrapper that switches to the rabbitmq user with su (which drops msgbench's
// environment and the parent-death signal) and writes to /var/log/rabbitmq; msgbench runs the
// script itself, as the user it runs as.
const debianServer = "/usr/lib/rabbitmq/bin/rabbitmq-server"

// Binary finds the rabbitmq-server script: $MSGBENCH_RABBITMQ, Debian's, then one on PATH that
// is not a user-switching wrapper (a generic-unix release's sbin/rabbitmq-server).
func Binary() (string, error) {
	if p, ok := os.LookupEnv(BinaryEnv); ok {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
		return "", fmt.Errorf("%w ($%s=%s does not exist)", ErrNotInstalled, BinaryEnv, p)
	}
	if st, err := os.Stat(debianServer); err == nil && !st.IsDir() {
		return debianServer, nil
	}
	if p, err := exec.LookPath("rabbitmq-server"); err == nil && !switchesUser(p) {
		return p, nil
	}
	return "", ErrNotInstalled
}

// switchesUser reports whether script is a wrapper that runs the server through su.
func switchesUser(script string) bool {
	data, err := os.ReadFile(script)
	return err == nil && bytes.Contains(data, []byte("su rabbitmq"))
}

// Version returns RabbitMQ's version, e.g. "3.10.8", from the rabbit application's .app file
// next to the script (no node is started).
func Version(binary string) string {
	real, err := filepath.EvalSymlinks(binary)
	if err != nil {
		return "unknown"
	}
	// Debian: lib/rabbitmq_server-V/sbin/rabbitmq-server; a release: sbin/rabbitmq-server.
	apps, _ := filepath.Glob(filepath.Join(filepath.Dir(real), "..", "plugins", "rabbit-*", "ebin", "rabbit.app"))
	for _, app := range apps {
		data, err := os.ReadFile(app)
		if err != nil {
			continue
		}
		if m := regexp.MustCompile(`\{vsn,\s*"([0-9][^"]*)"\}`).FindSubmatch(data); m != nil {
			return string(m[1])
		}
	}
	return "unknown"
}

// Options of a local broker: the fields every local broker shares (MaxInflight sets
// mqtt.prefetch, Extra is more rabbitmq.conf; Dir also holds the data, logs and the Erlang
// cookie; HeapMB is unused).
type Options = brokerproc.Options

// Process is a RabbitMQ node this program started, with its own epmd.
type Process struct {
	// the Erlang VM, its folder and log, Usage (shared with brokers/mosquitto)
	*brokerproc.Process
	brokerproc.Listeners

	// epmd is the node's port mapper, started by msgbench so that it is a child that dies with
	// msgbench: a node left to itself starts a shared epmd daemon that outlives every broker.
	epmd *brokerproc.Process
}

// EpmdPID is the process id of the broker's epmd.
func (p *Process) EpmdPID() int { return p.epmd.PID() }

// Stop ends the node (SIGINT halts the VM at once: its data is scratch), then its epmd, and
// removes the folder when Start made it.
func (p *Process) Stop() error {
	err := p.Process.Stop()
	if p.epmd != nil {
		err = errors.Join(err, p.epmd.Stop())
	}
	return err
}

// readyTimeout bounds a start: RabbitMQ 3.10's MQTT plugin alone waits 3 to 6 s for cluster peers
// before it elects itself, and the VM boots slowly on a busy machine.
const readyTimeout = 90 * time.Second

// Start starts a RabbitMQ node with the MQTT plugin on free loopback ports and waits until every
// listener answers an MQTT CONNECT.
func Start(ctx context.Context, o Options) (*Process, error) {
	if _, err := (Config{Extra: o.Extra}).Render(); err != nil {
		return nil, err // spec.broker.config is wrong whatever is installed
	}
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	epmd, err := epmdBinary()
	if err != nil {
		return nil, err
	}
	return brokerproc.StartOnFreePorts(o, func(o Options) (*Process, error) { return start(ctx, bin, epmd, o) })
}

// epmdBinary finds Erlang's epmd (Debian's erlang-base puts it on PATH).
func epmdBinary() (string, error) {
	if p, err := exec.LookPath("epmd"); err == nil {
		return p, nil
	}
	if erl, err := exec.LookPath("erl"); err == nil {
		if real, err := filepath.EvalSymlinks(erl); err == nil {
			if p := filepath.Join(filepath.Dir(real), "epmd"); isFile(p) {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("%w (Erlang's epmd not found)", ErrNotInstalled)
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

func start(ctx context.Context, bin, epmdBin string, o Options) (*Process, error) {
	bp, err := brokerproc.New("rabbitmq", o.Dir, 10*time.Second)
	if err != nil {
		return nil, err
	}
	p := &Process{Process: bp, Listeners: brokerproc.Listeners{Version: Version(bin)}}
	fail := func(err error) (*Process, error) {
		_ = p.Stop()
		return nil, err
	}
	// mqtt, mqtts, Erlang distribution, epmd, ws, wss
	ports, err := brokerproc.Ports(o, 6)
	if err != nil {
		return fail(err)
	}
	port := ports[0]
	distPort, epmdPort := ports[2], ports[3]
	cfg := Config{Port: port, BindAddress: o.Host, MaxInflight: o.MaxInflight, Extra: o.Extra}
	p.Addr = net.JoinHostPort(o.Host, strconv.Itoa(port))
	if o.TLS {
		var b *certs.Bundle
		if b, cfg.CAFile, cfg.CertFile, cfg.KeyFile, err = p.WriteTLS(o, "msgbench-rabbitmq"); err != nil {
			return fail(err)
		}
		cfg.TLSPort, cfg.TLSVersion = ports[1], o.TLSVersion
		p.TLSAddr = net.JoinHostPort(o.Host, strconv.Itoa(cfg.TLSPort))
		p.CA = b.CACert
	}
	if o.WebSocket {
		cfg.WSPort, cfg.WebSocketPath = ports[4], o.WSPath()
		p.WSAddr, p.WebSocketPath = net.JoinHostPort(o.Host, strconv.Itoa(cfg.WSPort)), o.WSPath()
		if o.TLS {
			cfg.WSSPort = ports[5]
			p.WSSAddr = net.JoinHostPort(o.Host, strconv.Itoa(cfg.WSSPort))
		}
	}
	files, err := cfg.Render()
	if err != nil {
		return fail(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(p.Dir, name), []byte(data), 0o600); err != nil {
			return fail(err)
		}
	}
	for _, d := range []string{"home", "mnesia", "log"} {
		if err := os.MkdirAll(filepath.Join(p.Dir, d), 0o700); err != nil {
			return fail(err)
		}
	}

	// epmd first, listening before the node boots: a node that finds no epmd starts a daemon.
	if p.epmd, err = brokerproc.New("rabbitmq epmd", p.Dir, 2*time.Second); err != nil {
		return fail(err)
	}
	epmdAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(epmdPort))
	if err := p.epmd.Start(exec.Command(epmdBin, "-port", strconv.Itoa(epmdPort), "-address", "127.0.0.1"), o.Start); err != nil {
		return fail(err)
	}
	err = p.epmd.WaitReady(ctx, 5*time.Second, 10*time.Millisecond, "listen on "+epmdAddr, func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		c, err := o.DialContext(ctx, "tcp", epmdAddr)
		if err == nil {
			_ = c.Close()
		}
		return err
	})
	if err != nil {
		return fail(err)
	}

	cmd := exec.Command(bin)
	cmd.Dir = p.Dir
	cmd.Env = env(p.Dir, distPort, epmdPort)
	if err := p.Start(cmd, o.Start); err != nil {
		return fail(err)
	}
	if err := p.WaitMQTT(ctx, o, readyTimeout, p.Addr, p.TLSAddr, p.CA); err != nil {
		return fail(err)
	}
	if err := p.WaitWebSocket(ctx, o, readyTimeout, p.Listeners, p.WebSocketPath); err != nil {
		return fail(err)
	}
	return p, nil
}

// env is the node's environment: msgbench's without RabbitMQ or Erlang settings of its own, and
// every path RabbitMQ reads or writes inside dir, so that nothing of the host's installation
// (/etc/rabbitmq, /var/lib/rabbitmq, the user's ~/.erlang.cookie) is used or changed.
func env(dir string, distPort, epmdPort int) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "RABBITMQ_") || strings.HasPrefix(k, "ERL_") || k == "HOME" || k == "NOTIFY_SOCKET" {
			continue
		}
		out = append(out, kv)
	}
	return append(out,
		"HOME="+filepath.Join(dir, "home"), // the node writes its Erlang cookie there
		"RABBITMQ_CONFIG_FILE="+filepath.Join(dir, ConfFile),
		"RABBITMQ_CONFIG_FILES="+filepath.Join(dir, "conf.d"),                  // absent: no /etc/rabbitmq/conf.d
		"RABBITMQ_ADVANCED_CONFIG_FILE="+filepath.Join(dir, "advanced.config"), // absent
		"RABBITMQ_CONF_ENV_FILE="+filepath.Join(dir, "rabbitmq-env.conf"),      // absent: no /etc/rabbitmq/rabbitmq-env.conf
		"RABBITMQ_ENABLED_PLUGINS_FILE="+filepath.Join(dir, PluginsFile),
		"RABBITMQ_MNESIA_BASE="+filepath.Join(dir, "mnesia"),
		"RABBITMQ_LOG_BASE="+filepath.Join(dir, "log"),
		"ERL_CRASH_DUMP="+filepath.Join(dir, "log", "erl_crash.dump"),
		// A node name of its own and distribution on loopback ports of its own, registered with
		// its own epmd: several brokers run at once, and none is reachable from elsewhere.
		"RABBITMQ_NODENAME=msgbench@localhost",
		"RABBITMQ_DIST_PORT="+strconv.Itoa(distPort),
		"ERL_EPMD_PORT="+strconv.Itoa(epmdPort),
		"ERL_EPMD_ADDRESS=127.0.0.1",
		// No Erlang VM of this node (nor the helper the node runs to check epmd) may start an
		// epmd daemon, should msgbench's epmd be gone: the daemon would outlive the broker.
		"ERL_AFLAGS=-start_epmd false",
		// RABBITMQ_ALLOW_INPUT makes the script exec the VM instead of running it as a child of a
		// shell that forwards signals: the VM itself gets the parent-death signal, so it dies with
		// msgbench. -noinput then keeps the Erlang shell closed, and +B makes SIGINT halt it.
		"RABBITMQ_ALLOW_INPUT=true",
		"RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=-noinput +B -kernel inet_dist_use_interface {127,0,0,1}",
	)
}
