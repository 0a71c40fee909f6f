package localrun

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/msgbench/msgbench/netem"
	"github.com/msgbench/msgbench/netem/emulator"
	"github.com/msgbench/msgbench/results"
)

// startLink puts the run on an emulated link: the broker and gateway in a server network
// namespace, the clients dialling from a device namespace, the user-space forwarder applying
// spec.network per packet in between.
func (r *runner) startLink() error {
	n := &r.plan.Network
	link, steps, radio := n.Link, n.Steps, n.Radio
	if err := emulator.CheckPrivileges(); err != nil {
		return err
	}
	l, err := emulator.Start(link, emulator.Options{Radio: radio, Timelines: n.Energy != nil})
	if err != nil {
		return err
	}
	server, device := l.Server(), l.Device()
	dial := device.DialContext
	if n.Energy != nil {
		ports := &devicePorts{}
		dial = ports.wrap(dial)
		r.energy = append(r.energy, energyOf(l, n.Energy, ports, "", r.plan.Timing.Warmup))
	}
	r.onTeardown(func() {
		st := l.Stats()
		r.logf("link: up %d packets (%d lost, %d queue drops), down %d packets (%d lost, %d queue drops)",
			st.Up.Packets, st.Up.Lost, st.Up.QueueDrops, st.Down.Packets, st.Down.Lost, st.Down.QueueDrops)
		if radio != nil {
			r.logf("link: radio %d devices, %d promotions (%d pagings, %d PSM wake-ups), %d packets held %s in all",
				st.Radio.Devices, st.Radio.Promotions, st.Radio.Pagings, st.Radio.PSMWakeups, st.Radio.HeldPackets, st.Radio.HoldTime.Round(time.Millisecond))
		}
		if st.Up.MaxLate > time.Millisecond || st.Down.MaxLate > time.Millisecond {
			r.logf("link: the machine was too busy for exact delays (up to %s late)", max(st.Up.MaxLate, st.Down.MaxLate))
		}
		_ = l.Close()
	})
	addrs := server.Addrs()
	if len(addrs) == 0 {
		return fmt.Errorf("link %s: the server side has no address", l.Name())
	}
	r.net = &network{
		serverHost: addrs[0].String(),
		dial:       dial,
		listenTCP: func(ctx context.Context, address string) (net.Listener, error) {
			return server.Listen(ctx, "tcp", address)
		},
		listenUDP: func(ctx context.Context, address string) (net.PacketConn, error) {
			return server.ListenPacket(ctx, "udp", address)
		},
		start:       server.Start,
		startClient: device.Start,
		serverDial:  server.DialContext,
		link:        n.Describe("msgbench user-space link " + l.Name()),
		caveats: func(res *results.Result) []results.Caveat {
			return linkCaveats(l.Stats(), link, lossy(link, steps), res)
		},
		timeline: steps,
		radio:    radioResult(radio, l.Stats),
		packets:  func() map[string]any { return packetsResult(l.Stats()) },
		setLink:  l.SetConfig,
	}
	r.logf("network: %s, clients in %s, servers in %s at %s", n.Profile, device.Name(), server.Name(), r.net.serverHost)
	if radio != nil {
		r.logf("network: radio states per device: idle after %v, promotion %v, paging every %v, power saving after %v (0s: never)",
			radio.InactivityTimer, radio.PromotionDelay, radio.PagingCycle, radio.PSMAfter)
	}
	return nil
}

// lossy reports whether the link could drop or corrupt packets at any point of the run: the base
// link or any timeline step. Such a run expects retransmits.
func lossy(base netem.Link, steps []netem.Step) bool {
	links := []netem.Link{base}
	for _, s := range steps {
		links = append(links, s.Link)
	}
	for _, l := range links {
		for _, d := range []netem.Impairment{l.Up, l.Down} {
			if d.MayLose() || d.Corrupt > 0 {
				return true
			}
		}
	}
	return false
}

// linkCaveats are what the emulated link's counters say about a run: the emulator running late
// (the machine too busy for exact delays) and TCP retransmits on a link that loses nothing.
func linkCaveats(st emulator.Stats, link netem.Link, lossy bool, res *results.Result) []results.Caveat {
	var cs []results.Caveat
	late := max(st.Up.MaxLate, st.Down.MaxLate)
	if c := results.EmulatorLateCaveat(late, st.Up.Late+st.Down.Late, st.Up.Packets+st.Down.Packets, link.RTT()); c != nil {
		cs = append(cs, *c)
	}
	if res.Wire.Retransmits != nil {
		lossless := !lossy
		// A packet held for its device's radio longer than the sender's retransmission timer
		// (a SYN's first is 1 s) is retransmitted as if lost: radio states explain retransmits.
		lossless = lossless && st.Radio.HeldPackets == 0
		if c := results.RetransmitCaveat(*res.Wire.Retransmits, lossless, int64(st.Up.QueueDrops+st.Down.QueueDrops)); c != nil {
			cs = append(cs, *c)
		}
	}
	return cs
}

// packetsResult is the result's network.packets: the forwarder's counters per direction over
// the whole run (connection set-up, warm-up and teardown included), so a run over a loss model can
// be held against it: lostPercent against the model's rate, meanLossBurst against its burst.
func packetsResult(st emulator.Stats) map[string]any {
	dir := func(d emulator.DirectionStats) map[string]any {
		m := map[string]any{
			"packets": d.Packets, "delivered": d.Delivered, "lost": d.Lost, "lossBursts": d.LossBursts,
			"duplicated": d.Duplicated, "corrupted": d.Corrupted, "reordered": d.Reordered,
			"queueDrops": d.QueueDrops, "late": d.Late, "maxLateMillis": float64(d.MaxLate) / float64(time.Millisecond),
		}
		if d.Packets > 0 {
			m["lostPercent"] = 100 * float64(d.Lost) / float64(d.Packets)
		}
		if d.LossBursts > 0 {
			m["meanLossBurst"] = float64(d.Lost) / float64(d.LossBursts)
		}
		if d.BadState > 0 {
			m["badStatePackets"], m["lostInBadState"] = d.BadState, d.LostInBad
		}
		return m
	}
	return map[string]any{"up": dir(st.Up), "down": dir(st.Down)}
}

// radioResult is the result's network.radio: the radio numbers applied and what the radio states
// did to the run's packets. Nil without spec.network.radio.
func radioResult(radio *netem.Radio, stats func() emulator.Stats) func() map[string]any {
	if radio == nil {
		return nil
	}
	return func() map[string]any {
		st := stats().Radio
		m := netem.DescribeRadio(*radio)
		m["devices"], m["promotions"], m["pagings"], m["psmWakeups"] = st.Devices, st.Promotions, st.Pagings, st.PSMWakeups
		m["heldPackets"] = st.HeldPackets
		m["holdMillis"] = float64(st.HoldTime) / float64(time.Millisecond)
		m["maxHoldMillis"] = float64(st.MaxHold) / float64(time.Millisecond)
		return m
	}
}
