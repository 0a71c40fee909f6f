//go:build linux

package emulator

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/msgbench/msgbench/internal/spawn"
)

// Isolation is a network namespace with nothing but its own loopback device, up (127.0.0.1, and
// ::1 when the kernel has IPv6): what runs inside talks over loopback, the same kernel path as the
// host's, and a server that binds every address listens on none of the machine's. Its Namespace
// methods (Start, DialContext, Listen, ListenPacket, Do) work as a link's do. It exists until
// Close; if msgbench dies first, the kernel removes it and its processes get SIGKILL.
type Isolation struct {
	*Namespace
	spawner *spawn.Spawner

	closeOnce sync.Once
	closeErr  error
}

// Isolated creates an isolation namespace. Like Start, it first kills processes that a dead
// msgbench left running in its namespaces, and needs CheckPrivileges' capabilities.
func Isolated() (_ *Isolation, err error) {
	if err := CheckPrivileges(); err != nil {
		return nil, err
	}
	reapOnce.Do(reapStale)
	name := fmt.Sprintf("msgb-%d-%d", os.Getpid(), linkCounter.Add(1)-1)
	iso := &Isolation{spawner: spawn.New()}
	defer func() {
		if err != nil {
			err = errors.Join(fmt.Errorf("isolation %s: %w", name, err), iso.Close())
		}
	}()
	ns, err := newNamespace(name+"-isolated", tagVar+"="+name, iso.spawner)
	if err != nil {
		return nil, err
	}
	iso.Namespace = ns
	err = ns.Do(func() error {
		addrs, err := loopbackUp()
		ns.addrs = addrs
		return err
	})
	if err != nil {
		return nil, err
	}
	return iso, nil
}

// loopbackUp brings this thread's namespace's lo up and returns its addresses, IPv4 first.
func loopbackUp() ([]netip.Addr, error) {
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = unix.Close(s) }()
	if err := setUp(s, "lo", 0); err != nil {
		return nil, err
	}
	// The netlink socket behind InterfaceAddrs is opened on this thread, so in the namespace.
	ifas, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("read lo's addresses: %w", err)
	}
	var v4, v6 []netip.Addr
	for _, ifa := range ifas {
		p, err := netip.ParsePrefix(ifa.String())
		if err != nil {
			continue
		}
		if a := p.Addr(); a.Is4() {
			v4 = append(v4, a)
		} else {
			v6 = append(v6, a)
		}
	}
	if len(v4) == 0 {
		return nil, errors.New("lo came up without 127.0.0.1")
	}
	return append(v4, v6...), nil
}

// Close kills every process still inside and releases the namespace. It is safe to call more
// than once.
func (i *Isolation) Close() error {
	i.closeOnce.Do(func() {
		if i.Namespace != nil {
			i.closeErr = i.close()
		}
		i.spawner.Stop()
	})
	return i.closeErr
}
