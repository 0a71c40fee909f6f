package mqttsn

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/msgbench/msgbench/internal/dialctx"
	sn "github.com/msgbench/msgbench/internal/mqttsn"
	"github.com/msgbench/msgbench/plan"
	"github.com/msgbench/msgbench/results"
)

// Gateway discovery (spec.mqttsn.discovery, MQTT-SN 1.2 §6.1; docs/mqtt-sn.md#gateway-discovery).
//
// Every dialer of msgbench returns a connected socket, which receives only from the address it
// is connected to; a search needs one that is not: SEARCHGW may go to a broadcast address, and
// GWINFO comes from the gateway's own. So the client asks its dialer for an unconnected socket
// (dialctx.WithUnconnected): the same dialer, so the socket lives where the client's would (the
// emulator's device namespace, the worker's pod), bound to the client's spec.mqttsn.sourcePort
// when it has one. It sends SEARCHGW from it, and once a GWINFO arrived connects it to the
// gateway found: from then on it is the client's ordinary connected socket.

// discovery is what a driver's clients found, for the result's environment.
type discovery struct {
	mu  sync.Mutex
	sum results.Discovery
}

// Discovery implements drivers.DiscoveryReporter: nil without spec.mqttsn.discovery.
func (d *driver) Discovery() *results.Discovery {
	if d.found == nil {
		return nil
	}
	d.found.mu.Lock()
	defer d.found.mu.Unlock()
	c := d.found.sum
	c.Searched = append([]string(nil), c.Searched...)
	c.Gateways = append([]string(nil), c.Gateways...)
	return &c
}

// found is one client's discovery.
type found struct {
	gateway  netip.AddrPort // where the client connects
	id       byte           // the gateway id of GWINFO
	searches int            // SEARCHGW sent
	bytesIn  int            // GWINFO bytes received (and any other datagram the search read)
	dgIn     int
	took     time.Duration // first SEARCHGW sent → GWINFO received
}

// discover opens the client's socket unconnected, searches for a gateway and connects the
// socket to the one found.
func (d *driver) discover(ctx context.Context, o *plan.MQTTSNDiscovery) (net.Conn, *found, error) {
	search, err := o.SearchAddress(d.cfg.Address)
	if err != nil {
		return nil, nil, err
	}
	ua, err := net.ResolveUDPAddr("udp", search)
	if err != nil {
		return nil, nil, fmt.Errorf("spec.mqttsn.discovery.address %s: %w", search, err)
	}
	to := ua.AddrPort()
	to = netip.AddrPortFrom(to.Addr().Unmap(), to.Port())
	conn, err := d.dial(dialctx.WithUnconnected(ctx), "udp", to.String())
	if err != nil {
		return nil, nil, fmt.Errorf("open a socket to search for the gateway at %s: %w", search, err)
	}
	f, err := d.search(ctx, conn, o, to)
	if err != nil {
		_ = conn.Close()
		return nil, nil, err
	}
	d.record(to.String(), f)
	return conn, f, nil
}

