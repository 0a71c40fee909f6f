package loadgen

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/plan"
	"github.com/msgbench/msgbench/results"
)

// groupRun is one group of the plan in this worker: its share of the group's clients and the
// driver of its protocol. A flat spec's run has one; a run with spec.groups one per device group
// (docs/fleets.md).
type groupRun struct {
	index int
	g     *plan.Group
	// remote: another worker runs the group (Options.Groups); it has no clients here.
	remote bool
	// memberIdx are its subscribers' indices (members).
	membersOnce sync.Once
	memberIdx   []int
	share       plan.Share
	drv         drivers.Driver
	// address is where its clients connect (Options.Address, or its Endpoints entry).
	address string
	// base is the id of the group's publisher 0 in message headers (0 for a flat spec).
	base int
	pubs []*publisher
	subs []*subscriber

	// A group that joins late (Fleet.Start): joined is set once every subscriber of it
	// subscribed, and joinK holds, by publisher id, the first sequence number its subscribers
	// count: every message from then on was sent after all of them had subscribed, so exactly
	// those are expected. beforeJoin counts the deliveries before that, which are not.
	joined     atomic.Bool
	joinK      map[uint32]int64
	beforeJoin atomic.Int64
	// retainedDue and retainedGot count the retained messages its subscriptions should bring
	// and those that came (a retained message is counted apart from the others).
	retainedDue, retainedGot atomic.Int64
	// requests are the answers to a requesting group's messages (publish.replyTo; nil for
	// another group: requests.go).
	requests *requests
}

// start is when the group's clients connect, from the run's start (0: before it).
func (gr *groupRun) start() time.Duration {
	if gr.g.Fleet == nil {
		return 0
	}
	return gr.g.Fleet.Start
}

// early are the clients that connect before the run starts: all but those of groups that join
// late.
func early[C interface{ group() *groupRun }](clients []C) []C {
	var out []C
	for _, c := range clients {
		if c.group().start() == 0 {
			out = append(out, c)
		}
	}
	return out
}

func (p *publisher) group() *groupRun  { return p.gr }
func (s *subscriber) group() *groupRun { return s.gr }

