package emulator

import (
	"time"

	"github.com/msgbench/msgbench/energy"
	"github.com/msgbench/msgbench/netem"
)

// DefaultQueuePackets bounds the packets one direction holds (waiting for the rate or for their
// delay), like netem's default limit of 1000; more are dropped and counted as QueueDrops.
const DefaultQueuePackets = 1000

// Options tune a link; the zero value is what msgbench uses.
type Options struct {
	// Seed makes the random impairments repeatable; 0 draws a random seed.
	Seed uint64
	// QueuePackets bounds the packets each direction holds; 0 means DefaultQueuePackets.
	QueuePackets int
	// Radio keeps per-device cellular radio states (idle, paging, power saving) and holds each
	// device's packets while its radio is not connected; nil: none.
	Radio *netem.Radio
	// Timelines records, with Radio, every device's packets as they go on the air (after any
	// hold for its radio): Link.Timelines returns them, for the devices' energy (package energy).
	Timelines bool
}

// DeviceTimeline is one device's packets as the radio stage let them onto the link: At is the
// time since the link's Epoch, Bytes the IP packet's size.
type DeviceTimeline struct {
	// Device is the device side's protocol and port, "tcp/40312".
	Device  string
	Packets []energy.Packet
}

// DirectionStats counts what one direction of a link did with the packets its sender wrote.
type DirectionStats struct {
	// Packets and Bytes were read from the sending side.
	Packets, Bytes uint64
	// Delivered and DeliveredBytes were written to the receiving side, duplicates included.
	Delivered, DeliveredBytes uint64
	// Lost were dropped by the loss model (a duplicated packet that the model drops goes out
	// once, counted neither here nor as Duplicated, as in netem).
	Lost uint64
	// BadState counts the packets, copies included, that met the Gilbert-Elliott model in its bad
	// state, and LostInBad those of them it dropped (Lost counts them too).
	BadState, LostInBad uint64
	// LossBursts counts the runs of consecutive packets read that the loss model dropped (an
	// isolated loss is a burst of one): Lost / LossBursts is the mean loss burst, which
	// Gilbert-Elliott sets (1 / badToGood when the bad state loses everything) and Bernoulli loss
	// keeps near 1 / (1 − loss).
	LossBursts uint64
	// QueueDrops were dropped because the direction already held its maximum of packets.
	QueueDrops uint64
	// Duplicated, Corrupted and Reordered count the packets so treated.
	Duplicated, Corrupted, Reordered uint64
	// WriteErrors were refused by the receiving kernel (a corrupted IP header, for one).
	WriteErrors uint64
	// Late left 1 ms or more after their departure time, and MaxLate is the worst lateness:
	// the forwarder keeps time only as well as the CPU lets it. Non-zero values mean the
	// machine was too busy for the emulated delays to be exact.
	Late    uint64
	MaxLate time.Duration
}

// Stats holds both directions' counters.
type Stats struct {
	// Up is device → server.
	Up DirectionStats
	// Down is server → device.
	Down DirectionStats
	// Radio counts what the radio states did; zero without Options.Radio.
	Radio RadioStats
}

// RadioStats counts the radio states' work over both directions.
type RadioStats struct {
	// Devices are the device-side flows seen (address family, protocol and port).
	Devices uint64
	// Promotions are idle (or asleep) → connected transitions; Pagings those a downlink packet
	// started by paging the device; PSMWakeups those out of power saving mode.
	Promotions, Pagings, PSMWakeups uint64
	// HeldPackets waited for their device's radio; HoldTime is their total wait, MaxHold the
	// longest (packets still held when the link closed are not in HoldTime).
	HeldPackets uint64
	HoldTime    time.Duration
	MaxHold     time.Duration
}