// search sends SEARCHGW to to until a GWINFO arrives or o.Timeout passed, and connects conn to
// the gateway found.
func (d *driver) search(ctx context.Context, conn net.Conn, o *plan.MQTTSNDiscovery, to netip.AddrPort) (*found, error) {
	if conn.RemoteAddr() != nil {
		return nil, fmt.Errorf("spec.mqttsn.discovery: the clients' dialer gave a socket connected to %s, not an unconnected one (it does not honour dialctx.WithUnconnected)", conn.RemoteAddr())
	}
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("spec.mqttsn.discovery: the clients' dialer gave a %T, which exposes no socket to search from", conn)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	v6 := isV6(conn.LocalAddr())
	dst := sockaddr(to, v6)
	req, _ := (&sn.SearchGW{Radius: o.Radius}).Append(nil)
	deadline := time.Now().Add(o.Timeout)
	stop := context.AfterFunc(ctx, func() { _ = conn.SetReadDeadline(time.Unix(1, 0)) })
	defer func() {
		stop() // first: a cancellation after the search must not reach the session's socket
		_ = conn.SetReadDeadline(time.Time{})
	}()

	f := &found{}
	buf := make([]byte, 512)
	wait := o.Interval
	var start time.Time
	for {
		var werr error
		if err := rc.Write(func(fd uintptr) bool {
			werr = unix.Sendto(int(fd), req, 0, dst)
			return werr != unix.EAGAIN
		}); err != nil {
			return nil, err
		}
		if werr != nil {
			return nil, fmt.Errorf("send SEARCHGW to %s (spec.mqttsn.discovery.address): %w", to, werr)
		}
		if f.searches == 0 {
			start = time.Now()
		}
		f.searches++
		next := time.Now().Add(wait + rand.N(wait/2+1))
		wait *= 2
		if next.After(deadline) {
			next = deadline
		}
		_ = conn.SetReadDeadline(next)
		for {
			var n int
			var from unix.Sockaddr
			var rerr error
			err := rc.Read(func(fd uintptr) bool {
				n, from, rerr = unix.Recvfrom(int(fd), buf, 0)
				return rerr != unix.EAGAIN
			})
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				if !errors.Is(err, os.ErrDeadlineExceeded) {
					return nil, err
				}
				break
			}
			if rerr != nil {
				continue // an ICMP error (nothing listens there yet): the next SEARCHGW decides
			}
			f.bytesIn += n
			f.dgIn++
			typ, body, err := sn.ReadHeader(buf[:n])
			if err != nil || typ != sn.GWINFO {
				continue // another client's SEARCHGW, an ADVERTISE, noise
			}
			var gi sn.GWInfo
			if gi.Decode(body) != nil {
				continue
			}
			src := addrPortOf(from)
			gw, err := gatewayAddress(gi.GatewayAddress, src)
			if err != nil {
				continue
			}
			f.took, f.id, f.gateway = time.Since(start), gi.GatewayID, gw
			var cerr error
			if err := rc.Control(func(fd uintptr) { cerr = unix.Connect(int(fd), sockaddr(gw, v6)) }); err != nil {
				return nil, err
			}
			if cerr != nil {
				return nil, fmt.Errorf("connect to gateway %d at %s (GWINFO): %w", gi.GatewayID, gw, cerr)
			}
			return f, nil
		}
		if !time.Now().Before(deadline) {
			return nil, fmt.Errorf("no GWINFO within spec.mqttsn.discovery.timeout (%v) after %d SEARCHGW to %s (spec.mqttsn.discovery.address): no gateway answered there", o.Timeout, f.searches, to)
		}
	}
}

// gatewayAddress is where a GWINFO says the gateway is: the address of a client's answer
// (GwAdd: an IPv4 or IPv6 address, with a port or with the searched port's), else the GWINFO's
// source, the gateway itself.
func gatewayAddress(gwAdd []byte, src netip.AddrPort) (netip.AddrPort, error) {
	port := src.Port()
	switch len(gwAdd) {
	case 0:
		return src, nil
	case 4, 16:
		a, _ := netip.AddrFromSlice(gwAdd)
		return netip.AddrPortFrom(a.Unmap(), port), nil
	case 6, 18:
		a, _ := netip.AddrFromSlice(gwAdd[:len(gwAdd)-2])
		return netip.AddrPortFrom(a.Unmap(), uint16(gwAdd[len(gwAdd)-2])<<8|uint16(gwAdd[len(gwAdd)-1])), nil
	}
	return netip.AddrPort{}, fmt.Errorf("GWINFO's gateway address has %d bytes, not an IP address with or without a port", len(gwAdd))
}

func isV6(a net.Addr) bool {
	ua, ok := a.(*net.UDPAddr)
	return ok && ua.IP.To4() == nil && len(ua.IP) == net.IPv6len
}

// sockaddr is ap for a socket of the IPv6 family (v6) or IPv4.
func sockaddr(ap netip.AddrPort, v6 bool) unix.Sockaddr {
	if v6 {
		return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
	}
	return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().Unmap().As4()}
}

func addrPortOf(sa unix.Sockaddr) netip.AddrPort {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(a.Addr).Unmap(), uint16(a.Port))
	}
	return netip.AddrPort{}
}

// searchGWBytes is a SEARCHGW's length: length, type, radius.
const searchGWBytes = 3

// record adds a client's discovery to the driver's.
func (d *driver) record(search string, f *found) {
	d.found.mu.Lock()
	d.found.sum.Add(search, fmt.Sprintf("gateway %d at %s", f.id, f.gateway), f.searches, f.took.Microseconds())
	d.found.mu.Unlock()
}
