// Package energy turns what a device's radio did — every packet it sent and received, when, and
// how large — into the time it spent in each radio state and the energy that cost, from a radio
// power model (Model) and the link's rates and timers (Link). It is pure: the same timeline gives
// the same joules, so a hand calculation checks it (docs/energy.md).
//
// The state machine is the one the link emulator's radio stage applies to packets
// (netem.Radio.Decide), seen from the device's side:
//
//	asleep (PSM, or idle when the radio has no PSM)
//	  └─ packet ─▶ promotion (PromotionDelay before the packet goes on the air)
//	                 └─▶ connected: transmit / receive for each packet's airtime, the rest in
//	                     connected-mode DRX, until InactivityTimer after the last packet's airtime
//	                       └─▶ idle with paging (a paging occasion every PagingCycle)
//	                             └─ PSMAfter later ─▶ PSM
package energy

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// Model is a radio's power in each state, in milliwatts, at the supply voltage VoltageV (a
// datasheet's current times its voltage).
type Model struct {
	Name string
	// Source cites where every number comes from, and which were chosen (docs/energy.md).
	Source   string
	VoltageV float64
	// TxMW and RxMW while a packet is on the air, up and down; TxPerMbps and RxPerMbps add as
	// much per Mbit/s of the link's rate in that direction (Huang et al.'s LTE model): AtRates
	// applies them.
	TxMW, RxMW           float64
	TxPerMbps, RxPerMbps float64
	// ConnectedMW is connected-mode DRX between packets, until the inactivity timer: the tail.
	ConnectedMW float64
	// PromotionMW while the connection is set up (random access, RRC connection setup).
	PromotionMW float64
	// IdleMW is idle between paging occasions; PagingMW during each occasion's on-duration,
	// PagingOnDuration long, one every Link.PagingCycle.
	IdleMW, PagingMW float64
	PagingOnDuration time.Duration
	// PSMMW is the power saving mode floor.
	PSMMW float64
}

// AtRates is m with its transfer powers at l's rates (TxPerMbps, RxPerMbps applied).
func (m Model) AtRates(l Link) Model {
	m.TxMW += m.TxPerMbps * l.UpBitsPerSecond / 1e6
	m.RxMW += m.RxPerMbps * l.DownBitsPerSecond / 1e6
	m.TxPerMbps, m.RxPerMbps = 0, 0
	return m
}

// Link is what the energy depends on besides the model: the rates that set each packet's
// airtime (bits per second; 0: no airtime) and the radio timers (netem.Radio's).
type Link struct {
	UpBitsPerSecond, DownBitsPerSecond float64
	InactivityTimer, PromotionDelay    time.Duration
	// PagingCycle 0: no paging occasions while idle. PSMAfter 0: no power saving mode.
	PagingCycle, PSMAfter time.Duration
	// DownlinkDelay is how long after its recorded time a downlink packet reaches the device:
	// the link emulator's radio stands at the link's entry in both directions, so a downlink
	// packet is recorded before its one-way delay, which in a cellular network comes before the
	// base station sends it over the air. Timeline moves downlink packets by it (0: as recorded).
	DownlinkDelay time.Duration
}

// Packet is one packet of a device's timeline: when it went on the air (after any promotion),
// which way, and its size on the link (IP bytes, as the link's rate counts them).
type Packet struct {
	At    time.Duration
	Up    bool
	Bytes int
}

// State is a radio state.
type State int

// States, in the order results list them.
const (
	Tx State = iota
	Rx
	Connected
	Promotion
	Idle
	Paging
	PSM
	numStates
)

var stateNames = [numStates]string{"transmit", "receive", "connected", "promotion", "idle", "paging", "psm"}

func (s State) String() string { return stateNames[s] }

// StateNames are the states' names, in State order.
func StateNames() []string { return stateNames[:] }

// Account is a device's time and energy in each state over a window, and its radio events.
type Account struct {
	Time       [numStates]time.Duration
	EnergyMJ   [numStates]float64
	Promotions int
	Packets    int
}

