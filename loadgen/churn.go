package loadgen

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/msgbench/msgbench/internal/wire"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/plan"
	"github.com/msgbench/msgbench/results"
)

// Device churn (spec.workload.dutyCycle and reconnectStorm; docs/churn.md): devices that wake,
// connect, publish, disconnect and sleep, and every connection dropped at once. The schedules
// are pure functions of the spec, so the result can say what it expected and match it.

// lateWake is how far after its intended time a wake's connect may begin and still be on time.
const lateWake = 10 * time.Millisecond

// churn is a run's churn counters; the result's churn section is made of them.
type churn struct {
	t0                                    int64 // engine time the run began (publishing's start)
	connects, disconnects                 atomic.Int64
	wakes, lateWakes, subWakes, collected atomic.Int64
	queued                                atomic.Int64

	mu               sync.Mutex // the histograms
	queuedEndToEnd   *hdrhistogram.Histogram
	reconnectLatency *hdrhistogram.Histogram

	storm *storm // nil without reconnectStorm
}

func newChurn() *churn {
	return &churn{queuedEndToEnd: results.NewHistogram(), reconnectLatency: results.NewHistogram()}
}

func (c *churn) recordQueued(micros int64) {
	c.mu.Lock()
	results.RecordMicros(c.queuedEndToEnd, micros)
	c.mu.Unlock()
}

// retired sums the wire figures of a client's sessions that have ended (a duty cycle's wakes,
// the connections a storm dropped), so that the result counts every byte of every connection.
type retired struct {
	mu                  sync.Mutex // bytes is read at the window's start, while a wake may retire a session
	counters            wire.Counters
	connectBytes, conns int64
}

func (t *retired) add(s drivers.Session) {
	c, cb := s.Counters(), s.ConnectBytes()
	t.mu.Lock()
	t.counters.Add(c)
	t.connectBytes += cb
	t.conns++
	t.mu.Unlock()
}

// bytes is what the retired sessions carried both ways.
func (t *retired) bytes() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.counters.BytesSent + t.counters.BytesReceived
}

// dutyPhase is device i of n's offset into the period: the devices' wakes spread evenly.
func dutyPhase(i, n int, period int64) int64 {
	if n <= 0 {
		return 0
	}
	return int64(float64(period) * float64(i) / float64(n))
}

// sleeperPhase is sleeping subscriber i of n's offset: half a slot after dutyPhase, so that a
// subscriber does not wake in the same instant as the publisher of the same index (whose
// message would then be published while it connects, neither clearly queued nor live).
func sleeperPhase(i, n int, period int64) int64 {
	return dutyPhase(2*i+1, 2*n, period)
}

// wakesIn counts the wakes t0 + phase + k·period (k ≥ 0) in [from, to).
func wakesIn(t0, phase, period, from, to int64) int64 {
	return scheduledIn(t0+phase, float64(period), from, to, 0)
}

// collects reports whether a sleeping subscriber with this phase is asleep when publishing ends
// (at end), so that it wakes once more to collect what is queued: its last wake before end left
// it asleep again before end, or it never woke.
func collects(t0, phase, period, awake, end int64) bool {
	n := wakesIn(t0, phase, period, t0, end)
	if n == 0 {
		return true
	}
	last := t0 + phase + (n-1)*period
	return last+awake < end
}

// --- Duty cycle: publishers ---

// runDutyCycle is a duty-cycled publisher: it wakes at its phase once per period until the end of
// publishing, connects, publishes messagesPerWake messages stamped with the wake time (so their
// latency includes the connect), waits for their acknowledgements, disconnects cleanly and
// sleeps. A wake that comes late (the previous one still busy) still happens: the schedule's
// every wake is made, so the counts are exact.
func (p *publisher) runDutyCycle(ctx context.Context) error {
	r := p.r
	dc := r.group().Load.DutyCycle
	period := int64(dc.Period)
	m := int64(dc.MessagesPerWake)
	start := r.churn.t0 + dutyPhase(p.plan.Index, r.share.TotalPublishers, period)
	window := r.window.Load()
	payload := make([]byte, r.group().PayloadBytes)
	fillPayload(payload, p.plan.Index)
	p.win.reset()
	p.endedAt = r.end
	var timer *time.Timer
	for w := int64(0); ; w++ {
		wake := start + w*period
		if wake >= r.end {
			// Asleep until the window's end: the window is as long as it says even when this
			// device has no wake left in it (its rates are a sleeping fleet's).
			if !waitUntil(ctx, &timer, r.now, r.end) {
				return ctx.Err()
			}
			return nil
		}
		if !waitUntil(ctx, &timer, r.now, wake) {
			return ctx.Err()
		}
		measured := wake >= window
		late := time.Duration(r.now()-wake) > lateWake
		if err := p.wake(ctx, wake, w*m, m, measured, payload); err != nil {
			return p.failed(err)
		}
		if measured {
			r.churn.wakes.Add(1)
			if late {
				r.churn.lateWakes.Add(1)
			}
		}
	}
}

