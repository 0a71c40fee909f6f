// Package dialctx carries what a client asks of the socket it dials through the dial's context,
// to whichever dialer opens it (the load generator's own, or the link emulator's device
// namespace): the local port to send from.
package dialctx

import (
	"context"
	"net"
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
