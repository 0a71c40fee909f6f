//go:build linux

package emulator

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/msgbench/msgbench/netem"
)

// TestMTU checks that a link's MTU is the devices' MTU on both sides: a datagram one byte too
// big for it is refused with EMSGSIZE (don't-fragment set), one that fits arrives, TCP sizes its
// segments to it, and IPv6 is left out below its minimum MTU of 1280.
func TestMTU(t *testing.T) {
	for _, mtu := range []int{296, 576, 1280} {
		t.Run("MTU "+strconv.Itoa(mtu), func(t *testing.T) {
			t.Parallel()
			l := startLink(t, netem.Link{MTU: mtu}, Options{})
			for _, ns := range []*Namespace{l.Device(), l.Server()} {
				if got := interfaceMTU(t, ns); got != mtu {
					t.Errorf("%s: %s has MTU %d, want %d", ns.Name(), ns.Interface(), got, mtu)
				}
				if has6 := len(ns.Addrs()) == 2; has6 != (mtu >= 1280) {
					t.Errorf("%s: addresses %v at MTU %d", ns.Name(), ns.Addrs(), mtu)
				}
			}

			ctx := context.Background()
			addr := serverAddr(t, l, false, 6000)
			pc, err := l.Server().ListenPacket(ctx, "udp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = pc.Close() }()
			c, err := l.Device().DialContext(ctx, "udp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = c.Close() }()
			setDontFragment(t, c.(*net.UDPConn))
			fits := mtu - 20 - 8 // IPv4 and UDP headers
			if _, err := c.Write(make([]byte, fits+1)); !errors.Is(err, unix.EMSGSIZE) {
				t.Errorf("a %d-byte datagram on MTU %d: error %v, want EMSGSIZE", fits+1, mtu, err)
			}
			if _, err := c.Write(make([]byte, fits)); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 70000)
			if n, _, err := pc.ReadFrom(buf); err != nil || n != fits {
				t.Errorf("received %d bytes, %v; want %d", n, err, fits)
			}

			// TCP: MSS = MTU − 40 (IPv4 + TCP headers) − 12 (timestamps).
			ln, err := l.Server().Listen(ctx, "tcp", serverAddr(t, l, false, 6001))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = ln.Close() }()
			go func() {
				s, err := ln.Accept()
				if err == nil {
					_, _ = io.Copy(io.Discard, s)
					_ = s.Close()
				}
			}()
			tc, err := l.Device().DialContext(ctx, "tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tc.Close() }()
			if _, err := tc.Write(make([]byte, 64<<10)); err != nil {
				t.Fatal(err)
			}
			if mss := tcpInfo(t, tc).Snd_mss; int(mss) != mtu-52 {
				t.Errorf("TCP MSS %d on MTU %d, want %d", mss, mtu, mtu-52)
			}
		})
	}
}

func interfaceMTU(t *testing.T, ns *Namespace) int {
	t.Helper()
	var mtu int
	err := ns.Do(func() error {
		s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer func() { _ = unix.Close(s) }()
		ifr, err := unix.NewIfreq(ns.Interface())
		if err != nil {
			return err
		}
		if err := unix.IoctlIfreq(s, unix.SIOCGIFMTU, ifr); err != nil {
			return err
		}
		mtu = int(ifr.Uint32())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return mtu
}

func setDontFragment(t *testing.T, c *net.UDPConn) {
	t.Helper()
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_DO)
	}); err != nil || serr != nil {
		t.Fatal(err, serr)
	}
}
