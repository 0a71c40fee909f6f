package localrun

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/netem"
	"github.com/msgbench/msgbench/netem/emulator"
	"github.com/msgbench/msgbench/results"
)

// startGroupLinks puts each group with a network of its own (spec.groups[].network) behind an
// emulated link of its own: its clients dial from the link's device namespace to a relay on the
// link's server side (relay.go), which forwards to where they would connect without it. The
// other groups reach the broker directly (spec.network is then left out).
func (r *runner) startGroupLinks(ctx context.Context) error {
	for _, g := range r.plan.Groups {
		if g.Network == nil {
			continue
		}
		target := r.address
		if a, ok := r.endpoints[g.Name]; ok {
			target = a
		}
		n := g.Network
		l, err := emulator.Start(n.Link, emulator.Options{Radio: n.Radio, Timelines: n.Energy != nil})
		if err != nil {
			return fmt.Errorf("spec.groups[%s].network: %w", g.Name, err)
		}
		dial := l.Device().DialContext
		if n.Energy != nil {
			ports := &devicePorts{}
			dial = ports.wrap(dial)
			r.energy = append(r.energy, energyOf(l, n.Energy, ports, g.Name, r.plan.Timing.Warmup))
		}
		r.groupLinks = append(r.groupLinks, groupLink{stats: l.Stats, link: n.Link, lossy: lossy(n.Link, nil)})
		server := l.Server()
		addrs := server.Addrs()
		if len(addrs) == 0 {
			_ = l.Close()
			return fmt.Errorf("spec.groups[%s].network: link %s: the server side has no address", g.Name, l.Name())
		}
		var relayAddr string
		var stop func()
		if g.Protocol == v1alpha1.ProtocolMQTTSN || g.QUIC() { // UDP: MQTT-SN, HTTP/3, MQTT over QUIC
			pc, err := server.ListenPacket(ctx, "udp", hostPort(addrs[0].String(), 0))
			if err != nil {
				_ = l.Close()
				return err
			}
			relayAddr, stop = pc.LocalAddr().String(), relayUDP(pc, target, r.relayDial())
		} else {
			ln, err := server.Listen(ctx, "tcp", hostPort(addrs[0].String(), 0))
			if err != nil {
				_ = l.Close()
				return err
			}
			relayAddr, stop = ln.Addr().String(), relayTCP(ln, target, r.relayDial())
		}
		name := g.Name
		r.onTeardown(func() {
			stop()
			st := l.Stats()
			r.logf("link of group %s: up %d packets (%d lost, %d queue drops), down %d packets (%d lost, %d queue drops)",
				name, st.Up.Packets, st.Up.Lost, st.Up.QueueDrops, st.Down.Packets, st.Down.Lost, st.Down.QueueDrops)
			_ = l.Close()
		})
		if r.endpoints == nil {
			r.endpoints = map[string]string{}
		}
		if r.dials == nil {
			r.dials = map[string]drivers.DialFunc{}
		}
		r.endpoints[g.Name], r.dials[g.Name] = relayAddr, dial
		r.logf("network: group %s behind its own link %s (%s, RTT %s), relayed to %s", g.Name, l.Name(), n.Profile, n.Link.RTT(), target)
	}
	return nil
}

// relayDial is how a relay reaches the server side: inside the run's isolated namespace when it
// has one, else from this process.
func (r *runner) relayDial() func(ctx context.Context, network, address string) (net.Conn, error) {
	if r.net.serverDial != nil {
		return r.net.serverDial
	}
	d := net.Dialer{Timeout: 10 * time.Second}
	return d.DialContext
}

// groupLink is a group's own emulated link, for the run's caveats.
type groupLink struct {
	stats func() emulator.Stats
	link  netem.Link
	lossy bool
}

// groupLinkCaveats are the path's caveats when groups have links of their own (the others reach
// the broker over loopback): the latest any link's emulator ran, and TCP retransmits judged
// against all of them — none lossless if one may lose packets or held some for its radio (a SYN
// held past its 1 s timer by a promotion is retransmitted as if lost).
func (r *runner) groupLinkCaveats(res *results.Result) []results.Caveat {
	var cs []results.Caveat
	var worst *results.Caveat
	lossless, drops := true, int64(0)
	for _, gl := range r.groupLinks {
		st := gl.stats()
		late := max(st.Up.MaxLate, st.Down.MaxLate)
		if c := results.EmulatorLateCaveat(late, st.Up.Late+st.Down.Late, st.Up.Packets+st.Down.Packets, gl.link.RTT()); c != nil && (worst == nil || *c.Value > *worst.Value) {
			worst = c
		}
		lossless = lossless && !gl.lossy && st.Radio.HeldPackets == 0
		drops += int64(st.Up.QueueDrops + st.Down.QueueDrops)
	}
	if worst != nil {
		cs = append(cs, *worst)
	}
	if res.Wire.Retransmits != nil {
		if c := results.RetransmitCaveat(*res.Wire.Retransmits, lossless, drops); c != nil {
			cs = append(cs, *c)
		}
	}
	return cs
}
