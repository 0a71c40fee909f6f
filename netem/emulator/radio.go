//go:build linux

package emulator

import (
	"container/heap"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/msgbench/msgbench/energy"
	"github.com/msgbench/msgbench/netem"
)

// The radio stage holds packets of devices whose radio is idle, asleep or being promoted, per
// device and in order, ahead of the pipe's impairment: a held packet enters the link (loss,
// duplication, corruption, rate, delay) when its device is connected, as if read then. Other devices' packets pass meanwhile, so the pipe's one
// FIFO never waits behind a promotion. The decisions are netem.Radio's; this file keeps the
// devices, the held packets and the times to release them.
//
// A pipe's reader releases its own direction's packets: it reads with a deadline at the next
// release, so a released packet's fate (loss, delay, jitter, rate) is drawn by the goroutine
// that draws every other packet's, in the order packets enter the link. A device's uplink can bring its downlink packets'
// release forward (it connects itself instead of waiting for its paging occasion or for its
// wake-up): then it moves the downlink reader's deadline.

// A device is a flow on the device side: its address family, transport protocol and port. The
// device namespace has one address per family, so the port tells devices apart.
type deviceKey struct {
	v6    bool
	proto uint8
	port  uint16
}

// radioDevice is one device's state and the packets each direction holds for it.
type radioDevice struct {
	netem.RadioDevice
	key  deviceKey
	held [2][]heldPacket
}

type heldPacket struct {
	pkt *packet
	at  int64 // when it was read
}

// release is a device whose packets in one direction leave at a time. A device's release time
// can move earlier; then it has a second entry, and the later one finds it stale.
type release struct {
	at  int64
	dev *radioDevice
}

type releases []release

func (h releases) Len() int           { return len(h) }
func (h releases) Less(i, j int) bool { return h[i].at < h[j].at }
func (h releases) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *releases) Push(x any)        { *h = append(*h, x.(release)) }
func (h *releases) Pop() any {
	old := *h
	r := old[len(old)-1]
	*h = old[:len(old)-1]
	return r
}

// radio is the per-device state both directions of a link share.
type radio struct {
	mu      sync.Mutex
	cfg     netem.Radio
	rng     *rand.Rand // paging phases
	clock   clock
	devices map[deviceKey]*radioDevice
	swept   int           // len(devices) after the last sweep
	sides   [2]*radioSide // up, down
	stats   RadioStats
	// timelines, when recorded (Options.Timelines), are each device's packets as they went on
	// the air, by device key (a device forgotten by sweep and seen again keeps its timeline).
	timelines map[deviceKey][]energy.Packet
}

// record notes pkt of dev's direction going on the air at at (under r.mu).
func (r *radio) record(key deviceKey, up bool, at int64, bytes int) {
	if r.timelines == nil {
		return
	}
	r.timelines[key] = append(r.timelines[key], energy.Packet{At: time.Duration(at - r.clock.baseMono), Up: up, Bytes: bytes})
}

// deviceTimelines returns the recorded timelines, the devices by protocol and port.
func (r *radio) deviceTimelines() []DeviceTimeline {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]DeviceTimeline, 0, len(r.timelines))
	for k, ps := range r.timelines {
		proto := map[uint8]string{6: "tcp", 17: "udp"}[k.proto]
		if proto == "" {
			proto = fmt.Sprintf("ip%d", k.proto)
		}
		if k.v6 {
			proto += "6"
		}
		out = append(out, DeviceTimeline{Device: fmt.Sprintf("%s/%d", proto, k.port), Packets: slices.Clone(ps)})
	}
	slices.SortFunc(out, func(a, b DeviceTimeline) int { return strings.Compare(a.Device, b.Device) })
	return out
}

// sweepFloor is the number of devices below which the radio never sweeps.
const sweepFloor = 1024

// forgetAsleep is how long a device sleeps (PSM) before it may be forgotten: it would then be
// paged like a new device instead of waiting for its uplink, so only long after any client's
// keep-alive or any TCP flow's last retransmission.
const forgetAsleep = time.Hour

