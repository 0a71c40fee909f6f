//go:build linux

package emulator

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msgbench/msgbench/netem"
)

// packet is one IP packet in flight. Buffers come from the pipe's free list and go back to it,
// so the steady state allocates nothing.
type packet struct {
	buf []byte
	n   int
	due int64 // departure time on the pipe's clock
}

// writeBatch is how many due packets the writer takes per lock.
const writeBatch = 64

// pipe forwards one direction of a link: a reader goroutine takes each packet from the sending
// side's TUN and decides its fate and departure time; a writer goroutine, woken by an alarm,
// writes queued packets to the receiving side's TUN when they are due. A packet due at once with
// nothing ahead of it is written by the reader itself, so an unimpaired link adds no hop.
type pipe struct {
	in, out *os.File
	// cfg is the impairment in force; SetConfig swaps it while packets flow and the reader
	// loads it once per packet.
	cfg     atomic.Pointer[config]
	clock   clock
	bufSize int

	// Reader goroutine only.
	model    model // the random decisions, and the configuration they follow
	linkFree int64 // when the emulated serial link has sent everything queued so far
	carry    int64 // serialization time not yet charged, in bit·ns per second of rate
	lastDue  int64 // departure of the latest delayed packet: later ones never overtake it
	direct   bool  // the configuration is zero and nothing is queued: write without the lock
	losing   bool  // the last packet read was lost: the next lost one continues its burst

	mu        sync.Mutex
	free      []*packet
	delayed   ring // delayed packets, in departure order
	express   ring // reordered packets: no delay, ahead of the delayed ones
	maxQueued int
	writing   bool  // the writer holds packets it popped
	waiting   int64 // the writer sleeps until then (math.MaxInt64: nothing queued); 0 when awake
	alarm     *alarm

	stats counters
	err   error // why the reader stopped, when not because of Close

	radio *radioSide // holds packets of devices whose radio is not connected (radio.go); nil: none
}

// counters are the pipe's statistics; each field has one writer goroutine.
type counters struct {
	packets, bytes, delivered, deliveredBytes atomic.Uint64
	lost, queueDrops, writeErrors             atomic.Uint64
	duplicated, corrupted, reordered          atomic.Uint64
	badState, lostInBad, lossBursts           atomic.Uint64
	late                                      atomic.Uint64
	maxLate                                   atomic.Int64 // nanoseconds
}

// lateThreshold is how late past its departure time a packet counts as Late.
const lateThreshold = int64(time.Millisecond)

func newPipe(in, out *os.File, imp netem.Impairment, mtu, maxQueued int, clk clock, seed uint64) (*pipe, error) {
	a, err := newAlarm()
	if err != nil {
		return nil, err
	}
	p := &pipe{
		in: in, out: out, clock: clk, bufSize: mtu,
		model:     model{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))},
		delayed:   newRing(maxQueued),
		express:   newRing(maxQueued),
		maxQueued: maxQueued,
		alarm:     a,
	}
	p.setImpairment(imp)
	p.model.reset(p.cfg.Load())
	return p, nil
}

// setImpairment makes imp the impairment of the packets read from now on. Safe from any
// goroutine: the reader picks it up with its next packet. Packets already queued keep the
// departure time they were given.
func (p *pipe) setImpairment(imp netem.Impairment) { p.cfg.Store(newConfig(imp)) }

// load returns the configuration for the packet just read; a new one resets the model.
func (p *pipe) load() *config {
	cfg := p.cfg.Load()
	if cfg != p.model.cfg {
		p.model.reset(cfg)
		p.direct = false
	}
	return cfg
}

// passthrough reports whether the packet just read can be written at once without the lock:
// the impairment is zero and no packet of an earlier one is still queued ahead of it. Once true
// it stays true until the impairment changes, because only the reader queues packets.
func (p *pipe) passthrough(cfg *config) bool {
	if p.direct || !cfg.zero {
		return p.direct
	}
	p.mu.Lock()
	p.direct = p.delayed.len() == 0 && p.express.len() == 0 && !p.writing
	p.mu.Unlock()
	return p.direct
}