// joinLate connects and subscribes a late group's subscribers at its start, then marks from which
// message of each publisher they count.
func (r *run) joinLate(ctx context.Context, gr *groupRun, t0 int64) error {
	if err := sleepUntil(ctx, r.epoch.Add(time.Duration(t0)+gr.start())); err != nil {
		return err
	}
	slots := make(chan struct{}, concurrentConnects(r.o.Workers, r.compiled.Network.Link.RTT()))
	errs := make(chan error, len(gr.subs))
	var wg sync.WaitGroup
	for _, s := range gr.subs {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			if err := s.connect(ctx); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	// A message whose sequence number is past the one being sent now is sent after this
	// moment, when every subscription is in place.
	gr.joinK = make(map[uint32]int64, len(r.pubByIndex))
	for id, p := range r.pubByIndex {
		gr.joinK[uint32(id)] = p.next.Load() + 1
	}
	gr.joined.Store(true)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return joinSummarized(all, len(gr.subs))
}

// settled is how many of the publisher's messages the broker surely has: acknowledged, or at
// QoS 0 (no acknowledgement) written to the socket.
func (p *publisher) settled() int64 {
	if p.gr.g.QoS > 0 {
		return p.completed.Load()
	}
	return p.next.Load() + 1
}

// dueRetained is how many retained messages the subscriber's subscription, made now, should
// bring: one per topic it matches to which a retaining publisher's message surely arrived.
func (s *subscriber) dueRetained() int64 {
	r := s.r
	_, filter := r.compiled.Subscription(s.gr.g, s.plan.Index, r.o.RunID)
	var due int64
	for _, p := range r.pubs {
		f := p.gr.g.Fleet
		if f == nil || !f.Retain {
			continue
		}
		first, step, _ := p.gr.g.PublisherTopics(p.plan.Index)
		n := int64(p.gr.g.TopicsOf(p.plan.Index))
		for j := range min(n, p.settled()) {
			if plan.MatchTopic(filter, r.compiled.TopicName(f.Topics, first+int(j)*step, r.o.RunID)) {
				due++
			}
		}
	}
	return due
}

// Retained implements drivers.RetainedHandler: a retained message a new subscription brought.
// It is counted apart, never as one of the deliveries the subscriptions call for.
func (s *subscriber) Retained(payload []byte) {
	if s.sources == nil || len(payload) < HeaderSize {
		s.Message(payload) // a flat spec retains nothing: whatever it is, it is not this run's
		return
	}
	pub, seq, _ := readHeader(payload)
	src := s.sourceOf(pub)
	if src == nil || (src.pub != nil && int64(seq) > src.pub.next.Load()) {
		// A retained message of another run (or one this run cleared before): not ours.
		s.shard.mu.Lock()
		s.shard.errors++
		s.shard.mu.Unlock()
		return
	}
	s.gr.retainedGot.Add(1)
	src.pair.mu.Lock()
	src.pair.retained++
	src.pair.mu.Unlock()
}

// clearRetained removes, once the run is over, the retained messages the publisher left on the
// broker (an empty retained message clears a topic's), so that the next run on a shared broker
// does not get them.
func (p *publisher) clearRetained() {
	f := p.gr.g.Fleet
	tp, ok := p.sess.(drivers.TopicPublisher)
	if f == nil || !f.Retain || !ok || p.next.Load() < 0 {
		return
	}
	p.win.measureFrom.Store(1 << 62) // their acknowledgements are not the window's
	topics := p.topics
	if topics == nil {
		first, _, _ := p.gr.g.PublisherTopics(p.plan.Index)
		topics = []string{p.r.compiled.TopicName(f.Topics, first, p.r.o.RunID)}
	}
	for _, t := range topics {
		if tp.PublishTo(t, nil, false) != nil {
			return
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = p.sess.Flush()
	_ = p.sess.Drain(ctx)
}

// client is the driver's description of the group's client c.
func (gr *groupRun) client(r *run, role drivers.Role, c plan.Client) drivers.Client {
	g := gr.g
	if g.Fleet == nil {
		prefix := "p"
		if role == drivers.Subscriber {
			prefix = "s"
		}
		return drivers.Client{ID: r.clientID(prefix, c.Index), Role: role, Topic: g.TopicName(c.Topic), TopicIndex: c.Topic, Index: c.Index}
	}
	id := g.ClientID(c.Index, r.o.RunID)
	if role == drivers.Publisher {
		first, _, _ := g.PublisherTopics(c.Index)
		return drivers.Client{ID: id, Role: role, Topic: r.compiled.TopicName(g.Fleet.Topics, first, r.o.RunID), TopicIndex: first, Index: c.Index}
	}
	sub, _ := r.compiled.Subscription(g, c.Index, r.o.RunID)
	return drivers.Client{ID: id, Role: role, Topic: sub, Index: c.Index}
}

// publisherTopics is the names of the topics a fleet publisher cycles over, message k going to
// topics[k mod len]; nil when it keeps to the one its session was opened with.
func (gr *groupRun) publisherTopics(r *run, index int) []string {
	g := gr.g
	if g.Fleet == nil || g.TopicsOf(index) == 1 {
		return nil
	}
	first, step, n := g.PublisherTopics(index)
	var names []string
	for t := first; t < n; t += step {
		names = append(names, r.compiled.TopicName(g.Fleet.Topics, t, r.o.RunID))
	}
	return names
}

// fleet is what a run with spec.groups tracks beyond a flat one: which publisher a delivery
// came from (by the id in its header) and the delivery per pair of groups.
type fleet struct {
	mu    sync.Mutex
	pairs map[[2]int]*pairStats // [publishing group, subscribing group]
}

// pairStats is the delivery from one group to another, recorded by the subscribers.
type pairStats struct {
	mu                          sync.Mutex
	unique, dups, ooo, retained int64
	endToEnd                    *hdrhistogram.Histogram
	// clock is how the latency of a publishing group another worker runs was put on this
	// worker's clock (nil: one worker, one clock).
	clock *results.PairClock
}

func (f *fleet) pair(from, to int) *pairStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := [2]int{from, to}
	if p := f.pairs[k]; p != nil {
		return p
	}
	p := &pairStats{endToEnd: results.NewHistogram()}
	f.pairs[k] = p
	return p
}

// source is one publisher as one subscriber sees it.
type source struct {
	t   tracker
	pub *publisher
	// div turns the publisher's sequence numbers into this subscriber's: a publisher cycling over
	// div topics, of which the subscriber holds one, sends it every div-th message.
	div  uint32
	pair *pairStats
	// shift puts the send time of a publisher another worker runs on this worker's clock
	// (nanoseconds; clockOf); slack is that correction's uncertainty (nanoseconds): a delivery
	// quicker than it may seem to arrive before it was sent.
	shift, slack int64
}

// sourceOf finds the publisher with id pub among the run's fleet and checks that this
// subscriber's subscription matches a topic it publishes to; nil when it does not (a message of
// another run or client on a shared broker). The answer is kept, so each publisher is looked up
// once per subscriber. Called on the subscriber's reader goroutine only.
func (s *subscriber) sourceOf(pub uint32) *source {
	if src, ok := s.sources[pub]; ok {
		return src
	}
	src := s.findSource(pub)
	s.sources[pub] = src
	return src
}

func (s *subscriber) findSource(pub uint32) *source {
	r := s.r
	pg, index := r.publisherOf(pub)
	if pg == nil || pg.g.Fleet.Topics == nil {
		return nil
	}
	g := pg.g
	_, filter := r.compiled.Subscription(s.gr.g, s.plan.Index, r.o.RunID)
	first, step, _ := g.PublisherTopics(index)
	topics := g.TopicsOf(index)
	matched := 0
	for j := range topics {
		if plan.MatchTopic(filter, r.compiled.TopicName(g.Fleet.Topics, first+j*step, r.o.RunID)) {
			matched++
		}
	}
	if matched == 0 {
		return nil
	}
	src := &source{pub: r.pubByIndex[int(pub)], div: 1, pair: r.fleet.pair(pg.index, s.gr.index)}
	if matched == 1 && topics > 1 {
		src.div = uint32(topics)
	}
	if pg.remote {
		var pc *results.PairClock
		src.shift, pc = r.clockOf(pg)
		if !pc.Uncorrected {
			src.slack = pc.UncertaintyMicros * 1000
		}
		src.pair.mu.Lock()
		if src.pair.clock == nil || pc.Uncorrected {
			src.pair.clock = pc
		}
		src.pair.mu.Unlock()
	}
	return src
}

// fleetExpected is what the subscription graph calls for: every subscriber whose subscription
// matches a topic expects each measured message published to it, a shared subscription once for
// all its members. It returns the total, the expected per subscribing group and per pair of
// groups. A worker that runs some of the groups (split) counts what its own publishers sent,
// at every subscribing group; results.Merge adds the workers' counts up. A late group's worker
// counts for it, from its join (its publishers run there: checkSplit).
func (r *run) fleetExpected() (total int64, perGroup []int64, perPair map[[2]int]int64) {
	perGroup = make([]int64, len(r.groups))
	perPair = map[[2]int]int64{}
	all := r.sentTo(nil)
	for _, sg := range r.groups {
		if sg.g.Subscribers == 0 || (sg.remote && sg.start() > 0) {
			continue
		}
		sentTo := all
		if sg.start() > 0 {
			if !sg.joined.Load() {
				continue // it never joined: it expects nothing
			}
			sentTo = r.sentTo(sg.joinK)
		}
		for _, pg := range r.groups {
			m := sentTo[pg.index]
			if m == nil {
				continue
			}
			var e int64
			if sg.g.Fleet.Topics != nil {
				for _, i := range sg.members() {
					name, _ := r.compiled.Subscription(sg.g, i, r.o.RunID)
					e += m[name]
				}
			} else {
				var each int64
				for name, c := range m {
					if plan.MatchTopic(sg.g.Fleet.Filter, name) {
						each += c
					}
				}
				if sg.g.Fleet.Share != "" {
					e = each // one member of the shared subscription gets each message
				} else {
					e = each * int64(sg.g.Subscribers)
				}
			}
			if e > 0 {
				perPair[[2]int{pg.index, sg.index}] = e
				perGroup[sg.index] += e
				total += e
			}
		}
	}
	return total, perGroup, perPair
}

// members are the indices of the group's subscribers, wherever they run.
func (gr *groupRun) members() []int {
	gr.membersOnce.Do(func() {
		for _, c := range gr.g.Share(0, 1).Subscribers {
			gr.memberIdx = append(gr.memberIdx, c.Index)
		}
	})
	return gr.memberIdx
}

// sentTo is, per publishing group and topic name, the measured messages sent to it — those
// from sequence number from[publisher id] on when from is given (a group that joined late).
func (r *run) sentTo(from map[uint32]int64) []map[string]int64 {
	out := make([]map[string]int64, len(r.groups))
	for _, gr := range r.groups {
		if len(gr.pubs) == 0 {
			continue
		}
		m := map[string]int64{}
		for _, p := range gr.pubs {
			first, step, _ := gr.g.PublisherTopics(p.plan.Index)
			n := int64(gr.g.TopicsOf(p.plan.Index))
			k0, sent := p.win.firstK.Load(), p.win.sent.Load()
			if from != nil {
				if f := from[uint32(gr.base+p.plan.Index)]; f > k0 {
					sent, k0 = max(0, sent-(f-k0)), f
				}
			}
			for j := int64(0); j < n && sent > 0; j++ {
				// messages k in [k0, k0+sent) with k mod n == j
				if c := countResidue(k0, sent, n, j); c > 0 {
					m[r.compiled.TopicName(gr.g.Fleet.Topics, first+int(j)*step, r.o.RunID)] += c
				}
			}
		}
		out[gr.index] = m
	}
	return out
}

// countResidue counts the k in [from, from+n) with k mod m == j.
func countResidue(from, n, m, j int64) int64 {
	if m == 1 {
		return n
	}
	below := func(x int64) int64 { // k in [0, x) with k mod m == j
		if x <= j {
			return 0
		}
		return (x-j-1)/m + 1
	}
	return below(from+n) - below(from)
}

// groupResults are the run's figures per group and per pair of groups.
func (r *run) groupResults(res *results.Result, perGroup []int64, perPair map[[2]int]int64) {
	secs := res.MeasuredSeconds
	rate := func(n int64) float64 {
		if secs <= 0 {
			return 0
		}
		return float64(n) / secs
	}
	for k, ps := range r.fleet.pairs { // a pair that only brought retained messages, or whose
		// publishers another worker runs (which counts the pair's expected)
		if _, ok := perPair[k]; !ok && (ps.retained > 0 || r.groups[k[0]].remote) {
			perPair[k] = 0
		}
	}
	for k, e := range perPair {
		from, to := r.groups[k[0]], r.groups[k[1]]
		pr := results.PairResult{From: from.g.Name, To: to.g.Name, Expected: e}
		if ps := r.fleet.pairs[k]; ps != nil {
			ps.mu.Lock()
			pr.Received, pr.Duplicates, pr.OutOfOrder, pr.Retained = ps.unique, ps.dups, ps.ooo, ps.retained
			pr.EndToEnd = results.Summarize(ps.endToEnd)
			pr.Clock = ps.clock
			ps.mu.Unlock()
		}
		pr.Lost = max(0, e-pr.Received)
		res.Pairs = append(res.Pairs, pr)
	}
	sortPairs(res.Pairs, r.groups)
	for _, gr := range r.groups {
		if gr.remote {
			continue // its worker reports it
		}
		h, _, c := r.rec.mergedGroup(gr.index)
		g := results.GroupResult{Name: gr.g.Name, Protocol: gr.g.ProtocolLabel(), QoS: gr.g.QoS, Publishers: len(gr.pubs), Subscribers: len(gr.subs),
			Sent: c.sent, Acked: c.acked, Received: c.received, Expected: perGroup[gr.index], Errors: c.errors}
		if len(gr.subs) > 0 {
			g.Lost, g.Duplicates, g.OutOfOrder = results.Int64(max(0, g.Expected-c.unique)), results.Int64(c.dups), results.Int64(c.ooo)
		}
		for _, p := range gr.pubs {
			g.Unsent += p.unsent
		}
		if due, got := gr.retainedDue.Load(), gr.retainedGot.Load(); due > 0 || got > 0 {
			g.Retained = &results.RetainedFigures{Expected: due, Received: got}
		}
		g.BeforeJoining = gr.beforeJoin.Load()
		g.Requests = r.requestFigures(gr, perPair)
		if n := gr.g.Network; n != nil {
			g.Network = n.Describe("msgbench user-space link of the group")
		}
		g.ReceivedInWindow = c.inWindow
		g.Throughput = results.Throughput{OfferedPerSecond: gr.g.Load.Rate, SentPerSecond: rate(c.sent), ReceivedPerSecond: rate(c.inWindow),
			SentBytesPerSecond: rate(gr.payloadSent())}
		if secs > 0 {
			g.Throughput.ReceivedBytesPerSecond = float64(c.inWindowBytes) / secs
		}
		g.Latency = results.Latencies{EndToEnd: results.Summarize(h[results.HistEndToEnd]), PublishAck: results.Summarize(h[results.HistPublishAck]),
			PublishDelay: results.Summarize(h[results.HistPublishDelay]), Connect: results.Summarize(h[results.HistConnect]),
			FirstMessage: results.Summarize(h[results.HistFirstMessage])}
		var connectBytes int64
		add := func(t *retired, sess drivers.Session) {
			g.Wire.BytesSent += t.counters.BytesSent
			g.Wire.BytesReceived += t.counters.BytesReceived
			g.Wire.Connections += t.conns
			connectBytes += t.connectBytes
			if sess != nil {
				c := sess.Counters()
				g.Wire.BytesSent += c.BytesSent
				g.Wire.BytesReceived += c.BytesReceived
				g.Wire.Connections++
				connectBytes += sess.ConnectBytes()
			}
		}
		for _, p := range gr.pubs {
			add(&p.retired, p.sess)
		}
		for _, s := range gr.subs {
			add(&s.retired, s.sess)
		}
		if g.Wire.Connections > 0 {
			g.Wire.ConnectBytes = results.Float64(math.Round(float64(connectBytes)/float64(g.Wire.Connections)*10) / 10)
		}
		res.Groups = append(res.Groups, g)
	}
}

// payloadSent is the payload bytes (header included) of the group's measured messages.
func (gr *groupRun) payloadSent() (n int64) {
	for _, p := range gr.pubs {
		if gr.g.Payload == nil { // one size: publisher.run counts only varied ones
			n += p.win.sent.Load() * int64(gr.g.PayloadBytes)
		} else {
			n += p.payloadSent.Load()
		}
	}
	return n
}

// sortPairs orders pairs as the groups are in the spec, publishers first.
func sortPairs(pairs []results.PairResult, groups []*groupRun) {
	at := map[string]int{}
	for _, gr := range groups {
		at[gr.g.Name] = gr.index
	}
	for i := 1; i < len(pairs); i++ {
		for j := i; j > 0; j-- {
			a, b := pairs[j-1], pairs[j]
			if at[a.From] < at[b.From] || (at[a.From] == at[b.From] && at[a.To] <= at[b.To]) {
				break
			}
			pairs[j-1], pairs[j] = b, a
		}
	}
}

// record counts one delivery of a measured message of the pair, with its end-to-end latency.
func (ps *pairStats) record(dup, ooo bool, e2eMicros int64) {
	ps.mu.Lock()
	if dup {
		ps.dups++
	} else {
		ps.unique++
		results.RecordMicros(ps.endToEnd, e2eMicros)
	}
	if ooo {
		ps.ooo++
	}
	ps.mu.Unlock()
}