// radioSide is one direction's part: its pipe, its releases and its reader's deadline. All
// fields are guarded by radio.mu.
type radioSide struct {
	r        *radio
	dir      int // 0: up (device → server), 1: down
	p        *pipe
	due      releases
	held     int   // packets held in this direction
	deadline int64 // the reader's read deadline on the clock; 0: none
	out      []heldPacket
}

// newRadio attaches the radio stage to both pipes of a link; call it before they run.
func newRadio(cfg netem.Radio, seed uint64, clk clock, up, down *pipe) *radio {
	r := &radio{
		cfg: cfg, clock: clk,
		rng:     rand.New(rand.NewPCG(seed, seed^0x6a09e667f3bcc909)),
		devices: make(map[deviceKey]*radioDevice),
	}
	for dir, p := range []*pipe{up, down} {
		r.sides[dir] = &radioSide{r: r, dir: dir, p: p}
		p.radio = r.sides[dir]
	}
	return r
}

// snapshot returns the radio's counters so far.
func (r *radio) snapshot() RadioStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

// admit passes pkt, read at now, to the pipe's impairment, or holds it while its device's radio
// is not connected. It reports whether it kept pkt.
func (p *pipe) admit(pkt *packet, cfg *config, now int64) bool {
	if p.radio == nil {
		return p.enqueue(pkt, cfg, now, true)
	}
	p.radio.releaseDue(now)
	held, kept := p.radio.hold(pkt, now)
	if !held {
		return p.enqueue(pkt, cfg, now, true)
	}
	return kept
}

// readTimedOut handles a read error of the pipe's reader: a deadline the radio set means
// packets are due for release. It reports whether the reader goes on.
func (p *pipe) readTimedOut(err error) bool {
	if p.radio == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
		return false
	}
	p.radio.releaseDue(p.clock.now())
	return true
}

// hold decides pkt's fate: held reports whether the radio holds it (kept: false when the
// direction already holds its maximum of packets and it was dropped).
func (s *radioSide) hold(pkt *packet, now int64) (held, kept bool) {
	key, ok := deviceOf(pkt.buf[:pkt.n], s.dir == 0)
	if !ok {
		return false, false // not IP as the TUN device hands it over: nothing to key it on
	}
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	dev := r.devices[key]
	if dev == nil {
		if len(r.devices) >= max(sweepFloor, 2*r.swept) {
			r.sweep(time.Duration(now))
		}
		dev = &radioDevice{key: key}
		if r.cfg.PagingCycle > 0 {
			dev.Phase = time.Duration(r.rng.Int64N(int64(r.cfg.PagingCycle)))
		}
		r.devices[key] = dev
		r.stats.Devices++
	}
	if len(dev.held[s.dir]) == 0 {
		at, ev := r.cfg.Decide(&dev.RadioDevice, s.dir == 0, time.Duration(now))
		r.count(ev)
		if ev.Moved {
			// The device connects earlier: its packets held the other way leave with it.
			if o := r.sides[1-s.dir]; len(dev.held[o.dir]) > 0 {
				o.schedule(dev, int64(dev.Until))
			}
		}
		if int64(at) <= now {
			r.record(key, s.dir == 0, now, pkt.n)
			return false, false
		}
		if at != netem.Never {
			s.schedule(dev, int64(at))
		}
	}
	if s.held >= s.p.maxQueued {
		s.p.stats.queueDrops.Add(1)
		return true, false
	}
	dev.held[s.dir] = append(dev.held[s.dir], heldPacket{pkt: pkt, at: now})
	s.held++
	r.stats.HeldPackets++
	return true, true
}

// sweep forgets the devices a new device would stand for: nothing held, idle, and (with PSM)
// asleep for long. Every connection is a device, so a run that opens one per message (HTTP
// without keep-alive) would otherwise keep them all. A forgotten device comes back with a new
// paging phase, which is as random as its old one.
func (r *radio) sweep(now time.Duration) {
	for k, d := range r.devices {
		quiet := now - d.LastActive
		idle := len(d.held[0]) == 0 && len(d.held[1]) == 0 && d.Until <= now && quiet >= r.cfg.InactivityTimer
		if idle && (r.cfg.PSMAfter == 0 || quiet >= r.cfg.InactivityTimer+r.cfg.PSMAfter+forgetAsleep) {
			delete(r.devices, k)
		}
	}
	r.swept = len(r.devices)
}

