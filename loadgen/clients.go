package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/plan"
	"github.com/msgbench/msgbench/results"
)

// subscriber is one subscribing client. Its handler runs on the session's reader goroutine
// only, so its trackers need no lock.
type subscriber struct {
	r        *run
	gr       *groupRun
	plan     plan.Client
	shard    *shard
	sess     drivers.Session
	live     atomic.Pointer[drivers.Session] // sess, for metrics read from another goroutine
	trackers []tracker                       // one per publisher of the topic (a flat spec)
	sources  map[uint32]*source              // by publisher id (a run with spec.groups: fleet.go)
	// retainedDue is how many retained messages its subscription should bring (fleet.go).
	retainedDue int64
	dial        atomic.Int64
	// arrived counts this run's messages delivered to this subscriber, warm-up ones included:
	// the drain's sign of progress while a backlog from the warm-up is still coming through.
	arrived atomic.Int64
	// Churn: the wire figures of its ended sessions; the engine time its current session's
	// connect began, and whether it resumed a session (a sleeping or dropped subscriber), so that
	// deliveries of messages stamped before it count as queued.
	retired   retired
	sessStart atomic.Int64
	resumed   atomic.Bool
	// queue holds the answers of a subscriber of a group that responds (requests.go).
	queue *answerQueue
}

func (s *subscriber) connect(ctx context.Context) error {
	if err := s.open(ctx); err != nil {
		return err
	}
	if s.sources != nil {
		s.retainedDue = s.dueRetained()
		s.gr.retainedDue.Add(s.retainedDue)
	}
	if err := s.sess.Subscribe(ctx); err != nil {
		return s.gr.clientErr(drivers.Subscriber, s.plan.Index, err)
	}
	return nil
}

// open connects the subscriber's session (a resumed one subscribes no more: the broker kept it).
func (s *subscriber) open(ctx context.Context) error {
	r := s.r
	c := s.gr.device(r, drivers.Subscriber, s.plan)
	s.sessStart.Store(r.now())
	var h drivers.Handler = s
	if s.queue != nil {
		h = answering{s}
	}
	sess, err := r.connect(ctx, s.gr, c, h, &s.dial)
	if err != nil {
		return s.gr.clientErr(drivers.Subscriber, s.plan.Index, err)
	}
	r.churn.connects.Add(1)
	s.sess = sess
	s.live.Store(&sess)
	if s.queue != nil {
		go s.answer(r.ctx, sess)
	}
	return nil
}

