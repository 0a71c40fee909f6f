package drivers

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/msgbench/msgbench/internal/dialctx"
)

// Source addresses over 127.0.0.0/8.
//
// A connection from one source address to one destination host:port needs an ephemeral port of
// its own (net.ipv4.ip_local_port_range: 28,232 ports by default), so one address reaches a
// loopback broker at most that many times, and fewer while closed connections sit in TIME_WAIT.
// Every address of 127.0.0.0/8 is local on Linux, so clients beyond a threshold bind distinct
// source addresses with IP_BIND_ADDRESS_NO_PORT: the address is fixed at bind, the port is still
// picked at connect, unique per 4-tuple, so each address brings a whole port range (as
// emqtt-bench spreads 200k clients over 4 source addresses).

// SpreadEnv is the environment variable that, set to a number, says how many connections a process opens to one loopback
// destination from the default source address before it binds others (0: from the first one).
const SpreadEnv = "MSGBENCH_SOURCE_SPREAD_AFTER"

// SourceAddresses is how many source addresses one process spreads over: 127.H.L.1 to
// 127.H.L.254, with H.L taken from its process id so that worker processes running at once use
// addresses of their own.
const SourceAddresses = 254

// SpreadAfter is how many connections to one loopback destination a process opens from the
// default source address, 127.0.0.1, before it binds others: a sixteenth of the ephemeral port
// range. 127.0.0.1's ports are shared by every process of the machine (other worker processes,
// the gateway, anything else), so up to 16 processes each at this threshold still fit in them;
// a run under it connects exactly as before.
func SpreadAfter(portRange int) int { return max(1, portRange/16) }

// PerSourceAddress is how many connections to one destination a process opens from each of
// its own source addresses before it moves to the next: half the port range, which leaves
// room for connections that closed and whose ports are still in TIME_WAIT.
func PerSourceAddress(portRange int) int { return max(1, portRange/2) }

// PortRange is the size of the machine's ephemeral port range
// (/proc/sys/net/ipv4/ip_local_port_range), or Linux's default, 28,232, when it cannot be read.
func PortRange() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 60999 - 32768 + 1
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 60999 - 32768 + 1
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || hi < lo {
		return 60999 - 32768 + 1
	}
	return hi - lo + 1
}

// spreader hands out source addresses for connections to loopback destinations.
type spreader struct {
	after, perAddr int64
	block          [2]byte // 127.block[0].block[1].x
	mu             sync.Mutex
	count          map[string]*atomic.Int64 // connections dialled so far, per destination
	// dialDefault replaces the dial from the default address (tests: a port range run out).
	dialDefault DialFunc
}

func newSpreader(after, perAddr int, pid int) *spreader {
	v := 1 + pid%0xfffe // never 0: 127.0.0.x stays the default addresses'
	return &spreader{after: int64(after), perAddr: int64(max(1, perAddr)), block: [2]byte{byte(v >> 8), byte(v)}, count: map[string]*atomic.Int64{}}
}

// processSpreader is the process's spreader: the thresholds from the port range, or SpreadEnv.
var processSpreader = sync.OnceValue(func() *spreader {
	pr := PortRange()
	after := SpreadAfter(pr)
	if v, err := strconv.Atoi(os.Getenv(SpreadEnv)); err == nil && v >= 0 {
		after = v
	}
	return newSpreader(after, PerSourceAddress(pr), os.Getpid())
})

func (s *spreader) counter(address string) *atomic.Int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.count[address]
	if c == nil {
		c = new(atomic.Int64)
		s.count[address] = c
	}
	return c
}

// source returns the source address of the n-th connection to address, or an invalid Addr
// for the default one.
func (s *spreader) source(address string) netip.Addr {
	n := s.counter(address).Add(1) - 1
	if n < s.after {
		return netip.Addr{}
	}
	i := (n-s.after)/s.perAddr%SourceAddresses + 1
	return netip.AddrFrom4([4]byte{127, s.block[0], s.block[1], byte(i)})
}

// dial dials like net.Dialer, from a spread source address when address is an IPv4 loopback
// literal and the process's connections to it passed the threshold. When the default address
// has no port left (other processes took them: EADDRNOTAVAIL, EAGAIN for UDP), it spreads from
// then on.
func (s *spreader) dial(ctx context.Context, network, address string) (net.Conn, error) {
	if dialctx.Unconnected(ctx, network) { // an MQTT-SN client's search for its gateway: any address
		return dialctx.ListenUDP(ctx, &net.Dialer{}, network, address)
	}
	if dialctx.LocalPort(ctx) != 0 { // a port of the client's own (spec.mqttsn.sourcePort): from the default address
		d := net.Dialer{KeepAlive: -1}
		dialctx.Bind(ctx, &d, network)
		return d.DialContext(ctx, network, address)
	}
	src, eligible := s.sourceFor(network, address)
	if !src.IsValid() {
		c, err := s.dialFrom(ctx, network, address, src)
		if err == nil || !eligible || !portsRanOut(err) {
			return c, err
		}
		s.exhausted(address)
		src, _ = s.sourceFor(network, address)
	}
	return s.dialFrom(ctx, network, address, src)
}

func (s *spreader) dialFrom(ctx context.Context, network, address string, src netip.Addr) (net.Conn, error) {
	if s.dialDefault != nil && !src.IsValid() {
		return s.dialDefault(ctx, network, address)
	}
	d := net.Dialer{KeepAlive: -1} // a device sends no TCP keep-alive probes (emulator.Namespace.DialContext)
	if src.IsValid() {
		switch network {
		case "tcp", "tcp4":
			d.LocalAddr = &net.TCPAddr{IP: src.AsSlice()}
		default:
			d.LocalAddr = &net.UDPAddr{IP: src.AsSlice()}
		}
		d.Control = bindAddressNoPort
	}
	return d.DialContext(ctx, network, address)
}

// sourceFor returns the source address of the next connection to address (invalid: the
// default), and whether the destination is one the spreader may spread to at all.
func (s *spreader) sourceFor(network, address string) (netip.Addr, bool) {
	switch network {
	case "tcp", "tcp4", "udp", "udp4":
	default:
		return netip.Addr{}, false
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !ap.Addr().Is4() || !ap.Addr().IsLoopback() {
		return netip.Addr{}, false
	}
	return s.source(address), true
}

// portsRanOut reports a dial that found no free local port: EADDRNOTAVAIL from a TCP
// connect, EAGAIN from a UDP socket's automatic bind.
func portsRanOut(err error) bool {
	return errors.Is(err, syscall.EADDRNOTAVAIL) || errors.Is(err, syscall.EAGAIN)
}

// exhausted makes every later connection to address spread.
func (s *spreader) exhausted(address string) {
	c := s.counter(address)
	for {
		n := c.Load()
		if n >= s.after || c.CompareAndSwap(n, s.after) {
			return
		}
	}
}

// bindAddressNoPort sets IP_BIND_ADDRESS_NO_PORT before bind: the kernel then picks the port
// at connect, unique per 4-tuple, instead of reserving one for any destination at bind.
func bindAddressNoPort(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_BIND_ADDRESS_NO_PORT, 1)
	})
	if err != nil {
		return err
	}
	return serr
}