// wake is one wake of a duty-cycled publisher: connect, publish messages seq0 … seq0+m−1, wait for
// their acknowledgements (QoS > 0), disconnect.
func (p *publisher) wake(ctx context.Context, wake, seq0, m int64, measured bool, payload []byte) error {
	r := p.r
	c := p.gr.device(r, drivers.Publisher, p.plan)
	sess, err := r.connect(ctx, p.gr, c, p, &p.dial)
	if err != nil {
		return err
	}
	r.churn.connects.Add(1)
	p.live.Store(&sess)
	defer func() {
		p.live.Store(nil)
		p.retired.add(sess)
		_ = sess.Close()
	}()
	if measured && !p.win.measuring {
		p.win.begin(r.now(), -1)
	}
	window := r.window.Load()
	for j := int64(0); j < m; j++ {
		if len(payload) >= HeaderSize {
			putHeader(payload, uint32(p.plan.Index), uint32(seq0+j), wake)
		}
		if err := sess.Publish(payload, true); err != nil {
			return err
		}
		actual := r.now()
		p.lastSend = actual
		if measured {
			p.recordSent(wake, actual, window, true)
		}
	}
	// Acknowledged before the device disconnects: a device that sleeps with a message unsent
	// loses it.
	actx, cancel := context.WithTimeout(ctx, r.ackWait())
	err = sess.Drain(actx)
	cancel()
	if err != nil {
		return err
	}
	if err := sess.Close(); err != nil {
		return fmt.Errorf("disconnect: %w", err)
	}
	r.churn.disconnects.Add(1)
	return nil
}

// --- Duty cycle: sleeping subscribers ---

// runSleeping is a sleeping subscriber (dutyCycle.subscribers): subscribed before the start, it
// disconnects cleanly at the start, then wakes at its phase once per period, resumes its
// persistent session (the broker delivers what it queued) and stays connected awake. A wake
// whose awake time reaches past the end of publishing stays connected; one asleep at the end
// wakes once more to collect the rest (collects). It returns with the subscriber connected.
func (s *subscriber) runSleeping(ctx context.Context) error {
	r := s.r
	dc := r.group().Load.DutyCycle
	period, awake := int64(dc.Period), int64(dc.Awake)
	start := r.churn.t0 + sleeperPhase(s.plan.Index, int(r.group().Subscribers), period)
	if err := s.sleep(); err != nil {
		return err
	}
	var timer *time.Timer
	for w := int64(0); ; w++ {
		wake := start + w*period
		if wake >= r.end {
			break
		}
		if !waitUntil(ctx, &timer, r.now, wake) {
			return ctx.Err()
		}
		if err := s.resume(ctx); err != nil {
			return err
		}
		r.churn.subWakes.Add(1)
		if wake+awake >= r.end {
			return nil // awake through the end: it stays for the drain
		}
		if !waitUntil(ctx, &timer, r.now, wake+awake) {
			return ctx.Err()
		}
		if err := s.sleep(); err != nil {
			return err
		}
	}
	if !waitUntil(ctx, &timer, r.now, r.end) {
		return ctx.Err()
	}
	if err := s.resume(ctx); err != nil {
		return err
	}
	r.churn.collected.Add(1)
	return nil
}

// sleep disconnects the subscriber cleanly; the broker keeps its session and queues for it.
func (s *subscriber) sleep() error {
	sess := s.sess
	s.live.Store(nil)
	s.retired.add(sess)
	s.sess = nil
	if err := sess.Close(); err != nil {
		return s.gr.clientErr(drivers.Subscriber, s.plan.Index, fmt.Errorf("disconnect: %w", err))
	}
	s.r.churn.disconnects.Add(1)
	return nil
}

// resume reconnects the subscriber to its persistent session; queued messages follow CONNACK.
func (s *subscriber) resume(ctx context.Context) error {
	s.resumed.Store(true)
	return s.open(ctx)
}

// --- Reconnect storm ---

// storm is a reconnect storm's state and figures.
type storm struct {
	at                                             atomic.Int64 // engine time the drop began (0: not yet)
	dropped, reconnected, notBack, failed, retries atomic.Int64
	inFlight, resent                               atomic.Int64
	lastBack                                       atomic.Int64
	wg                                             sync.WaitGroup // the reconnections
}

// aborter is a session that can be dropped without a goodbye (the MQTT drivers' Abort).
type aborter interface{ Abort() }

func abort(s drivers.Session) {
	if a, ok := s.(aborter); ok {
		a.Abort()
		return
	}
	_ = s.Close() // a driver without Abort: the API refuses storms on its protocol
}

