package loadgen

import (
	"context"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/results"
)

// Request/response (MQTT 5, §4.10): a group whose messages are requests (publish.replyTo) sends
// each with its device's own answer topic as Response Topic and the message's header as
// Correlation Data; a group that responds (subscribe.respond) answers each request it gets on
// that topic with that Correlation Data. The requester reads its header back from the answer:
// the round trip is taken on one clock, the requester's, wherever the responder runs.
//
// A request is an ordinary message of its group on the way there (delivered, counted and timed
// per pair like any other); an answer is counted apart, per requesting group: every delivery of
// a measured request to a responding subscription calls for one answer.

// requests are a requesting group's answers.
type requests struct {
	mu         sync.Mutex
	got, dups  int64
	errors     int64
	roundTrip  *hdrhistogram.Histogram
	lastAnswer int64 // engine time
}

// asker is a requesting publisher's session handler: it takes the answers too.
type asker struct{ *publisher }

// Response implements drivers.ResponseHandler, on the session's reader.
func (a asker) Response(_ []byte, corr []byte) {
	p, r := a.publisher, a.r
	q := p.gr.requests
	now := r.now()
	if len(corr) < HeaderSize {
		q.mu.Lock()
		q.errors++
		q.mu.Unlock()
		return
	}
	pub, seq, sent := readHeader(corr)
	sent -= r.wallBase
	if int(pub) != p.gr.base+p.plan.Index || sent > now {
		// Not an answer to one of its requests (another run's on a shared broker).
		q.mu.Lock()
		q.errors++
		q.mu.Unlock()
		return
	}
	r.answered.Add(1) // the drain's sign of progress
	if sent < r.window.Load() {
		return // a warm-up request's
	}
	dup, _ := p.answers.observe(seq)
	q.mu.Lock()
	if dup {
		q.dups++
	} else {
		q.got++
		results.RecordMicros(q.roundTrip, (now-sent)/1000)
	}
	q.lastAnswer = now
	q.mu.Unlock()
}

// request publishes message k of a requesting publisher.
func (p *publisher) request(sess drivers.Session, topic string, payload []byte, flush bool) error {
	return sess.(drivers.Requester).PublishRequest(topic, payload, p.reply, payload[:HeaderSize], flush)
}

// answering is a responding subscriber's session handler: it answers the requests it gets.
type answering struct{ *subscriber }

// answer is one queued answer. The request's buffer is the reader's, so its correlation data is
// copied: into corr when it is msgbench's header (every request of this run), else on the heap.
type answer struct {
	topic string
	corr  [HeaderSize]byte
	long  []byte // correlation data longer than the header (another client's request)
}

func (a *answer) correlation() []byte {
	if a.long != nil {
		return a.long
	}
	return a.corr[:]
}

// Request implements drivers.RequestHandler, on the session's reader: the request is counted as
// any delivery, and its answer queued for the subscriber's answering goroutine (the reader
// must not wait for a free inflight slot, which only it can free). Nothing is allocated per
// request but the queue's growth: reply topics are interned, one per asking device.
func (a answering) Request(payload, responseTopic, corr []byte) {
	a.Message(payload)
	q := a.queue
	q.mu.Lock()
	topic, ok := q.topics[string(responseTopic)] // no allocation for the lookup
	if !ok {
		topic = string(responseTopic)
		q.topics[topic] = topic
	}
	an := answer{topic: topic}
	if len(corr) == HeaderSize {
		copy(an.corr[:], corr)
	} else {
		an.long = append([]byte{}, corr...)
	}
	q.items = append(q.items, an)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// answerQueue holds a responder's answers until its goroutine sends them.
type answerQueue struct {
	mu     sync.Mutex
	items  []answer
	spare  []answer          // the slice the answering goroutine last emptied, reused
	topics map[string]string // reply topics seen, interned
	wake   chan struct{}
}

// answer sends the subscriber's queued answers until its session ends or ctx is done.
func (s *subscriber) answer(ctx context.Context, sess drivers.Session) {
	q := s.queue
	payload := make([]byte, s.gr.g.Fleet.AnswerBytes)
	rq := sess.(drivers.Requester)
	for {
		select {
		case <-q.wake:
		case <-sess.Done():
			return
		case <-ctx.Done():
			return
		}
		q.mu.Lock()
		items := q.items
		q.items, q.spare = q.spare[:0], nil
		q.mu.Unlock()
		for i := range items {
			if err := rq.Respond(items[i].topic, payload, items[i].correlation()); err != nil {
				s.shard.mu.Lock()
				s.shard.errors++
				s.shard.mu.Unlock()
				return
			}
		}
		q.mu.Lock()
		q.spare = items
		q.mu.Unlock()
	}
}

// answersDue is how many answers the run's requests call for, and how many came: the drain
// waits for them as for deliveries.
func (r *run) answersDue(perPair map[[2]int]int64) (due, got int64) {
	for _, gr := range r.groups {
		if q := gr.requests; q != nil && !gr.remote {
			due += r.answersFor(gr, perPair)
			q.mu.Lock()
			got += q.got
			q.mu.Unlock()
		}
	}
	return due, got
}

// answersFor is how many answers group gr's requests call for: one per delivery of a measured
// request to a responding group's subscription.
func (r *run) answersFor(gr *groupRun, perPair map[[2]int]int64) (due int64) {
	for k, e := range perPair {
		if k[0] == gr.index && r.groups[k[1]].g.Fleet.Respond {
			due += e
		}
	}
	return due
}

// requestFigures are a requesting group's answers, for its result.
func (r *run) requestFigures(gr *groupRun, perPair map[[2]int]int64) *results.RequestFigures {
	q := gr.requests
	if q == nil {
		return nil
	}
	due := r.answersFor(gr, perPair)
	q.mu.Lock()
	defer q.mu.Unlock()
	return &results.RequestFigures{Expected: due, Answered: q.got, Lost: max(0, due-q.got), Duplicates: q.dups, Errors: q.errors,
		RoundTrip: results.Summarize(q.roundTrip)}
}

// answersIn reports whether every answer the run's requests call for has come (true when it
// asks none).
func (r *run) answersIn() bool {
	if r.fleet == nil {
		return true
	}
	asks := false
	for _, gr := range r.groups {
		asks = asks || (gr.requests != nil && !gr.remote)
	}
	if !asks {
		return true
	}
	_, _, perPair := r.fleetExpected()
	due, got := r.answersDue(perPair)
	return got >= due
}