// TotalMJ is the energy over all states.
func (a Account) TotalMJ() float64 {
	var sum float64
	for _, e := range a.EnergyMJ {
		sum += e
	}
	return sum
}

// Seconds is the time accounted, over all states.
func (a Account) Seconds() float64 {
	var sum time.Duration
	for _, t := range a.Time {
		sum += t
	}
	return sum.Seconds()
}

// MeanMilliamps is the average current over the window at the model's voltage.
func (a Account) MeanMilliamps(m Model) float64 {
	s := a.Seconds()
	if s <= 0 || m.VoltageV <= 0 {
		return 0
	}
	return a.TotalMJ() / s / m.VoltageV
}

// BatteryHours is how long a battery of capacityMAh lasts at the window's mean current: the
// traffic pattern repeated for ever (no self-discharge, no temperature, the full capacity usable).
func (a Account) BatteryHours(m Model, capacityMAh float64) float64 {
	if i := a.MeanMilliamps(m); i > 0 {
		return capacityMAh / i
	}
	return 0
}

// Add adds b to a (a group's devices together).
func (a *Account) Add(b Account) {
	for i := range a.Time {
		a.Time[i] += b.Time[i]
		a.EnergyMJ[i] += b.EnergyMJ[i]
	}
	a.Promotions += b.Promotions
	a.Packets += b.Packets
}

// Validate refuses a model that cannot be right: negative powers, no voltage. (An on-duration
// as long as the paging cycle is a radio that always listens.)
func (m Model) Validate(l Link) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"voltage", m.VoltageV}, {"transmit", m.TxMW}, {"receive", m.RxMW}, {"connected", m.ConnectedMW},
		{"promotion", m.PromotionMW}, {"idle", m.IdleMW}, {"paging", m.PagingMW}, {"psm", m.PSMMW}} {
		if f.v < 0 {
			return fmt.Errorf("%s: %g is negative", f.name, f.v)
		}
	}
	if m.VoltageV == 0 {
		return fmt.Errorf("voltage: 0 V")
	}
	return nil
}

// Meter walks one device's timeline, packet by packet in time order, and accounts every instant
// of the window [From, To) to one state. A device starts asleep: in PSM when the link has one,
// else idle (a sensor between reports).
type Meter struct {
	m        Model
	l        Link
	from, to time.Duration
	acc      Account
	cur      time.Duration // accounted up to here
	tailEnd  time.Duration // the inactivity timer runs out here (connected until then)
	idleFrom time.Duration // idle since (PSM from idleFrom + PSMAfter)
	awake    bool          // connected (promoted) at cur
	asleep   bool          // in PSM since the start (never woke)
}

// NewMeter starts a device's meter at start, accounting the window [from, to).
func NewMeter(m Model, l Link, start, from, to time.Duration) *Meter {
	return &Meter{m: m, l: l, from: from, to: to, cur: start, idleFrom: start, asleep: l.PSMAfter > 0}
}

// airtime is a packet's time on the air at the link's rate in its direction.
func (l Link) airtime(p Packet) time.Duration {
	rate := l.DownBitsPerSecond
	if p.Up {
		rate = l.UpBitsPerSecond
	}
	if rate <= 0 {
		return 0
	}
	return time.Duration(float64(p.Bytes) * 8 / rate * float64(time.Second))
}

// Packet accounts the time up to p and p itself. Packets come in time order; a packet that
// goes on the air while the previous one still is starts after it (one radio, half duplex).
func (mt *Meter) Packet(p Packet) {
	t := max(p.At, mt.cur)
	if !mt.awake || t >= mt.tailEnd {
		mt.sleepUntil(t - mt.l.PromotionDelay)
		mt.account(Promotion, mt.cur, t)
		mt.countIn(&mt.acc.Promotions, t)
		mt.awake, mt.asleep = true, false
	} else {
		mt.account(Connected, mt.cur, t)
	}
	state := Rx
	if p.Up {
		state = Tx
	}
	end := t + mt.l.airtime(p)
	mt.account(state, t, end)
	mt.countIn(&mt.acc.Packets, t)
	mt.tailEnd = end + mt.l.InactivityTimer
	mt.idleFrom = mt.tailEnd
}

