//go:build linux

package emulator

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/msgbench/msgbench/internal/dialctx"
	"github.com/msgbench/msgbench/internal/guardian"
	"github.com/msgbench/msgbench/internal/spawn"
)

// Namespace is one side of a link: a network namespace holding a TUN device toward the other
// side (and a loopback device, up). It exists while its Link is open.
type Namespace struct {
	name   string
	fd     int // an nsfs descriptor: holds the namespace while no process lives in it
	ifname string
	addrs  []netip.Addr
	tag    string // environment entry marking processes started here, for stale-process cleanup

	spawner *spawn.Spawner

	mu   sync.Mutex
	cmds []*exec.Cmd
}

// newNamespace creates an empty network namespace. unshare moves only the calling thread, so it
// runs on a locked thread that goes back to its namespace afterwards. (Ending the thread instead
// would be simpler, but a thread that ends fires the Pdeathsig of every child it forked.)
func newNamespace(name, tag string, sp *spawn.Spawner) (*Namespace, error) {
	fd := -1
	err := onLockedThread(func() error {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("unshare(CLONE_NEWNET): %w", err)
		}
		var err error
		fd, err = unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		if fd >= 0 {
			_ = unix.Close(fd)
		}
		return nil, fmt.Errorf("create network namespace %s: %w", name, err)
	}
	guardian.TrackNamespace(fd) // if msgbench dies, its guardian kills whatever still runs inside
	return &Namespace{name: name, fd: fd, tag: tag, spawner: sp}, nil
}

// onLockedThread runs fn on a goroutine locked to its OS thread and puts the thread back into
// the network namespace it started in. If that fails, the thread stays locked and ends with the
// goroutine rather than serve others in the wrong namespace.
func onLockedThread(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		home, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("open this thread's network namespace: %w", err)
			return
		}
		defer func() { _ = unix.Close(home) }()
		ferr := fn()
		if err := unix.Setns(home, unix.CLONE_NEWNET); err != nil {
			errc <- errors.Join(ferr, fmt.Errorf("return to the original network namespace: %w", err))
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// Name is the namespace's name, "msgb-<pid>-<n>-device" or "-server", for messages.
func (n *Namespace) Name() string { return n.name }

// Interface is the name of the TUN device toward the other side.
func (n *Namespace) Interface() string { return n.ifname }

// Addrs are this side's addresses on the link: IPv4, then IPv6 unless the MTU is below IPv6's
// minimum of 1280.
func (n *Namespace) Addrs() []netip.Addr { return append([]netip.Addr(nil), n.addrs...) }

// Path names the namespace for tools while the link is open, e.g.
// nsenter --net=<path> tcpdump -ni msgb-dev.
func (n *Namespace) Path() string { return fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), n.fd) }

// Do runs fn on an OS thread inside the namespace. Sockets fn creates stay in the namespace
// wherever they are used later; goroutines fn starts run outside it. fn runs on a goroutine of
// its own, so the caller's thread never moves.
func (n *Namespace) Do(fn func() error) error {
	return onLockedThread(func() error {
		if err := unix.Setns(n.fd, unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("enter network namespace %s: %w", n.name, err)
		}
		return fn()
	})
}

// DialContext connects to address from inside the namespace. The address must be an IP
// literal with a port (the link has no DNS): a name would be resolved, and raced for IPv4 and
// IPv6, on goroutines outside the namespace.
func (n *Namespace) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	if _, err := netip.ParseAddrPort(address); err != nil {
		return nil, fmt.Errorf("dial %s in %s: want an IP address and a port: %w", address, n.name, err)
	}
	var conn net.Conn
	err := n.Do(func() error {
		// No TCP keep-alive probes (Go's default is one every 15 s): a device sends none (the
		// kernel's default waits 2 h), and they would keep an emulated radio from ever going idle.
		d := net.Dialer{KeepAlive: -1}
		var err error
		if dialctx.Unconnected(ctx, network) { // a socket searching for its gateway (MQTT-SN)
			conn, err = dialctx.ListenUDP(ctx, &d, network, address)
			return err
		}
		dialctx.Bind(ctx, &d, network) // a local port the client asked for
		conn, err = d.DialContext(ctx, network, address)
		return err
	})
	return conn, err
}

// Listen announces on a local address inside the namespace ("tcp", ":1883").
func (n *Namespace) Listen(ctx context.Context, network, address string) (net.Listener, error) {
	var l net.Listener
	err := n.Do(func() error {
		lc := net.ListenConfig{KeepAlive: -1} // no probes on accepted connections either (DialContext)
		var err error
		l, err = lc.Listen(ctx, network, address)
		return err
	})
	return l, err
}

// ListenPacket opens a packet socket inside the namespace ("udp", ":0"); for UDP it is a
// *net.UDPConn, which quic-go can use with its optimisations.
func (n *Namespace) ListenPacket(ctx context.Context, network, address string) (net.PacketConn, error) {
	var pc net.PacketConn
	err := n.Do(func() error {
		var lc net.ListenConfig
		var err error
		pc, err = lc.ListenPacket(ctx, network, address)
		return err
	})
	return pc, err
}

// Start starts cmd inside the namespace. It gets SIGKILL if msgbench dies (unless cmd sets its
// own Pdeathsig; see internal/spawn) and an environment entry that lets a later msgbench find it
// if it outlives this one; Close kills it if it still runs. Wait for it as usual.
func (n *Namespace) Start(cmd *exec.Cmd) error {
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, n.tag)
	if err := n.spawner.Start(n.fd, cmd); err != nil {
		if errors.Is(err, spawn.ErrStopped) {
			err = errors.New("the link is closed")
		}
		return fmt.Errorf("start %s in %s: %w", cmd.Path, n.name, err)
	}
	n.mu.Lock()
	n.cmds = append(n.cmds, cmd)
	n.mu.Unlock()
	return nil
}

// close kills every process still inside the namespace (children, and whatever they started)
// and releases it.
func (n *Namespace) close() error {
	if n.fd < 0 {
		return nil
	}
	err := killNamespaceProcesses(n.fd)
	n.mu.Lock()
	for _, c := range n.cmds {
		if c.Process != nil && c.ProcessState == nil {
			_ = c.Process.Kill() // also when it left the namespace
		}
	}
	n.cmds = nil
	n.mu.Unlock()
	guardian.ForgetNamespace(n.fd)
	if cerr := unix.Close(n.fd); cerr != nil && err == nil {
		err = cerr
	}
	n.fd = -1
	return err
}

// TCPListening reports whether a socket in the namespace listens on TCP port (IPv4 or IPv6). It
// reads the kernel's socket table instead of connecting, so a server that serves one client only
// (iperf3 -1) does not lose it to the check.
func (n *Namespace) TCPListening(port int) (bool, error) {
	found := false
	err := n.Do(func() error {
		for _, table := range []string{"tcp", "tcp6"} {
			// /proc/thread-self/net shows the namespace of the thread that reads it.
			data, err := os.ReadFile("/proc/thread-self/net/" + table)
			if err != nil {
				return err
			}
			if listensOn(data, port) {
				found = true
				return nil
			}
		}
		return nil
	})
	return found, err
}

// listensOn finds a LISTEN entry (state 0A) for port in a /proc/net/tcp table.
func listensOn(table []byte, port int) bool {
	suffix := fmt.Sprintf(":%04X", port)
	for i, line := range strings.Split(string(table), "\n") {
		fields := strings.Fields(line)
		if i == 0 || len(fields) < 4 {
			continue
		}
		if strings.HasSuffix(fields[1], suffix) && fields[3] == "0A" {
			return true
		}
	}
	return false
}