func (p *pipe) get() *packet {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.getLocked()
}

func (p *pipe) getLocked() *packet {
	if n := len(p.free); n > 0 {
		pkt := p.free[n-1]
		p.free = p.free[:n-1]
		return pkt
	}
	// Grows only until the queue bound is reached: at most maxQueued packets queued, one being
	// read, one duplicate and one writer batch exist at a time.
	return &packet{buf: make([]byte, p.bufSize)}
}

func (p *pipe) put(pkt *packet) {
	p.mu.Lock()
	p.free = append(p.free, pkt)
	p.mu.Unlock()
}

// readLoop runs until the TUN device is closed.
func (p *pipe) readLoop() {
	cur := p.get()
	for {
		n, err := p.in.Read(cur.buf)
		if err != nil {
			if p.readTimedOut(err) {
				continue
			}
			if !errors.Is(err, os.ErrClosed) {
				p.err = err // Close reads it after this goroutine has ended
			}
			return
		}
		cur.n = n
		p.stats.packets.Add(1)
		p.stats.bytes.Add(uint64(n))
		cfg := p.load()
		if p.radio == nil && p.passthrough(cfg) {
			p.write(cur)
			continue
		}
		if p.admit(cur, cfg, p.clock.now()) {
			cur = p.get()
		}
	}
}

// enqueue decides the fate of pkt, read at now, in netem_enqueue's order: the duplication draw,
// the loss draw (a duplicated packet that is lost goes out once), the corruption of the original
// (the copy is taken before it), the copy's own pass through everything but duplication, then
// the reorder draw and, for a packet not reordered, the delay. It reports whether it kept pkt.
func (p *pipe) enqueue(pkt *packet, cfg *config, now int64, mayDuplicate bool) bool {
	m := &p.model
	count := 1
	if mayDuplicate && m.duplicate() {
		count++
	}
	lost, bad := m.lose()
	if bad {
		p.stats.badState.Add(1)
	}
	if lost {
		count--
	}
	if mayDuplicate { // a packet read, not a copy: bursts are runs of packets read
		if count == 0 && !p.losing {
			p.stats.lossBursts.Add(1)
		}
		p.losing = count == 0
	}
	if count == 0 {
		p.stats.lost.Add(1)
		if bad {
			p.stats.lostInBad.Add(1)
		}
		return false
	}
	var dup *packet
	if count > 1 {
		dup = p.get()
		dup.n = copy(dup.buf, pkt.buf[:pkt.n])
		p.stats.duplicated.Add(1)
	}
	if m.corrupt() {
		bit := m.rng.IntN(pkt.n * 8)
		pkt.buf[bit/8] ^= 1 << (bit % 8)
		p.stats.corrupted.Add(1)
	}
	if dup != nil && !p.enqueue(dup, cfg, now, false) {
		p.put(dup)
	}
	express := m.reorder()
	var delay int64
	if !express {
		delay = int64(cfg.imp.Delay) + m.jitter()
	}
	return p.schedule(pkt, cfg, now, express, delay)
}

// schedule gives pkt, read at now, its departure time. A packet not reordered (express) waits for
// the serial link's rate first (it leaves the link len·8/rate after the one before it, as with
// netem's rate), then for delay, never leaving before the delayed packet ahead of it; a reordered
// one leaves at once, skipping the rate as in netem. It writes a packet due at once with nothing
// ahead of it, and queues the others unless the queue is full. It reports whether it kept pkt.
func (p *pipe) schedule(pkt *packet, cfg *config, now int64, express bool, delay int64) bool {
	p.mu.Lock()
	if p.delayed.len()+p.express.len() >= p.maxQueued {
		p.mu.Unlock()
		p.stats.queueDrops.Add(1)
		return false
	}
	due := now
	if express {
		p.stats.reordered.Add(1)
	} else {
		if rate := cfg.imp.RateBitsPerSecond; rate > 0 {
			cost := int64(pkt.n)*8*int64(time.Second) + p.carry
			p.linkFree = max(now, p.linkFree) + cost/rate
			p.carry = cost % rate
			due = p.linkFree
		}
		due = max(due+max(delay, 0), p.lastDue)
		p.lastDue = due
	}
	pkt.due = due
	// Only this goroutine queues packets; with none ahead and the writer idle, writing here keeps
	// the order and saves the hop.
	if due <= now && !p.writing && p.express.len() == 0 && (express || p.delayed.len() == 0) {
		p.mu.Unlock()
		p.write(pkt)
		return false
	}
	if express {
		p.express.push(pkt)
	} else {
		p.delayed.push(pkt)
	}
	// Wake the writer earlier only if it sleeps past this packet: in steady state a delayed
	// packet never leaves before the head, so this costs no syscall.
	if due < p.waiting {
		p.waiting = due
		p.alarm.set(due)
	}
	p.mu.Unlock()
	return true
}