// Close accounts the rest of the window and returns the device's account.
func (mt *Meter) Close() Account {
	mt.sleepUntil(mt.to)
	return mt.acc
}

// sleepUntil accounts from cur to t (t may lie before cur: a promotion that began while the
// device was still connected takes nothing more): the connected tail, then idle with paging,
// then PSM.
func (mt *Meter) sleepUntil(t time.Duration) {
	if t <= mt.cur {
		return
	}
	if mt.awake {
		end := min(t, mt.tailEnd)
		mt.account(Connected, mt.cur, end)
		if t < mt.tailEnd {
			return
		}
		mt.awake = false
	}
	if mt.asleep {
		mt.account(PSM, mt.cur, t)
		return
	}
	idleEnd := t
	if mt.l.PSMAfter > 0 {
		idleEnd = min(t, mt.idleFrom+mt.l.PSMAfter)
	}
	mt.idle(mt.cur, idleEnd)
	if idleEnd < t {
		mt.account(PSM, idleEnd, t)
	}
}

// idle accounts [a, b) as idle with paging: each PagingCycle one on-duration at PagingMW, the
// rest at IdleMW. The occasions' phase is the device's and not in its timeline, so the share is
// the expected one, PagingOnDuration / PagingCycle of the interval.
func (mt *Meter) idle(a, b time.Duration) {
	a, b = max(a, mt.from, mt.cur), min(b, mt.to)
	if b <= a {
		mt.cur = max(mt.cur, b)
		return
	}
	span := b - a
	var on time.Duration
	if mt.l.PagingCycle > 0 {
		on = time.Duration(float64(span) * min(1, float64(mt.m.PagingOnDuration)/float64(mt.l.PagingCycle)))
	}
	mt.add(Paging, on)
	mt.add(Idle, span-on)
	mt.cur = b
}

// account puts [a, b) ∩ [from, to) in state s and moves cur to b.
func (mt *Meter) account(s State, a, b time.Duration) {
	if b <= mt.cur {
		return
	}
	a = max(a, mt.cur)
	mt.cur = b
	a, b = max(a, mt.from), min(b, mt.to)
	if b > a {
		mt.add(s, b-a)
	}
}

func (mt *Meter) add(s State, d time.Duration) {
	if d <= 0 {
		return
	}
	mt.acc.Time[s] += d
	mt.acc.EnergyMJ[s] += mt.m.Power(s) * d.Seconds()
}

// countIn counts an event at t when t is in the window.
func (mt *Meter) countIn(n *int, t time.Duration) {
	if t >= mt.from && t < mt.to {
		*n++
	}
}

// Power is the model's power in state s, in milliwatts.
func (m Model) Power(s State) float64 {
	switch s {
	case Tx:
		return m.TxMW
	case Rx:
		return m.RxMW
	case Connected:
		return m.ConnectedMW
	case Promotion:
		return m.PromotionMW
	case Idle:
		return m.IdleMW
	case Paging:
		return m.PagingMW
	}
	return m.PSMMW
}

// Timeline is a device's account over [from, to) from its whole timeline (packets in time order,
// downlink ones DownlinkDelay before they reach the device), the device asleep at start.
func Timeline(m Model, l Link, packets []Packet, start, from, to time.Duration) Account {
	if l.DownlinkDelay > 0 {
		packets = arrivals(packets, l.DownlinkDelay)
	}
	mt := NewMeter(m, l, start, from, to)
	for _, p := range packets {
		if p.At >= to {
			break
		}
		mt.Packet(p)
	}
	return mt.Close()
}

// arrivals is packets with the downlink ones delay later, in time order (a copy).
func arrivals(packets []Packet, delay time.Duration) []Packet {
	out := slices.Clone(packets)
	for i := range out {
		if !out[i].Up {
			out[i].At += delay
		}
	}
	slices.SortStableFunc(out, func(a, b Packet) int { return cmp.Compare(a.At, b.At) })
	return out
}
