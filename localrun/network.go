package localrun

import (
	"context"
	"net"
	"os/exec"

	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/netem"
	"github.com/msgbench/msgbench/results"
)

// network is where the run's two sides meet: loopback, or the user-space link emulator's two
// network namespaces when spec.network asks for impairment.
type network struct {
	// serverHost is the address the broker and gateway listen on.
	serverHost string
	// dial opens the clients' connections (from the device side of an emulated link).
	dial drivers.DialFunc
	// listenTCP and listenUDP open server-side sockets.
	listenTCP func(ctx context.Context, address string) (net.Listener, error)
	listenUDP func(ctx context.Context, address string) (net.PacketConn, error)
	// start starts a server-side process (the broker); nil: an ordinary child.
	start func(cmd *exec.Cmd) error
	// startClient starts a client-side process (a worker) where the clients dial from; nil: an
	// ordinary child (spawn.Start).
	startClient func(cmd *exec.Cmd) error
	// serverDial reaches the server side from inside it (readiness probes).
	serverDial func(ctx context.Context, network, address string) (net.Conn, error)
	// link describes the emulated link for the result (nil: none).
	link any
	// caveats says what of the path bent the run's figures (nil: loopback).
	caveats func(res *results.Result) []results.Caveat
	// timeline holds spec.network.timeline's steps, which setLink applies while the run measures.
	timeline []netem.Step
	// radio is the result's network.radio so far (nil: no radio states).
	radio func() map[string]any
	// packets is the result's network.packets: what the link did to every packet so far (nil:
	// no emulated link).
	packets func() map[string]any
	setLink func(netem.Link) error
}

// pathCaveats are the conditions of the path between clients and servers that bend a run's
// figures: retransmits where nothing is lost, and, over an emulated link, the emulator's
// lateness.
func (n *network) pathCaveats(res *results.Result) []results.Caveat {
	if n.caveats != nil {
		return n.caveats(res)
	}
	if res.Wire.Retransmits == nil {
		return nil
	}
	if c := results.RetransmitCaveat(*res.Wire.Retransmits, true, -1); c != nil {
		return []results.Caveat{*c}
	}
	return nil
}

func loopback() *network {
	return &network{
		serverHost: "127.0.0.1",
		listenTCP: func(ctx context.Context, address string) (net.Listener, error) {
			var lc net.ListenConfig
			return lc.Listen(ctx, "tcp", address)
		},
		listenUDP: func(ctx context.Context, address string) (net.PacketConn, error) {
			var lc net.ListenConfig
			return lc.ListenPacket(ctx, "udp", address)
		},
	}
}

func (n *network) applied() any { return n.link }

func (n *network) serverHosts() []string { return []string{n.serverHost} }

// startNetwork sets up the emulated link when spec.network asks for one, and an isolated
// loopback when a server would otherwise listen on the machine's addresses.
func (r *runner) startNetwork(ctx context.Context) error {
	if r.plan.Network.Impaired {
		return r.startLink()
	}
	if bindsEveryAddress(r.spec) {
		return r.startIsolated()
	}
	r.net = loopback()
	return nil
}
