package netem

import "time"

// DefaultMTU is the MTU of an emulated link whose spec and profile set none: Ethernet's.
const DefaultMTU = 1500

// Impairment is what one direction of a link does to each packet. The zero value passes every
// packet at once.
type Impairment struct {
	// Delay is the one-way delay added to every packet.
	Delay time.Duration
	// Jitter is the standard deviation of a normal variation of Delay. Packets keep their order
	// unless Reorder is set: a packet never leaves before the one ahead of it.
	Jitter time.Duration
	// Loss is the probability that a packet is dropped, independently of the others (netem's
	// "loss random"). Zero when GilbertElliott is set: a link has one loss model.
	Loss Fraction
	// GilbertElliott is the burst-loss model that replaces Loss when set (netem's "loss gemodel").
	GilbertElliott GilbertElliott
	// Duplicate is the probability that a packet is sent twice.
	Duplicate Fraction
	// Corrupt is the probability that one bit of a packet is flipped.
	Corrupt Fraction
	// Reorder is the probability that a packet is sent at once, ahead of the delayed ones (netem's
	// "reorder P gap 1").
	Reorder Fraction
	// RateBitsPerSecond limits the link rate, counting IP packet bytes; 0 is unlimited.
	RateBitsPerSecond int64
	// Correlation makes each random draw depend on the previous packet's, as netem's does.
	Correlation Correlation
}

// GilbertElliott is the two-state burst-loss model of netem's "loss gemodel p r 1-h 1-k": per
// packet, the good state turns bad with probability P and the bad state good with R, and a
// packet is lost with LossInGood (1-k) or LossInBad (1-h) depending on the state it met. The
// zero value (R = 0) is no model; a model always has R > 0, since R = 0 never leaves the bad
// state. The stationary loss rate is (P·LossInBad + R·LossInGood)/(P + R); with LossInBad 100 %
// and LossInGood 0 a loss burst lasts 1/R packets on average.
type GilbertElliott struct {
	P, R                  Fraction
	LossInBad, LossInGood Fraction
}

// Enabled reports whether the model is set.
func (g GilbertElliott) Enabled() bool { return g.R > 0 }

// StationaryLoss is the long-run loss rate the model gives, from 0 to 1.
func (g GilbertElliott) StationaryLoss() float64 {
	p, r := float64(g.P), float64(g.R)
	if r == 0 {
		return 0
	}
	return (p*float64(g.LossInBad) + r*float64(g.LossInGood)) / (p + r) / float64(FractionOne)
}

// Correlation holds netem's correlation of each random draw with the previous packet's: the
// draw is (1 − c)·fresh + c·previous. It does not keep the mean rate (docs/netem.md measures
// it). A correlation whose impairment is zero does nothing.
type Correlation struct {
	// Delay correlates the jitter; Loss the independent loss (not GilbertElliott, which has
	// state of its own); Duplicate, Corrupt and Reorder their draws.
	Delay, Loss, Duplicate, Corrupt, Reorder Fraction
}

// IsZero reports whether the impairment leaves packets alone. Correlations alone do nothing.
func (i Impairment) IsZero() bool {
	i.Correlation = Correlation{}
	return i == Impairment{}
}

// MayLose reports whether the loss model can drop packets: Loss, or a Gilbert-Elliott model
// with a loss probability in a state it can be in. Use it, not Loss > 0, to ask whether a link
// loses packets.
func (i Impairment) MayLose() bool {
	g := i.GilbertElliott
	return i.Loss > 0 || g.Enabled() && (g.LossInGood > 0 || g.P > 0 && g.LossInBad > 0)
}

// HasNetem reports whether any of the netem parameters (everything but the rate) is set.
func (i Impairment) HasNetem() bool {
	i.RateBitsPerSecond = 0
	return !i.IsZero()
}

// Link is a resolved emulated link between the devices and the broker or gateway.
type Link struct {
	// Up is the device → broker direction.
	Up Impairment
	// Down is the broker → device direction.
	Down Impairment
	// MTU of the link in bytes; 0 means DefaultMTU. Only the local emulator applies it (pods
	// keep their interface MTU).
	MTU int
}

// RTT is the round trip the link's delays add (up + down), jitter not included.
func (l Link) RTT() time.Duration { return l.Up.Delay + l.Down.Delay }

// EffectiveMTU is MTU, or DefaultMTU when it is unset.
func (l Link) EffectiveMTU() int {
	if l.MTU == 0 {
		return DefaultMTU
	}
	return l.MTU
}