// runStorm drops every connected client's connection at t0 + at, all at once, then reconnects
// each client at at + spread·i/n (i its place among the n dropped), retrying failed attempts with
// a backoff until the end of publishing plus the acknowledgement wait.
func (r *run) runStorm(ctx context.Context) {
	st := r.churn.storm
	rs := r.group().Load.ReconnectStorm
	var timer *time.Timer
	if !waitUntil(ctx, &timer, r.now, r.churn.t0+int64(rs.At)) {
		return
	}
	at := r.now()
	st.at.Store(at)
	type client struct {
		rejoin func(context.Context) error // reconnects (and re-subscribes); hands the session over
		giveUp func()
	}
	var clients []client
	// Publishers first: each is marked dropped before its session goes, so that the error its
	// Publish sees is known to be the storm's.
	for _, p := range r.pubs {
		sp := p.live.Load()
		if sp == nil {
			continue // not connected (yet, or any more)
		}
		p.rj.dropped.Store(true)
		p.rj.droppedAt.Store(r.now())
		abort(*sp)
		clients = append(clients, client{rejoin: p.reconnect, giveUp: func() { p.rj.rejoined <- nil }})
	}
	for _, s := range r.subs {
		if s.live.Load() == nil {
			continue
		}
		s.live.Store(nil)
		abort(s.sess)
		s.retired.add(s.sess)
		s.sess = nil
		clients = append(clients, client{rejoin: s.reconnect, giveUp: func() {}})
	}
	st.dropped.Store(int64(len(clients)))
	spread := int64(rs.Spread)
	deadline := r.end + int64(r.ackWait())
	for i, c := range clients {
		st.wg.Add(1)
		go func() {
			defer st.wg.Done()
			var t *time.Timer
			if !waitUntil(ctx, &t, r.now, at+dutyPhase(i, len(clients), spread)) {
				c.giveUp()
				st.notBack.Add(1)
				return
			}
			backoff := 50 * time.Millisecond
			for attempt := 0; ; attempt++ {
				if attempt > 0 {
					st.retries.Add(1)
				}
				err := c.rejoin(ctx)
				if err == nil {
					st.reconnected.Add(1)
					now := r.now()
					for {
						last := st.lastBack.Load()
						if now <= last || st.lastBack.CompareAndSwap(last, now) {
							break
						}
					}
					return
				}
				st.failed.Add(1)
				if ctx.Err() != nil || r.now()+int64(backoff) > deadline {
					r.logf("reconnect storm: a client is not back: %v", err)
					c.giveUp()
					st.notBack.Add(1)
					return
				}
				if !timerSleep(ctx, &t, backoff) {
					c.giveUp()
					st.notBack.Add(1)
					return
				}
				backoff = min(2*backoff, 2*time.Second)
			}
		}()
	}
}

// timedConnect connects and records the reconnection's connect latency.
func (r *run) timedConnect(ctx context.Context, c drivers.Client, h drivers.Handler, dial *atomic.Int64) (drivers.Session, error) {
	start := r.now()
	sess, err := r.connect(ctx, r.groups[0], c, h, dial)
	if err != nil {
		return nil, err
	}
	r.churn.connects.Add(1)
	r.churn.mu.Lock()
	results.RecordMicros(r.churn.reconnectLatency, (r.now()-start)/1000)
	r.churn.mu.Unlock()
	return sess, nil
}

// reconnect is a dropped publisher's reconnection: the session goes to the publisher's loop,
// which resends what was in flight and goes on with its schedule.
func (p *publisher) reconnect(ctx context.Context) error {
	r := p.r
	c := p.gr.device(r, drivers.Publisher, p.plan)
	sess, err := r.timedConnect(ctx, c, p, &p.dial)
	if err != nil {
		return err
	}
	p.rj.rejoined <- sess
	return nil
}

// reconnect is a dropped subscriber's reconnection: its persistent session (the broker queued
// what was published meanwhile) and, as a device's client does, its subscription again.
func (s *subscriber) reconnect(ctx context.Context) error {
	r := s.r
	c := s.gr.device(r, drivers.Subscriber, s.plan)
	s.sessStart.Store(r.now())
	// only a kept session has a queue (a clean one's late deliveries are late publishes)
	s.resumed.Store(r.group().PersistentSession())
	sess, err := r.timedConnect(ctx, c, s, &s.dial)
	if err != nil {
		return err
	}
	if err := sess.Subscribe(ctx); err != nil {
		s.retired.add(sess)
		_ = sess.Close()
		return err
	}
	s.sess = sess
	s.live.Store(&sess)
	return nil
}