// Message implements drivers.Handler.
func (s *subscriber) Message(payload []byte) {
	r := s.r
	now := r.now()
	window := r.window.Load()
	end := r.windowEnd.Load()
	inWindow := now >= window && (end == 0 || now < end)
	if len(payload) < HeaderSize {
		s.arrived.Add(1)
		if now < window {
			return
		}
		s.shard.mu.Lock()
		s.shard.received++
		if inWindow {
			s.shard.inWindow++
			s.shard.inWindowBytes += int64(len(payload))
		}
		s.shard.lastReceive = now
		s.shard.bucketLocked(r.rec.interval, window, now).received++
		s.shard.mu.Unlock()
		return
	}
	pub, seq, sent := readHeader(payload)
	sent -= r.wallBase
	// measured: sent in the window, as its publisher decided it (on the publisher's clock: a
	// message of another worker's publisher is put on this worker's for its latency only).
	measured := sent >= window
	rawSeq := seq
	var t *tracker
	var src *source
	if s.sources != nil {
		if src = s.sourceOf(pub); src != nil {
			sent += src.shift // on this worker's clock
			// The correction is known only within its uncertainty: a delivery that seems to
			// arrive up to that much before it was sent is this run's (its latency counted
			// as 0), not a foreign message — under load the estimate's error exceeded a
			// loopback delivery's latency and deliveries were dropped as errors.
			if sent <= now+src.slack {
				t, seq = &src.t, seq/src.div
				sent = min(sent, now)
			}
		}
	} else {
		T := s.gr.share.TotalTopics
		k := (int(pub) - s.plan.Topic) / T
		if int(pub)%T == s.plan.Topic && k >= 0 && k < len(s.trackers) && r.pubByIndex[int(pub)] != nil && sent <= now {
			t = &s.trackers[k]
		}
	}
	if t != nil && src != nil && s.gr.start() > 0 && (!s.gr.joined.Load() || int64(rawSeq) < s.gr.joinK[pub]) {
		// A group joining late counts the messages sent once every member subscribed.
		s.gr.beforeJoin.Add(1)
		return
	}
	if t == nil {
		// Not sent by this run on this topic: another run (or client) publishes to the same
		// topic on a shared broker. Counted as an error, never as a delivery.
		s.shard.mu.Lock()
		s.shard.errors++
		s.shard.mu.Unlock()
		return
	}
	s.arrived.Add(1)
	dup, ooo := t.observe(seq)
	if seq == 0 && !dup {
		if p := r.pubByIndex[int(pub)]; p != nil && p.firstDelivered.CompareAndSwap(false, true) {
			from := p.firstFrom.Load()
			if from == 0 { // a duty-cycled device: its messages are stamped with the wake, before the dial
				from = p.dial.Load()
			}
			r.rec.recordFirstMessage(p.gr.index, (now-from)/1000)
		}
	}
	if !measured { // warm-up: no figure, but it crossed in the window if it arrived there
		if inWindow {
			s.shard.mu.Lock()
			s.shard.inWindow++
			s.shard.inWindowBytes += int64(len(payload))
			s.shard.mu.Unlock()
		}
		return
	}
	queued := !dup && s.resumed.Load() && sent < s.sessStart.Load()
	s.shard.mu.Lock()
	s.shard.received++
	if inWindow {
		s.shard.inWindow++
		s.shard.inWindowBytes += int64(len(payload))
	} else {
		s.shard.drained++
	}
	s.shard.lastReceive = now
	b := s.shard.bucketLocked(r.rec.interval, window, now)
	b.received++
	if dup {
		s.shard.dups++
	} else {
		s.shard.unique++
		e2e := (now - sent) / 1000
		results.RecordMicros(s.shard.endToEnd, e2e)
		b.e2eSum += e2e
		b.e2eN++
	}
	if ooo {
		s.shard.ooo++
	}
	s.shard.mu.Unlock()
	if src != nil {
		src.pair.record(dup, ooo, (now-sent)/1000)
	}
	if queued {
		r.churn.queued.Add(1)
		r.churn.recordQueued((now - sent) / 1000)
	}
}

// Completed implements drivers.Handler; subscribers publish nothing.
func (s *subscriber) Completed(int64, bool) {}

// publisher is one publishing client.
type publisher struct {
	r    *run
	gr   *groupRun
	plan plan.Client
	// topics are the topics it cycles over, message k to topics[k mod len] (fleet.go); nil when
	// it keeps to its session's.
	topics []string
	// reply is the topic its requests are answered on (publish.replyTo; "" when it does not
	// ask), topic its session's topic, answers the answers' sequence numbers (requests.go).
	reply, topic string
	answers      tracker
	// next is the sequence number of the message it is sending or sent last (-1: none yet), and
	// completed how many of its publishes the broker acknowledged: what a group joining late
	// counts from, and which retained messages the broker surely holds (fleet.go).
	next, completed atomic.Int64
	// tracked: next is kept (a run with device groups); countAcks: completed is (its group
	// retains). A flat run's publish and acknowledgement paths pay for neither (two atomic
	// writes per message cost QoS 1 an eighth of its throughput).
	tracked, countAcks bool
	shard              *shard
	sess               drivers.Session
	live               atomic.Pointer[drivers.Session] // sess, for metrics read from another goroutine
	// phase spreads publishers over one send interval (fraction of it) so that open-loop
	// publishers do not all fire in the same microsecond.
	phase          float64
	dial           atomic.Int64
	firstDelivered atomic.Bool
	// connectErr is why connect failed (publish reports it), connectTook how long the connect
	// that succeeded took, and firstFrom the engine time its first-message latency counts from.
	connectErr  error
	connectTook int64
	firstFrom   atomic.Int64
	// win is its share of the measured window: what it sent in it and what that cost.
	win   meter
	stuck atomic.Bool // closeIfStuck closed the session
	// blockedSince is the engine time the Publish in progress began, 0 between calls.
	blockedSince atomic.Int64
	lastSend     int64
	// endedAt is the engine time this publisher stopped publishing: the window's end when it
	// went the whole way, the moment it failed otherwise (0: never started).
	endedAt int64
	// unsent counts messages its open-loop schedule put in the measured window that it could
	// not send before the window ended.
	unsent int64
	// payloadSent is the payload bytes (headers included) of the measured messages it sent:
	// with a device group's sizes varying (publish.payload), win.sent × PayloadBytes is not.
	payloadSent atomic.Int64

	// Churn: the wire figures of its ended sessions (duty-cycle wakes, dropped connections).
	retired retired
	// rj is its part in a reconnect storm (nil fields without one).
	rj rejoining
}

