//go:build linux

package emulator

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ipv6MinMTU is the smallest MTU IPv6 runs on (RFC 8200); the kernel disables IPv6 on a device
// with less.
const ipv6MinMTU = 1280

// txQueueLen is the TUN devices' transmit queue, in packets.
const txQueueLen = 1000

// openTUN creates a TUN device (IP packets, no packet-info header, no offloads: the kernel hands
// over every packet as it goes on the wire, already segmented) in the calling thread's network
// namespace, gives it the MTU and addresses, brings it and the loopback device up, and returns it
// non-blocking, so reads wait in Go's poller and Close interrupts them.
func openTUN(name string, mtu int, addrs []netip.Prefix) (*os.File, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
			return nil, fmt.Errorf("open /dev/net/tun: %w: run as root, or make the device readable and writable for this user", err)
		}
		return nil, fmt.Errorf("open /dev/net/tun (is the tun module loaded? modprobe tun): %w", err)
	}
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		_ = unix.Close(fd)
		return nil, err
	}
	ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("create TUN device %s: %w", name, err)
	}
	// Wrap it only now: Go's poller registers the descriptor with epoll in NewFile, and a TUN
	// descriptor not yet attached to a device cannot be polled.
	file := os.NewFile(uintptr(fd), "tun:"+name)
	ok := false
	defer func() {
		if !ok {
			_ = file.Close()
		}
	}()
	if err := configure(name, mtu, addrs); err != nil {
		return nil, fmt.Errorf("configure %s: %w", name, err)
	}
	ok = true
	return file, nil
}

// configure sets MTU and addresses and brings the device and lo up with ioctls on sockets of the
// current namespace (no netlink library, no ip binary).
func configure(name string, mtu int, addrs []netip.Prefix) error {
	s4, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer func() { _ = unix.Close(s4) }()

	ifr, _ := unix.NewIfreq(name)
	ifr.SetUint32(uint32(mtu))
	if err := unix.IoctlIfreq(s4, unix.SIOCSIFMTU, ifr); err != nil {
		return fmt.Errorf("set MTU %d: %w", mtu, err)
	}
	// The queue between the kernel and the forwarder: TUN's default of 500 packets overflows in
	// a burst (a sendmmsg, a GSO send) before the forwarder is scheduled; 1000 is Ethernet's.
	ifr.SetUint32(txQueueLen)
	if err := unix.IoctlIfreq(s4, unix.SIOCSIFTXQLEN, ifr); err != nil {
		return fmt.Errorf("set queue length: %w", err)
	}
	// Before the device goes up: duplicate address detection would leave an address tentative
	// (unusable) for a second or more, and no other host shares this link; router solicitations
	// would add packets the benchmark did not send. /proc/sys/net shows the namespace of the
	// thread that opens it.
	for key, value := range map[string]string{"accept_dad": "0", "router_solicitations": "0"} {
		if err := os.WriteFile("/proc/sys/net/ipv6/conf/"+name+"/"+key, []byte(value), 0); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	// The TUN device carries no multicast: without the flag the kernel sends no MLD reports of
	// its own, so the link carries only what the two sides send.
	for _, dev := range []struct {
		name  string
		clear uint16
	}{{"lo", 0}, {name, unix.IFF_MULTICAST}} {
		if err := setUp(s4, dev.name, dev.clear); err != nil {
			return err
		}
	}
	for _, p := range addrs {
		if p.Addr().Is4() {
			err = addIPv4(s4, name, p)
		} else {
			err = addIPv6(name, p)
		}
		if err != nil {
			return fmt.Errorf("add address %v: %w", p, err)
		}
	}
	return nil
}

// setUp brings dev up and clears the flags in clear.
func setUp(s int, dev string, clear uint16) error {
	ifr, err := unix.NewIfreq(dev)
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(s, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("get flags of %s: %w", dev, err)
	}
	ifr.SetUint16(ifr.Uint16()&^clear | unix.IFF_UP)
	if err := unix.IoctlIfreq(s, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring %s up: %w", dev, err)
	}
	return nil
}

func addIPv4(s int, dev string, p netip.Prefix) error {
	ifr, _ := unix.NewIfreq(dev)
	a := p.Addr().As4()
	if err := ifr.SetInet4Addr(a[:]); err != nil {
		return err
	}
	if err := unix.IoctlIfreq(s, unix.SIOCSIFADDR, ifr); err != nil {
		return err
	}
	var m [4]byte
	for i := 0; i < p.Bits(); i++ {
		m[i/8] |= 0x80 >> (i % 8)
	}
	if err := ifr.SetInet4Addr(m[:]); err != nil {
		return err
	}
	return unix.IoctlIfreq(s, unix.SIOCSIFNETMASK, ifr)
}

// in6Ifreq is the kernel's struct in6_ifreq (linux/ipv6.h), which x/sys/unix does not wrap.
type in6Ifreq struct {
	addr      [16]byte
	prefixlen uint32
	ifindex   int32
}

func addIPv6(dev string, p netip.Prefix) error {
	s6, err := unix.Socket(unix.AF_INET6, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer func() { _ = unix.Close(s6) }()
	ifr, _ := unix.NewIfreq(dev)
	if err := unix.IoctlIfreq(s6, unix.SIOCGIFINDEX, ifr); err != nil {
		return err
	}
	req := in6Ifreq{addr: p.Addr().As16(), prefixlen: uint32(p.Bits()), ifindex: int32(ifr.Uint32())}
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(s6), unix.SIOCSIFADDR, uintptr(unsafe.Pointer(&req))); errno != 0 {
		return errno
	}
	// The kernel keeps the address tentative until it sees the device ready, which its link
	// watcher reports asynchronously; wait until a socket can bind to it.
	sa := &unix.SockaddrInet6{Addr: p.Addr().As16()}
	deadline := time.Now().Add(3 * time.Second)
	for {
		err := unix.Bind(s6, sa)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EADDRNOTAVAIL) || time.Now().After(deadline) {
			return fmt.Errorf("address %v did not become usable: %w", p.Addr(), err)
		}
		time.Sleep(time.Millisecond)
	}
}