// rejoin is a dropped publisher taking its new session: it retires the old one, resends the
// publishes the old one left unacknowledged (QoS ≥ 1; acknowledgements come in order, so they
// are the last ones) and, when retry, publishes message k, whose Publish failed: interrupted by
// the drop (begun before it: it was in flight, and counts as resent) or refused by the session
// already dropped (not sent at all: it just goes on the new session). It returns the new
// session, or an error when the client never came back.
func (p *publisher) rejoin(ctx context.Context, old drivers.Session, k int64, retry, interrupted bool, payload []byte) (drivers.Session, error) {
	r := p.r
	st := r.churn.storm
	var sess drivers.Session
	select {
	case sess = <-p.rj.rejoined:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.rj.dropped.Store(false)
	p.retired.add(old)
	if sess == nil {
		return nil, fmt.Errorf("not reconnected after the reconnect storm")
	}
	p.sess = sess
	p.live.Store(&sess)
	p.rj.rejoinedOnce = true
	var n int64
	if r.group().QoS > 0 {
		n = max(0, min(p.rj.sessPublished-p.rj.sessCompleted.Load(), k, int64(len(p.rj.intended))-1))
	}
	p.rj.sessPublished = 0
	p.rj.sessCompleted.Store(0)
	last := k
	if retry {
		last = k + 1
	}
	inFlight := n
	if retry && interrupted {
		inFlight++
	}
	st.inFlight.Add(inFlight)
	for j := k - n; j < last; j++ {
		if len(payload) >= HeaderSize {
			putHeader(payload, uint32(p.plan.Index), uint32(j), p.rj.intended[j%int64(len(p.rj.intended))])
		}
		if err := sess.Publish(payload, true); err != nil {
			return sess, err
		}
		p.rj.sessPublished++
		if j < k || interrupted {
			st.resent.Add(1)
		}
	}
	return sess, nil
}

// --- Result ---

// churnResult is the result's churn section (nil without churn), and its histograms go to hists;
// lost is the run's lost deliveries.
func (r *run) churnResult(hists map[string]*hdrhistogram.Histogram, lost *int64) *results.Churn {
	g := r.group()
	if g.Load.DutyCycle == nil && g.Load.ReconnectStorm == nil {
		return nil
	}
	c := r.churn
	out := &results.Churn{
		Connects: c.connects.Load(), Disconnects: c.disconnects.Load(),
		Wakes: c.wakes.Load(), LateWakes: c.lateWakes.Load(),
		SubscriberWakes: c.subWakes.Load(), CollectWakes: c.collected.Load(), QueuedDeliveries: c.queued.Load(),
	}
	var expected int64
	if dc := g.Load.DutyCycle; dc != nil {
		period := int64(dc.Period)
		for _, p := range r.pubs {
			ph := dutyPhase(p.plan.Index, r.share.TotalPublishers, period)
			out.ExpectedWakes += wakesIn(c.t0, ph, period, r.window.Load(), r.end)
			expected += wakesIn(c.t0, ph, period, c.t0, r.end)
		}
		out.ExpectedMessages = out.ExpectedWakes * int64(dc.MessagesPerWake)
		for _, s := range r.subs {
			expected++ // subscribed before the start
			if !dc.Subscribers {
				continue
			}
			ph := sleeperPhase(s.plan.Index, int(g.Subscribers), period)
			n := wakesIn(c.t0, ph, period, c.t0, r.end)
			out.ExpectedSubscriberWakes += n
			expected += n
			if collects(c.t0, ph, period, int64(dc.Awake), r.end) {
				expected++
			}
		}
	}
	if st := c.storm; st != nil {
		s := &results.Storm{
			Dropped: st.dropped.Load(), Reconnected: st.reconnected.Load(), NotBack: st.notBack.Load(),
			FailedAttempts: st.failed.Load(), Retries: st.retries.Load(),
			InFlightAtDrop: st.inFlight.Load(), Resent: st.resent.Load(),
			PersistentSessions: r.group().PersistentSession(),
		}
		if lost != nil {
			s.LostAtDrop = *lost
		}
		if at := st.at.Load(); at > 0 {
			s.AtSeconds = time.Duration(at - c.t0).Seconds()
			if last := st.lastBack.Load(); last > at && s.NotBack == 0 {
				s.RecoverySeconds = time.Duration(last - at).Seconds()
			}
		}
		out.Storm = s
		// every client connected once, and every dropped one once more
		expected = int64(len(r.pubs)+len(r.subs)) + s.Dropped
	}
	out.ExpectedConnects = &expected
	c.mu.Lock()
	hists[results.HistQueuedEndToEnd] = c.queuedEndToEnd
	hists[results.HistReconnect] = c.reconnectLatency
	c.mu.Unlock()
	return out
}

// group is the run's one group, a flat spec's: every client of the run is in it until a run
// has several (then each client's group).
func (r *run) group() *plan.Group { return &r.compiled.Groups[0] }
