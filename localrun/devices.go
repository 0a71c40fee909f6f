package localrun

import (
	"context"
	"fmt"
	"net"
	"sync"

	"github.com/msgbench/msgbench/loadgen/drivers"
)

// devicePorts knows which client each connection behind a link belongs to, by the connection's
// local end as the link emulator keys its devices ("tcp/40312"): a client that connects again
// (a connection per message, a reconnect, a duty cycle) is one device with one radio, whose
// energy is that of all its connections together (energyOf).
type devicePorts struct {
	mu     sync.Mutex
	owners map[string]string
}

// wrap is dial recording each connection's client (drivers.WithClient on its context).
func (d *devicePorts) wrap(dial drivers.DialFunc) drivers.DialFunc {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		c, err := dial(ctx, network, address)
		if err != nil {
			return nil, err
		}
		if id := drivers.ClientOf(ctx); id != "" {
			if flow := flowOf(c.LocalAddr()); flow != "" {
				d.mu.Lock()
				if d.owners == nil {
					d.owners = map[string]string{}
				}
				d.owners[flow] = id // a port used again later is its new owner's from then on
				d.mu.Unlock()
			}
		}
		return c, nil
	}
}

// owner is the client whose connection had flow ("" if none recorded).
func (d *devicePorts) owner(flow string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.owners[flow]
}

// flowOf is a local address as the emulator names a device: protocol (tcp, udp; tcp6, udp6 for
// IPv6) and port.
func flowOf(a net.Addr) string {
	var proto string
	var ip net.IP
	var port int
	switch a := a.(type) {
	case *net.TCPAddr:
		proto, ip, port = "tcp", a.IP, a.Port
	case *net.UDPAddr:
		proto, ip, port = "udp", a.IP, a.Port
	default:
		return ""
	}
	if ip.To4() == nil {
		proto += "6"
	}
	return fmt.Sprintf("%s/%d", proto, port)
}
