package localrun

import (
	"context"
	"net"
	"slices"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/netem/emulator"
)

// bindsEveryAddress reports whether a run on loopback would start a server that listens on the
// machine's real addresses: Debian's Mosquitto 2.0.11 binds its websockets listener (libwebsockets)
// to every address whatever its listener line names. With an emulated link the broker has a
// namespace of its own already.
func bindsEveryAddress(spec *v1alpha1.MessagingBenchmarkSpec) bool {
	local := spec.Broker.Type == v1alpha1.BrokerMosquitto || spec.Broker.Type == ""
	websocket := spec.MQTT.WebSocket() || slices.ContainsFunc(spec.Groups, func(g v1alpha1.DeviceGroupSpec) bool {
		return g.MQTT != nil && g.MQTT.Transport == v1alpha1.TransportWebSocket
	})
	return local && websocket && !spec.Impaired()
}

// startIsolated runs the whole run, broker and clients, inside one network namespace that has
// only its own loopback: the traffic takes loopback's path as on the host, and the listener that
// binds every address binds only that namespace's. Without the privileges for a namespace the run
// stays on the host's loopback, with a warning naming the exposure. The result names no
// network: nothing is emulated.
func (r *runner) startIsolated() error {
	if privileged := emulator.CheckPrivileges() == nil; !privileged {
		r.logf("warning: Mosquitto's WebSocket listener binds every address of this machine, so its ws/wss port accepts anonymous MQTT from the network while the run lasts; " +
			"with CAP_NET_ADMIN and CAP_SYS_ADMIN (sudo msgbench …, or sudo setcap cap_net_admin,cap_sys_admin+ep bin/msgbench) broker and clients run in a network namespace of their own instead")
		r.net = loopback()
		return nil
	}
	iso, err := emulator.Isolated()
	if err != nil {
		return err
	}
	r.onTeardown(func() { _ = iso.Close() })
	r.net = &network{
		serverHost: "127.0.0.1",
		dial:       iso.DialContext,
		listenTCP: func(ctx context.Context, address string) (net.Listener, error) {
			return iso.Listen(ctx, "tcp", address)
		},
		listenUDP: func(ctx context.Context, address string) (net.PacketConn, error) {
			return iso.ListenPacket(ctx, "udp", address)
		},
		start:       iso.Start,
		startClient: iso.Start,
		serverDial:  iso.DialContext,
	}
	r.logf("network: loopback of network namespace %s (broker and clients; Mosquitto's WebSocket listener binds every address, here only that namespace's)", iso.Name())
	return nil
}
