// Package dialctx carries what a client asks of the socket it dials through the dial's context,
// to whichever dialer opens it (the load generator's own, or the link emulator's device
// namespace): the local port to send from, and whether a UDP socket is to stay unconnected
// (an MQTT-SN client's gateway discovery).
package dialctx

import (
	"context"
	"net"
	"net/netip"
	"syscall"
)

type localPortKey struct{}

// WithLocalPort is ctx asking the dialer to bind the socket to local port port (with the
// dialer's own local address, if any).
func WithLocalPort(ctx context.Context, port int) context.Context {
	return context.WithValue(ctx, localPortKey{}, port)
}

// LocalPort is the port WithLocalPort put on ctx (0: any).
func LocalPort(ctx context.Context) int {
	p, _ := ctx.Value(localPortKey{}).(int)
	return p
}

// Bind sets d.LocalAddr to the port ctx asks for, keeping an address d already has: a no-op
// when ctx asks for none.
func Bind(ctx context.Context, d *net.Dialer, network string) {
	port := LocalPort(ctx)
	if port == 0 {
		return
	}
	switch a := d.LocalAddr.(type) {
	case *net.TCPAddr:
		a.Port = port
		return
	case *net.UDPAddr:
		a.Port = port
		return
	}
	switch network {
	case "tcp", "tcp4", "tcp6":
		d.LocalAddr = &net.TCPAddr{Port: port}
	default:
		d.LocalAddr = &net.UDPAddr{Port: port}
	}
}

type unconnectedKey struct{}

// WithUnconnected is ctx asking a UDP dial for a socket that is bound as the dial would bind it
// (in the dialer's network namespace, at LocalPort's port) but connected to nothing, with
// SO_BROADCAST set: an MQTT-SN client searching for its gateway (SEARCHGW to a broadcast
// address, GWINFO from wherever the gateway is), which then connects it to the gateway it found.
// The address dialled only tells the address family. Dialers honour it with ListenUDP.
func WithUnconnected(ctx context.Context) context.Context {
	return context.WithValue(ctx, unconnectedKey{}, true)
}

// Unconnected reports whether ctx asks for an unconnected socket (WithUnconnected).
func Unconnected(ctx context.Context, network string) bool {
	u, _ := ctx.Value(unconnectedKey{}).(bool)
	return u && (network == "udp" || network == "udp4" || network == "udp6")
}

// ListenUDP opens the socket WithUnconnected asks for, with d's local address (its port from
// ctx) and d's Control, for address's family. The result is a *net.UDPConn.
func ListenUDP(ctx context.Context, d *net.Dialer, network, address string) (net.Conn, error) {
	Bind(ctx, d, network)
	local := &net.UDPAddr{}
	if a, ok := d.LocalAddr.(*net.UDPAddr); ok {
		local = a
	}
	if network == "udp" {
		network = "udp4"
		if ap, err := netip.ParseAddrPort(address); err == nil && !ap.Addr().Unmap().Is4() {
			network = "udp6"
		}
	}
	lc := net.ListenConfig{Control: func(network, address string, c syscall.RawConn) error {
		if d.Control != nil {
			if err := d.Control(network, address, c); err != nil {
				return err
			}
		}
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_BROADCAST, 1)
		}); err != nil {
			return err
		}
		return serr
	}}
	pc, err := lc.ListenPacket(ctx, network, local.String())
	if err != nil {
		return nil, err
	}
	return pc.(*net.UDPConn), nil
}
