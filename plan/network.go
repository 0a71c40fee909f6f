package plan

import (
	"fmt"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/netem"
)

// Network is spec.network resolved once: what the emulator (locally) or Chaos Mesh (on
// Kubernetes) applies, what the load generator sizes its connects by, what the verdict allows
// for and what the result describes.
type Network struct {
	// Impaired says whether spec.network asks for an emulated link at all (a profile other than
	// none, a timeline or a radio).
	Impaired bool
	// Profile is spec.network.profile as written (for descriptions).
	Profile v1alpha1.NetworkProfile
	// Link is the base link per direction: the profile's preset, then the fields set.
	Link netem.Link
	// Steps are spec.network.timeline's steps resolved (the link from each step's time on), in
	// time order; empty without a timeline.
	Steps []netem.Step
	// Outages are the planned outages' lengths (timeline steps with outage: true).
	Outages []time.Duration
	// Radio is the radio state machine, nil without spec.network.radio.
	Radio *netem.Radio
	// Energy is the devices' radio power model, nil without spec.network.radio.energy.
	Energy *netem.Energy
	// Window is the measured window the timeline's steps must begin in: spec.workload.duration,
	// or 0 for a run that ends after spec.workload.messages (no window to check against).
	Window time.Duration
}

// SlowestRTT is the longest round trip the link takes at any point of the run (base link or any
// timeline step), jitter included.
func (n *Network) SlowestRTT() time.Duration {
	rtt := func(l netem.Link) time.Duration { return l.RTT() + l.Up.Jitter + l.Down.Jitter }
	slowest := rtt(n.Link)
	for _, s := range n.Steps {
		slowest = max(slowest, rtt(s.Link))
	}
	return slowest
}

// MayLose says whether the link loses packets in either direction at any point of the run.
func (n *Network) MayLose() bool {
	lossy := n.Link.Up.MayLose() || n.Link.Down.MayLose()
	for _, s := range n.Steps {
		lossy = lossy || s.Link.Up.MayLose() || s.Link.Down.MayLose()
	}
	return lossy
}

// Describe is the result's network section for the link the run was given by applier.
func (n *Network) Describe(applier string) map[string]any {
	return netem.Describe(n.Profile, n.Link, applier)
}

// compileNetwork resolves spec.network and checks its timeline against the window and the
// clients' keep-alive. Errors name the field (spec.network…).
func compileNetwork(spec *v1alpha1.MessagingBenchmarkSpec, target Target) (Network, error) {
	if !spec.Impaired() {
		return Network{Profile: spec.Network.Profile}, nil
	}
	n, err := ResolveNetwork(spec.Network) // its errors name the field: spec.network.…
	if err != nil {
		return Network{}, err
	}
	if spec.Workload.Messages == 0 {
		n.Window = spec.Workload.Duration.Duration
	}
	if target == Admitted {
		return n, nil
	}
	if err := netem.CheckTimelineWithin(n.Steps, n.Window); err != nil {
		return Network{}, err
	}
	if err := netem.CheckOutagesWithinKeepAlive(n.Steps, n.Window, spec.ClientKeepAlive()); err != nil {
		return Network{}, err
	}
	return n, nil
}

// ResolveNetwork resolves a network spec on its own, for what has a link but no benchmark
// (`msgbench netem`); a benchmark's network is compiled with the rest of its spec (Compile).
func ResolveNetwork(spec v1alpha1.NetworkSpec) (Network, error) {
	n := Network{Impaired: true, Profile: spec.Profile}
	var err error
	if n.Link, err = netem.Resolve(spec); err != nil {
		return Network{}, err
	}
	if n.Steps, err = netem.ResolveTimeline(spec); err != nil {
		return Network{}, err
	}
	if n.Radio, err = netem.ResolveRadio(spec); err != nil {
		return Network{}, err
	}
	if n.Radio != nil {
		if n.Energy, err = netem.ResolveEnergy(spec, n.Link, *n.Radio); err != nil {
			return Network{}, err
		}
	}
	for _, t := range spec.Timeline {
		if t.Outage && t.For != nil {
			n.Outages = append(n.Outages, t.For.Duration)
		}
	}
	return n, nil
}