// connect opens the publisher's session before the run starts (the ramp's next slot), so that
// the measured window offers the whole load from its first instant: a publisher still connecting
// when its schedule fell due would silently send less (docs/results.md, "Offered load and the
// window"). A publisher that could not connect keeps its error for publish, which counts its
// schedule unsent. connected is called once the attempt finished.
func (p *publisher) connect(ctx context.Context, connected func()) {
	r := p.r
	c := p.gr.device(r, drivers.Publisher, p.plan)
	var h drivers.Handler = p
	if p.reply != "" {
		h = asker{p}
	}
	sess, err := r.connect(ctx, p.gr, c, h, &p.dial)
	if err == nil && p.reply != "" {
		// Subscribed to its answers before it asks anything.
		p.topic = c.Topic
		if err = sess.(drivers.Requester).SubscribeTo(ctx, p.reply); err != nil {
			_ = sess.Close()
		}
	}
	connected()
	if err != nil {
		p.connectErr = err
		return
	}
	p.connectTook = r.now() - p.dial.Load()
	r.churn.connects.Add(1)
	p.sess = sess
	p.live.Store(&sess)
}

// run publishes until its quota is sent or the duration ends. Its open-loop schedule starts at
// the run's start (t0, at the publisher's phase), whenever it got there: every slot the schedule
// puts in the measured window is either sent or counted unsent.
func (p *publisher) run(ctx context.Context) error {
	r := p.r
	g := p.gr.g
	sch := newSchedule(g.Load.Rate, p.gr.share.TotalPublishers, r.churn.t0+int64(p.gr.start()), p.phase, p.plan.Quota)
	openLoop := sch.openLoop
	window := r.window.Load()
	if p.sess == nil {
		p.endedAt = r.now()
		if r.end > 0 {
			p.unsent = sch.in(window, r.end)
		}
		err := p.connectErr
		if err == nil {
			err = errors.New("not connected")
		}
		return p.gr.clientErr(drivers.Publisher, p.plan.Index, err)
	}
	sess := p.sess
	p.win.reset()
	publishing := make(chan struct{})
	defer close(publishing)
	go p.closeIfStuck(ctx, publishing)

	id := uint32(p.gr.base + p.plan.Index)
	var payload []byte
	var stream *payloadStream // a device group's varied messages (payload_sizes.go)
	if g.Payload != nil {
		stream = newPayloadStream(g, id, p.plan.Index, g.ClientID(p.plan.Index, r.o.RunID), r.epoch.UnixNano())
	} else {
		payload = make([]byte, g.PayloadBytes)
		fillPayload(payload, p.gr.base+p.plan.Index)
	}
	var timer *time.Timer
	// Whatever ends the loop, the open-loop schedule's measured messages not sent by then are
	// unsent: with an error, or when the window closed while the publisher was behind.
	defer func() {
		if openLoop && r.end > 0 {
			p.unsent = max(0, sch.in(window, r.end)-p.win.sent.Load())
		}
	}()
	p.endedAt = r.end // unless it fails (failed sets it) or runs on quota
	var k int64
	for ; ; k++ {
		if sch.done(k) {
			break
		}
		var intended int64
		if openLoop {
			intended = sch.at(k)
			if r.end > 0 && intended >= r.end {
				break
			}
			// Behind schedule when the window closed (a link or broker slower than the rate):
			// publishing stops with the window; the rest of the schedule is unsent, not sent late.
			// (A publisher on time sends its last message even if its wake-up is late.)
			if r.end > 0 && r.now() >= r.end {
				break
			}
			if !waitUntil(ctx, &timer, r.now, intended) {
				return ctx.Err()
			}
		} else {
			intended = r.now()
			if r.end > 0 && intended >= r.end {
				break
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		measured := intended >= window
		if measured && !p.win.measuring {
			// What the session wrote before (connect, warm-up) is not the window's.
			if err := sess.Flush(); err != nil {
				return p.failed(err)
			}
			p.win.begin(r.now(), sess.Counters().BytesSent)
			p.win.firstK.Store(k)
		}
		if k == 0 {
			// First-message latency is counted from the dial of a device that publishes as soon
			// as it is connected: its connect time before the message's own intended time.
			p.firstFrom.Store(intended - p.connectTook)
		}
		if stream != nil {
			payload = stream.message(k, intended)
		}
		if len(payload) >= HeaderSize {
			putHeader(payload, id, uint32(k), intended+r.wallBase)
		}
		if p.rj.intended != nil {
			p.rj.intended[k%int64(len(p.rj.intended))] = intended
		}
		if p.tracked {
			p.next.Store(k)
		}
		began := r.now()
		p.blockedSince.Store(began)
		var err error
		switch {
		case p.reply != "":
			topic := p.topic
			if p.topics != nil {
				topic = p.topics[k%int64(len(p.topics))]
			}
			err = p.request(sess, topic, payload, openLoop)
		case p.topics != nil:
			err = sess.(drivers.TopicPublisher).PublishTo(p.topics[k%int64(len(p.topics))], payload, openLoop)
		default:
			err = sess.Publish(payload, openLoop)
		}
		if err == nil {
			p.rj.sessPublished++
		} else if p.rj.dropped.Load() { // a reconnect storm: on with the new session
			sess, err = p.rejoin(ctx, sess, k, true, began < p.rj.droppedAt.Load(), payload)
		}
		p.blockedSince.Store(0)
		actual := r.now()
		p.lastSend = actual
		if err != nil {
			if p.stuck.Load() {
				err = fmt.Errorf("a publish was still waiting for a free inflight slot %s after the run's end, the broker acknowledging nothing: %w", r.ackWait().Round(time.Second), err)
			}
			return p.failed(err)
		}
		if measured {
			p.recordSent(intended, actual, window, openLoop)
			if stream != nil { // a fixed size's bytes are its messages times the size (fleet.go)
				p.payloadSent.Add(int64(len(payload)))
			}
		}
	}
	p.rj.next, p.rj.payload = k, payload
	if p.rj.dropped.Load() { // dropped after its last publish: resend what was in flight
		var err error
		if sess, err = p.rejoin(ctx, sess, k, false, false, payload); err != nil {
			return p.failed(err)
		}
	}
	if err := sess.Flush(); err != nil {
		return p.failed(err)
	}
	if !p.rj.rejoinedOnce {
		p.win.recount(sess.Counters().BytesSent)
	}
	if r.end == 0 {
		p.endedAt = r.now()
	}
	return nil
}

// schedule is when a publisher sends: in an open loop message k is due at start + k·interval
// (interval: the publishers share the rate; start: the run's start at the publisher's phase, a
// fraction of one interval, so that they do not all fire in the same microsecond), whenever it
// gets there; in a closed loop (rate 0) as soon as its inflight window allows. A quota
// (workload.messages) ends either after that many messages.
type schedule struct {
	openLoop bool
	start    int64   // engine time message 0 is due (open loop)
	interval float64 // ns between this publisher's messages (open loop)
	quota    int64   // 0: until the window ends
}

// newSchedule is the schedule of one of publishers sharing rate msg/s (0: closed loop), whose
// run starts at t0.
func newSchedule(rate float64, publishers int, t0 int64, phase float64, quota int64) schedule {
	s := schedule{openLoop: rate > 0, start: t0, quota: quota}
	if s.openLoop {
		s.interval = float64(publishers) * 1e9 / rate
		s.start += int64(phase * s.interval)
	}
	return s
}

// at is when open-loop message k is due.
func (s schedule) at(k int64) int64 { return s.start + int64(float64(k)*s.interval) }

// done says whether message k is past the quota.
func (s schedule) done(k int64) bool { return s.quota > 0 && k >= s.quota }

// in counts the open-loop messages due in [from, to); a closed loop has no due times (0).
func (s schedule) in(from, to int64) int64 {
	if !s.openLoop {
		return 0
	}
	return scheduledIn(s.start, s.interval, from, to, s.quota)
}

// scheduledIn counts the open-loop sends k = 0, 1, … (at most quota when quota > 0) whose
// intended time start + k·interval falls in [from, to).
func scheduledIn(start int64, interval float64, from, to, quota int64) int64 {
	if interval <= 0 || to <= from {
		return 0
	}
	// first k with start + k·interval >= t
	first := func(t int64) int64 {
		if t <= start {
			return 0
		}
		k := int64(math.Ceil(float64(t-start) / interval))
		for k > 0 && start+int64(float64(k-1)*interval) >= t { // float rounding
			k--
		}
		for start+int64(float64(k)*interval) < t {
			k++
		}
		return k
	}
	a, b := first(from), first(to)
	if quota > 0 {
		a, b = min(a, quota), min(b, quota)
	}
	return b - a
}

// closeIfStuck closes the publisher's session if, after the run's end, one Publish has been
// blocked for longer than the acknowledgement wait, or if ctx ends while it publishes: a Publish
// blocked on a full inflight window returns only when the broker acknowledges or the session
// closes, so a broker that stopped answering would otherwise hold the run (and a worker pod)
// forever. A publisher that is merely behind its open-loop schedule (a slow link) keeps getting
// acknowledgements, so each of its Publish calls ends and it is left alone. It returns when
// publishing ends.
func (p *publisher) closeIfStuck(ctx context.Context, publishing <-chan struct{}) {
	r := p.r
	var tick <-chan time.Time
	if r.end > 0 {
		t := time.NewTimer(max(0, time.Duration(r.end-r.now())))
		defer t.Stop()
		tick = t.C
	}
	var ticker *time.Ticker
	defer func() {
		if ticker != nil {
			ticker.Stop()
		}
	}()
	for {
		select {
		case <-publishing:
			return
		case <-ctx.Done():
			if s := p.live.Load(); s != nil {
				_ = (*s).Close()
			}
			return
		case <-tick:
			if ticker == nil { // the run's end: from now on look once a second
				ticker = time.NewTicker(time.Second)
				tick = ticker.C
			}
			if since := p.blockedSince.Load(); since != 0 && time.Duration(r.now()-max(since, r.end)) > r.ackWait() {
				p.stuck.Store(true)
				if s := p.live.Load(); s != nil {
					_ = (*s).Close()
				}
				return
			}
		}
	}
}

// rejoining is a publisher's part in a reconnect storm: dropped is set before the storm drops
// its session, rejoined hands it the new one (nil: never back), rejoinedOnce says it has had
// one. sessPublished and sessCompleted count the current session's publishes and
// acknowledgements, intended the intended times of the latest publishes by sequence number (what
// was in flight at the drop is resent with its own).
type rejoining struct {
	dropped       atomic.Bool
	droppedAt     atomic.Int64 // engine time the storm dropped its session
	rejoined      chan drivers.Session
	rejoinedOnce  bool
	sessPublished int64
	sessCompleted atomic.Int64
	intended      []int64
	// next is the sequence number after its last publish and payload its buffer, for a drop
	// that comes after the publish loop ended (the drain resends then).
	next    int64
	payload []byte
}

// recordSent counts a measured message sent at actual (engine time) in its timeline bucket, and
// with a schedule (delay) how late it went out after intended.
func (p *publisher) recordSent(intended, actual, window int64, delay bool) {
	p.win.sent.Add(1)
	p.shard.mu.Lock()
	p.shard.sent++
	if delay {
		results.RecordMicros(p.shard.delay, (actual-intended)/1000)
	}
	p.shard.bucketLocked(p.r.rec.interval, window, actual).sent++
	p.shard.mu.Unlock()
}

// meter is a publisher's share of the measured window: from when its acknowledgements count,
// how many messages it sent in the window, and the uplink bytes they cost.
type meter struct {
	// measureFrom is the engine time just before the first measured Publish: acknowledgements
	// of messages stamped from then on belong to the measured window.
	measureFrom atomic.Int64
	sent        atomic.Int64 // messages sent in the measured window
	// firstK is the sequence number of the first of them (which topic each went to: fleet.go).
	firstK     atomic.Int64 // read by live metrics while the publisher runs
	measuring  bool
	startBytes int64 // the socket's bytes written before the first measured message (-1: not counted)
	// bytes is what the socket wrote from the first measured message until the last one was
	// acknowledged (the drain recounts it then): the uplink cost of the measured messages,
	// including bytes a driver writes after Publish returned (HTTP/2 and HTTP/3 senders, QUIC's
	// send loop) and completions such as QoS 2's PUBREL.
	bytes int64
	// done is set when every measured message was acknowledged and bytes recounted: only then
	// do its bytes and messages count towards publishBytesPerMessage.
	done bool
}

// reset: nothing is measured yet.
func (m *meter) reset() { m.measureFrom.Store(1 << 62) }

// begin marks the first measured message, at engine time now with the socket's bytes written so
// far (-1: its bytes are not counted, as a duty cycle's sessions retire at each sleep).
func (m *meter) begin(now, bytesWritten int64) {
	m.measuring, m.startBytes = true, bytesWritten
	m.measureFrom.Store(now)
}

// counts says whether the acknowledgement of a message sent at sentAt belongs to the window.
func (m *meter) counts(sentAt int64) bool { return sentAt >= m.measureFrom.Load() }

// recount takes the socket's bytes written by now as the window's cost so far.
func (m *meter) recount(bytesWritten int64) {
	if m.measuring && m.startBytes >= 0 {
		m.bytes = bytesWritten - m.startBytes
	}
}

// failed counts a publish error; the run goes on without this publisher, and its message says so.
func (p *publisher) failed(err error) error {
	p.endedAt = p.r.now()
	p.shard.mu.Lock()
	p.shard.errors++
	p.shard.mu.Unlock()
	return p.gr.clientErr(drivers.Publisher, p.plan.Index, err)
}

// Message implements drivers.Handler; publishers subscribe to nothing.
func (p *publisher) Message([]byte) {}

// Completed implements drivers.Handler: a broker acknowledgement.
func (p *publisher) Completed(sentAt int64, ok bool) {
	r := p.r
	p.rj.sessCompleted.Add(1)
	if p.countAcks {
		p.completed.Add(1)
	}
	if !p.win.counts(sentAt) {
		return
	}
	now := r.now()
	p.shard.mu.Lock()
	if ok {
		p.shard.acked++
		results.RecordMicros(p.shard.ack, (now-sentAt)/1000)
	} else {
		p.shard.errors++
	}
	p.shard.mu.Unlock()
}

// fillPayload fills a payload with pseudo-random bytes (incompressible, like sensor data after
// encryption; all-zero payloads would flatter compressing protocols).
func fillPayload(b []byte, seed int) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6d7367626e6368))
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
}