func (r *radio) count(ev netem.RadioEvents) {
	if ev.Promotion {
		r.stats.Promotions++
	}
	if ev.Paging {
		r.stats.Pagings++
	}
	if ev.PSMWake {
		r.stats.PSMWakeups++
	}
}

// schedule makes this side release dev's packets at at, waking its reader by then.
func (s *radioSide) schedule(dev *radioDevice, at int64) {
	heap.Push(&s.due, release{at: at, dev: dev})
	if s.deadline == 0 || at < s.deadline {
		s.setDeadline(at)
	}
}

// setDeadline sets the reader's read deadline to at on the clock (0: none). Go's poller fires
// it within about a millisecond; the released packets keep their exact times all the same.
func (s *radioSide) setDeadline(at int64) {
	s.deadline = at
	var t time.Time
	if at != 0 {
		t = time.Now().Add(time.Duration(at - s.r.clock.now()))
	}
	_ = s.p.in.SetReadDeadline(t)
}

// releaseDue hands the packets due by now to the pipe, each device's in order, as if read at
// their release time. Only the pipe's reader calls it.
func (s *radioSide) releaseDue(now int64) {
	r := s.r
	r.mu.Lock()
	if s.deadline == 0 || s.deadline > now {
		r.mu.Unlock()
		return
	}
	out := s.out[:0]
	for len(s.due) > 0 && s.due[0].at <= now {
		e := heap.Pop(&s.due).(release)
		q := e.dev.held[s.dir]
		if int64(e.dev.Until) != e.at || len(q) == 0 {
			continue // moved earlier, or released already
		}
		for _, h := range q {
			r.record(e.dev.key, s.dir == 0, e.at, h.pkt.n)
			wait := time.Duration(e.at - h.at)
			r.stats.HoldTime += wait
			r.stats.MaxHold = max(r.stats.MaxHold, wait)
			out = append(out, heldPacket{pkt: h.pkt, at: e.at})
		}
		clear(q)
		e.dev.held[s.dir] = q[:0]
		s.held -= len(q)
	}
	next := int64(0)
	if len(s.due) > 0 {
		next = s.due[0].at
	}
	s.setDeadline(next)
	r.mu.Unlock()
	for _, h := range out {
		if !s.p.enqueue(h.pkt, s.p.load(), h.at, true) {
			s.p.put(h.pkt)
		}
	}
	clear(out)
	s.out = out[:0]
}

// deviceOf returns the device an IP packet belongs to: the source port of an uplink packet, the
// destination port of a downlink one. Fragments, whose later parts carry no ports, and protocols
// without ports count as port 0 of their protocol.
func deviceOf(b []byte, up bool) (deviceKey, bool) {
	if len(b) < 20 {
		return deviceKey{}, false
	}
	var k deviceKey
	var l4 []byte
	switch b[0] >> 4 {
	case 4:
		ihl := int(b[0]&0x0f) * 4
		if ihl < 20 || len(b) < ihl {
			return deviceKey{}, false
		}
		k.proto = b[9]
		if b[6]&0x3f != 0 || b[7] != 0 { // more fragments, or a fragment offset
			return k, true
		}
		l4 = b[ihl:]
	case 6:
		if len(b) < 40 {
			return deviceKey{}, false
		}
		k.v6 = true
		next, off := b[6], 40
		// Hop-by-hop, routing and destination options come before the transport header.
		for (next == 0 || next == 43 || next == 60) && len(b) >= off+8 {
			next, off = b[off], off+8+int(b[off+1])*8
		}
		k.proto = next
		if next == 44 || off > len(b) { // a fragment: no ports in the later parts
			return k, true
		}
		l4 = b[off:]
	default:
		return deviceKey{}, false
	}
	switch k.proto {
	case 6, 17, 132, 136: // TCP, UDP, SCTP, UDP-Lite: ports first
		if len(l4) >= 4 {
			if up {
				k.port = uint16(l4[0])<<8 | uint16(l4[1])
			} else {
				k.port = uint16(l4[2])<<8 | uint16(l4[3])
			}
		}
	}
	return k, true
}