// QUICMinMTU is the smallest link MTU QUIC runs on: RFC 9000 (section 14) requires every
// datagram that carries an Initial packet to be at least 1200 bytes, and the emulated link below
// 1280 bytes is IPv4 only, so 1200 bytes of UDP payload plus the 8-byte UDP and 20-byte IPv4
// headers. QUIC sets don't-fragment, so on a smaller MTU its handshake never completes.
const QUICMinMTU = 1200 + 8 + 20

// checkQUICMTU refuses an emulated MTU QUIC's handshake cannot pass: the user-space emulator
// enforces the MTU and QUIC sets don't-fragment, so the run would fail on its first packet. On
// Kubernetes pods keep their interface MTU (Chaos Mesh has no MTU), so this is a local rule.
func checkQUICMTU(spec *v1alpha1.MessagingBenchmarkSpec, g Group, link netem.Link) error {
	if !g.QUIC() || link.EffectiveMTU() >= QUICMinMTU {
		return nil
	}
	what := string(g.Protocol)
	if g.Protocol == v1alpha1.ProtocolHTTP {
		what = "http version 3 (HTTP/3)"
	}
	where := fmt.Sprintf("spec.network.mtuBytes: an MTU of %d bytes", link.EffectiveMTU())
	if spec.Network.MTUBytes == nil {
		where = fmt.Sprintf("spec.network.profile: %s's MTU of %d bytes", spec.Network.Profile, link.EffectiveMTU())
	}
	return fmt.Errorf("%s is too small for %s: QUIC's handshake needs 1200-byte UDP datagrams (RFC 9000 section 14), "+
		"an MTU of at least %d bytes, and it sets don't-fragment, so the run would fail on the handshake; "+
		"set spec.network.mtuBytes to 1280 (docs/netem.md), or use a TCP protocol", where, what, QUICMinMTU)
}

// SleepHold is the longest a delivery to one of the plan's subscribers may wait in the network
// for its device to wake: behind a radio with PSM a device hears nothing until its next uplink,
// at the latest its keep-alive ping, then its promotion and a round trip (0: no subscriber
// sleeps, or none pings). The drain waits this long for deliveries (loadgen), where a lossy run
// would stop after a quiet spell.
func (p *Plan) SleepHold() time.Duration {
	var hold time.Duration
	for i := range p.Groups {
		g := &p.Groups[i]
		n := &p.Network
		if g.Network != nil {
			n = g.Network
		}
		if g.Subscribers == 0 || n.Radio == nil || n.Radio.PSMAfter == 0 {
			continue
		}
		var keepAlive time.Duration
		switch {
		case g.MQTT != nil:
			keepAlive = g.MQTT.KeepAlive
		case g.MQTTSN != nil:
			keepAlive = g.MQTTSN.KeepAlive
		}
		if keepAlive > 0 {
			hold = max(hold, keepAlive+n.Radio.PromotionDelay+n.Link.RTT())
		}
	}
	return hold
}

// RetransmitHold is the longest a message of the plan's MQTT-SN publishers at QoS 1 or 2 may
// take to arrive after a lost datagram: its retransmission comes T_retry (spec.mqttsn.
// retryInterval) later, plus a round trip on the group's link (0: no such publisher). A drain
// that ended on a shorter quiet spell would count it lost.
func (p *Plan) RetransmitHold() time.Duration {
	var hold time.Duration
	for i := range p.Groups {
		g := &p.Groups[i]
		if g.Publishers == 0 || g.MQTTSN == nil || g.QoS < 1 {
			continue
		}
		n := &p.Network
		if g.Network != nil {
			n = g.Network
		}
		hold = max(hold, g.MQTTSN.RetryInterval+n.Link.RTT())
	}
	return hold
}

// RadioOf is the link whose radio energy model accounts g's devices (nil: none), and the group
// whose result carries that energy ("": the run's): g's own link (spec.groups[].network), else
// the run's (spec.network, which no group may then override: every client is behind it).
func (p *Plan) RadioOf(g *Group) (n *Network, group string) {
	if g.Network != nil {
		if g.Network.Energy != nil {
			return g.Network, g.Name
		}
		return nil, ""
	}
	if p.Network.Energy != nil {
		return &p.Network, ""
	}
	return nil, ""
}
