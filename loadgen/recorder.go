package loadgen

import (
	"runtime"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/msgbench/msgbench/results"
)

// recorder collects figures from thousands of client goroutines. A histogram per goroutine
// would cost ~190 KB each (1 µs-1 h at 3 digits), far over the 30 KB budget per connection, so
// clients are spread over a few shards instead, each a set of histograms and counters behind its
// own mutex; with several shards per core a client rarely waits. Shards merge exactly at the end.
type recorder struct {
	// shards holds each group's shards in turn, per of them: a group's figures stay apart
	// (results per device group) and the run's are their merge.
	shards   []shard
	per      int
	interval int64 // timeline bucket width, ns

	mu           sync.Mutex // connect and first-message figures (per group): once per client
	connect      []*hdrhistogram.Histogram
	firstMessage []*hdrhistogram.Histogram
}

type shard struct {
	mu       sync.Mutex
	endToEnd *hdrhistogram.Histogram
	ack      *hdrhistogram.Histogram
	delay    *hdrhistogram.Histogram
	timeline []bucket
	counts
	_ [64]byte // keeps neighbouring shards' locks off one cache line
}

// counts are a shard's tallies of the measured window.
type counts struct {
	sent, acked, received, unique, dups, ooo, errors int64
	lastReceive                                      int64 // engine time of the latest delivery
	// inWindow counts deliveries that arrived in the measured window, whenever they were sent
	// (the warm-up's too): what crossed in the window, the received rate's numerator. drained
	// counts deliveries of measured messages that arrived after the window, in the drain.
	inWindow, drained int64
	// inWindowBytes are the payload bytes of the deliveries counted in inWindow.
	inWindowBytes int64
}

// bucket is one timeline interval: sends and deliveries by the time they happened, and the sum
// and count of the end-to-end latencies of the deliveries in it (the latency trend).
type bucket struct{ sent, received, errors, e2eSum, e2eN int64 }

// newRecorder records groups groups' figures. Every histogram costs ~190 KB, so many groups
// share the shards a run of one group has (at least one each).
func newRecorder(interval int64, groups int) *recorder {
	groups = max(1, groups)
	per := max(1, 4*runtime.GOMAXPROCS(0)/groups)
	r := &recorder{shards: make([]shard, per*groups), per: per, interval: interval}
	for range groups {
		r.connect = append(r.connect, results.NewHistogram())
		r.firstMessage = append(r.firstMessage, results.NewHistogram())
	}
	for i := range r.shards {
		r.shards[i].endToEnd = results.NewHistogram()
		r.shards[i].ack = results.NewHistogram()
		r.shards[i].delay = results.NewHistogram()
	}
	return r
}

// shard is where client (its index in group) records.
func (r *recorder) shard(group, client int) *shard { return &r.shards[group*r.per+client%r.per] }

// bucketLocked returns the timeline bucket of engine time t (≥ window, the measured window's
// start), growing the timeline as needed.
func (s *shard) bucketLocked(interval, window, t int64) *bucket {
	i := max(0, int((t-window)/interval))
	for len(s.timeline) <= i {
		s.timeline = append(s.timeline, bucket{})
	}
	return &s.timeline[i]
}

func (r *recorder) recordConnect(group int, micros int64) {
	r.mu.Lock()
	results.RecordMicros(r.connect[group], micros)
	r.mu.Unlock()
}

func (r *recorder) recordFirstMessage(group int, micros int64) {
	r.mu.Lock()
	results.RecordMicros(r.firstMessage[group], micros)
	r.mu.Unlock()
}

// maxEndToEnd is the largest end-to-end latency seen so far, in microseconds.
func (r *recorder) maxEndToEnd() int64 {
	return r.maxOf(func(s *shard) *hdrhistogram.Histogram { return s.endToEnd })
}

// maxAck is the largest publish-acknowledgement latency seen so far, in microseconds.
func (r *recorder) maxAck() int64 {
	return r.maxOf(func(s *shard) *hdrhistogram.Histogram { return s.ack })
}

func (r *recorder) maxOf(hist func(*shard) *hdrhistogram.Histogram) int64 {
	var m int64
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		if h := hist(s); h.TotalCount() > 0 {
			m = max(m, h.Max())
		}
		s.mu.Unlock()
	}
	return m
}

// counts sums the shards' tallies.
func (r *recorder) counts() counts {
	var tot counts
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		tot.add(&s.counts)
		s.mu.Unlock()
	}
	return tot
}

func (c *counts) add(o *counts) {
	c.sent += o.sent
	c.acked += o.acked
	c.received += o.received
	c.unique += o.unique
	c.dups += o.dups
	c.ooo += o.ooo
	c.errors += o.errors
	c.inWindow += o.inWindow
	c.inWindowBytes += o.inWindowBytes
	c.drained += o.drained
	c.lastReceive = max(c.lastReceive, o.lastReceive)
}

// mergeGroupInto adds group g's latency figures so far to the given histograms (metrics, at
// scrape time: each shard is locked only for its own merge).
func (r *recorder) mergeGroupInto(g int, endToEnd, ack, connect, firstMessage *hdrhistogram.Histogram) {
	for i := g * r.per; i < (g+1)*r.per && i < len(r.shards); i++ {
		s := &r.shards[i]
		s.mu.Lock()
		endToEnd.Merge(s.endToEnd)
		ack.Merge(s.ack)
		s.mu.Unlock()
	}
	r.mu.Lock()
	if g < len(r.connect) {
		connect.Merge(r.connect[g])
		firstMessage.Merge(r.firstMessage[g])
	}
	r.mu.Unlock()
}

// merged returns the histograms of every figure and the timeline, merged over shards.
func (r *recorder) merged() (map[string]*hdrhistogram.Histogram, []bucket, counts) {
	return r.mergedOf(0, len(r.connect))
}

// mergedGroup is merged of one group's clients.
func (r *recorder) mergedGroup(g int) (map[string]*hdrhistogram.Histogram, []bucket, counts) {
	return r.mergedOf(g, g+1)
}

// mergedOf merges groups [from, to).
func (r *recorder) mergedOf(from, to int) (map[string]*hdrhistogram.Histogram, []bucket, counts) {
	h := map[string]*hdrhistogram.Histogram{
		results.HistEndToEnd: results.NewHistogram(), results.HistPublishAck: results.NewHistogram(),
		results.HistPublishDelay: results.NewHistogram(), results.HistConnect: results.NewHistogram(), results.HistFirstMessage: results.NewHistogram(),
	}
	r.mu.Lock()
	for g := from; g < to; g++ {
		h[results.HistConnect].Merge(r.connect[g])
		h[results.HistFirstMessage].Merge(r.firstMessage[g])
	}
	r.mu.Unlock()
	var tl []bucket
	var tot counts
	for i := from * r.per; i < to*r.per; i++ {
		s := &r.shards[i]
		s.mu.Lock()
		h[results.HistEndToEnd].Merge(s.endToEnd)
		h[results.HistPublishAck].Merge(s.ack)
		h[results.HistPublishDelay].Merge(s.delay)
		for j, b := range s.timeline {
			for len(tl) <= j {
				tl = append(tl, bucket{})
			}
			tl[j].sent += b.sent
			tl[j].received += b.received
			tl[j].errors += b.errors
			tl[j].e2eSum += b.e2eSum
			tl[j].e2eN += b.e2eN
		}
		tot.add(&s.counts)
		s.mu.Unlock()
	}
	return h, tl, tot
}
