//go:build !linux

package emulator

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os/exec"

	"github.com/msgbench/msgbench/netem"
)

// errUnsupported explains why there is no link here.
var errUnsupported = fmt.Errorf("the link emulator needs Linux (network namespaces and TUN devices): %w", errors.ErrUnsupported)

// Link is an emulated link; on this system Start cannot create one.
type Link struct{}

// Namespace is one side of a link; on this system there are none.
type Namespace struct{}

// CheckPrivileges reports that this system cannot run the emulator.
func CheckPrivileges() error { return errUnsupported }

// Start fails: the emulator needs Linux.
func Start(netem.Link, Options) (*Link, error) { return nil, errUnsupported }

// Name is empty.
func (*Link) Name() string { return "" }

// Config is the zero link.
func (*Link) Config() netem.Link { return netem.Link{} }

// SetConfig fails: there is no link.
func (*Link) SetConfig(netem.Link) error { return errUnsupported }

// Device is nil.
func (*Link) Device() *Namespace { return nil }

// Server is nil.
func (*Link) Server() *Namespace { return nil }

// Stats is empty.
func (*Link) Stats() Stats { return Stats{} }

// Env is empty.
func (*Link) Env() []string { return nil }

// Close does nothing.
func (*Link) Close() error { return nil }

// Name is empty.
func (*Namespace) Name() string { return "" }

// Interface is empty.
func (*Namespace) Interface() string { return "" }

// Addrs is empty.
func (*Namespace) Addrs() []netip.Addr { return nil }

// Path is empty.
func (*Namespace) Path() string { return "" }

// Do fails.
func (*Namespace) Do(func() error) error { return errUnsupported }

// DialContext fails.
func (*Namespace) DialContext(context.Context, string, string) (net.Conn, error) {
	return nil, errUnsupported
}

// Listen fails.
func (*Namespace) Listen(context.Context, string, string) (net.Listener, error) {
	return nil, errUnsupported
}

// ListenPacket fails.
func (*Namespace) ListenPacket(context.Context, string, string) (net.PacketConn, error) {
	return nil, errUnsupported
}

// Start fails.
func (*Namespace) Start(*exec.Cmd) error { return errUnsupported }

// TCPListening fails.
func (*Namespace) TCPListening(int) (bool, error) { return false, errUnsupported }

// Isolation is a namespace with only its own loopback; on this system there are none.
type Isolation struct{ *Namespace }

// Isolated fails: the emulator needs Linux.
func Isolated() (*Isolation, error) { return nil, errUnsupported }

// Close does nothing.
func (*Isolation) Close() error { return nil }
