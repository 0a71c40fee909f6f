package drivers

import (
	"context"
	"net"
	"net/netip"
	"os"
	"syscall"
	"testing"
	"time"
)

// A listener on 127.0.0.1 sees the clients past the threshold arrive from distinct source
// addresses of the process's block, for TCP and for connected UDP.
func TestSpreaderSourceAddresses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s := newSpreader(2, 3, 0x1234) // 2 from 127.0.0.1, then 3 per address: 127.18.53.1, .2, …
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const n = 9
	seen := make(chan netip.Addr, n)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			seen <- c.RemoteAddr().(*net.TCPAddr).AddrPort().Addr()
			defer c.Close()
		}
	}()
	for i := 0; i < n; i++ {
		c, err := s.dial(ctx, "tcp", ln.Addr().String())
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		defer c.Close()
	}
	got := map[netip.Addr]int{}
	for i := 0; i < n; i++ {
		got[<-seen]++
	}
	want := map[netip.Addr]int{
		netip.MustParseAddr("127.0.0.1"):   2,
		netip.MustParseAddr("127.18.53.1"): 3,
		netip.MustParseAddr("127.18.53.2"): 3,
		netip.MustParseAddr("127.18.53.3"): 1,
	}
	if len(got) != len(want) {
		t.Fatalf("the listener saw sources %v, want %v", got, want)
	}
	for a, k := range want {
		if got[a] != k {
			t.Errorf("source %s: %d connections, want %d (all: %v)", a, got[a], k, got)
		}
	}

	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	for i := 0; i < 3; i++ { // the UDP destination has its own count: .1, .1, then 127.18.53.1
		c, err := s.dial(ctx, "udp", pc.LocalAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte{1}); err != nil {
			t.Fatal(err)
		}
	}
	udpSeen := map[netip.Addr]bool{}
	buf := make([]byte, 8)
	_ = pc.SetReadDeadline(time.Now().Add(3 * time.Second))
	for i := 0; i < 3; i++ {
		_, from, err := pc.ReadFrom(buf)
		if err != nil {
			t.Fatal(err)
		}
		udpSeen[from.(*net.UDPAddr).AddrPort().Addr()] = true
	}
	if !udpSeen[netip.MustParseAddr("127.0.0.1")] || !udpSeen[netip.MustParseAddr("127.18.53.1")] {
		t.Errorf("UDP sources %v, want 127.0.0.1 and 127.18.53.1", udpSeen)
	}
}

// Destinations that are not IPv4 loopback literals, and other networks, keep the default source.
func TestSpreaderLeavesOthersAlone(t *testing.T) {
	s := newSpreader(0, 1, 7)
	for _, c := range []struct{ network, address string }{
		{"tcp", "192.0.2.1:1883"}, {"tcp", "[::1]:1883"}, {"tcp", "localhost:1883"}, {"unix", "/tmp/x"}, {"tcp6", "127.0.0.1:1"},
	} {
		if a, _ := s.sourceFor(c.network, c.address); a.IsValid() {
			t.Errorf("%s %s: source %s, want the default", c.network, c.address, a)
		}
	}
	if a, _ := s.sourceFor("tcp", "127.0.0.1:1883"); a != netip.MustParseAddr("127.0.8.1") {
		t.Errorf("loopback with threshold 0: source %s, want 127.0.8.1", a)
	}
	// The addresses wrap after SourceAddresses and never reach .0 or .255.
	for i := 0; i < 2*SourceAddresses; i++ {
		a, _ := s.sourceFor("tcp", "127.0.0.1:1")
		if b := a.As4(); b[3] == 0 || b[3] == 255 {
			t.Fatalf("dial %d: source %s", i, a)
		}
	}
}

func TestSpreadThresholds(t *testing.T) {
	for _, c := range []struct{ ports, after, per int }{
		{28232, 1764, 14116}, {64511, 4031, 32255}, {10, 1, 5}, {0, 1, 1},
	} {
		if a, p := SpreadAfter(c.ports), PerSourceAddress(c.ports); a != c.after || p != c.per {
			t.Errorf("port range %d: after %d per address %d, want %d and %d", c.ports, a, p, c.after, c.per)
		}
	}
	if PortRange() < 1 {
		t.Error("PortRange < 1")
	}
}

// When 127.0.0.1 has no port left for the destination (EADDRNOTAVAIL: other processes took
// them), the connection and every later one come from the process's own addresses.
func TestSpreaderFallsBackWhenTheDefaultAddressRunsOut(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := newSpreader(1000, 10, 0x0101)
	s.dialDefault = func(context.Context, string, string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.EADDRNOTAVAIL)}
	}
	for i := 0; i < 2; i++ {
		c, err := s.dial(context.Background(), "tcp", ln.Addr().String())
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		peer, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		if got := peer.RemoteAddr().(*net.TCPAddr).AddrPort().Addr(); got != netip.MustParseAddr("127.1.2.1") {
			t.Errorf("connection %d from %s, want 127.1.2.1", i, got)
		}
		_ = peer.Close()
		_ = c.Close()
	}
	// Another destination still starts from the default address.
	if a, _ := s.sourceFor("tcp", "127.0.0.1:9"); a.IsValid() {
		t.Errorf("another destination: %s", a)
	}
	// A refused connection is no reason to spread.
	s2 := newSpreader(1000, 10, 1)
	if _, err := s2.dial(context.Background(), "tcp", "127.0.0.1:1"); err == nil {
		t.Fatal("port 1 accepted")
	}
	if a, _ := s2.sourceFor("tcp", "127.0.0.1:1"); a.IsValid() {
		t.Errorf("after a refused connection: %s", a)
	}
}
