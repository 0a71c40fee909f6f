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
	// Loss is the probability that a packet is dropped.
	Loss Fraction
	// Duplicate is the probability that a packet is sent twice.
	Duplicate Fraction
	// Corrupt is the probability that one bit of a packet is flipped.
	Corrupt Fraction
	// Reorder is the probability that a packet is sent at once, ahead of the delayed ones (netem's
	// "reorder P gap 1").
	Reorder Fraction
	// RateBitsPerSecond limits the link rate, counting IP packet bytes; 0 is unlimited.
	RateBitsPerSecond int64
}

// IsZero reports whether the impairment leaves packets alone.
func (i Impairment) IsZero() bool { return i == Impairment{} }

// HasNetem reports whether any of the netem parameters (everything but the rate) is set.
func (i Impairment) HasNetem() bool {
	r := i
	r.RateBitsPerSecond = 0
	return !r.IsZero()
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

// EffectiveMTU is MTU, or DefaultMTU when it is unset.
func (l Link) EffectiveMTU() int {
	if l.MTU == 0 {
		return DefaultMTU
	}
	return l.MTU
}