func (p *pipe) write(pkt *packet) {
	n, err := p.out.Write(pkt.buf[:pkt.n])
	if err != nil {
		// A corrupted version nibble makes the kernel refuse the packet, as a receiver would.
		if !errors.Is(err, os.ErrClosed) {
			p.stats.writeErrors.Add(1)
		}
		return
	}
	p.stats.delivered.Add(1)
	p.stats.deliveredBytes.Add(uint64(n))
}

// writeLoop writes queued packets when they are due, until the alarm is closed.
func (p *pipe) writeLoop() {
	batch := make([]*packet, 0, writeBatch)
	for {
		p.mu.Lock()
		p.free = append(p.free, batch...)
		clear(batch)
		batch = batch[:0]
		p.writing = false
		p.waiting = 0
		now := p.clock.now()
		wait := int64(math.MaxInt64)
		for len(batch) < writeBatch {
			q := p.next()
			if q == nil {
				break
			}
			if due := q.peek().due; due > now {
				wait = due
				break
			}
			batch = append(batch, q.pop())
		}
		if len(batch) > 0 {
			p.writing = true
			p.mu.Unlock()
			for _, pkt := range batch {
				p.write(pkt)
				p.noteLateness(now - pkt.due)
			}
			continue
		}
		p.waiting = wait
		if wait != math.MaxInt64 {
			p.alarm.set(wait)
		}
		p.mu.Unlock()
		if err := p.alarm.wait(); err != nil {
			return
		}
	}
}

// noteLateness records how late a packet left: the emulator keeps time only as well as the CPU
// lets it, and a result should say when it did not.
func (p *pipe) noteLateness(late int64) {
	if late >= lateThreshold {
		p.stats.late.Add(1)
	}
	if late > p.stats.maxLate.Load() { // only the writer stores it
		p.stats.maxLate.Store(late)
	}
}

// next returns the queue whose head leaves first (the express one on a tie), or nil.
func (p *pipe) next() *ring {
	e, d := p.express.peek(), p.delayed.peek()
	switch {
	case e == nil && d == nil:
		return nil
	case d == nil || (e != nil && e.due <= d.due):
		return &p.express
	default:
		return &p.delayed
	}
}

// close stops the writer. The caller closes the TUN devices first, which stops the reader.
func (p *pipe) close() error { return p.alarm.close() }

func (p *pipe) snapshot() DirectionStats {
	c := &p.stats
	return DirectionStats{
		Packets: c.packets.Load(), Bytes: c.bytes.Load(),
		Delivered: c.delivered.Load(), DeliveredBytes: c.deliveredBytes.Load(),
		Lost: c.lost.Load(), QueueDrops: c.queueDrops.Load(),
		Duplicated: c.duplicated.Load(), Corrupted: c.corrupted.Load(), Reordered: c.reordered.Load(),
		BadState: c.badState.Load(), LostInBad: c.lostInBad.Load(), LossBursts: c.lossBursts.Load(),
		WriteErrors: c.writeErrors.Load(),
		Late:        c.late.Load(), MaxLate: time.Duration(c.maxLate.Load()),
	}
}
