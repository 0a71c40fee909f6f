package loadgen

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/results"
)

// ramp paces new connections: with connectRate > 0 connection i starts at i/connectRate seconds
// after the ramp began; with 0 they start at once. Either way at most maxConcurrentConnects are
// in flight, so that the SYNs of ten thousand clients do not overflow the broker's accept queue.
// It also measures the rate achieved (stats).
type ramp struct {
	rate  int32
	start time.Time
	slots chan struct{}

	mu       sync.Mutex
	lastDone time.Time     // when the current phase's latest attempt finished
	phaseN   int64         // attempts finished in the current phase
	n        int64         // attempts finished in earlier phases
	took     time.Duration // time earlier phases took
}

// maxConcurrentConnects bounds the connections all workers have in flight (dialled, CONNACK not
// yet received). Mosquitto listens with a backlog of 100 (fixed in its net.c): with more in
// flight than that while its single thread is busy, the kernel drops SYNs (ListenOverflows) and
// those clients retry after 1 s, then 3 s, 7 s. Measured with 9,000 + 9,000 clients in two
// workers: 256 per worker gave 25 such drops (connect p99.9 1 s, p90 200 ms), 64 per worker 26,
// 64 in all none. On loopback a connect takes well under 1 ms, so even 8 in flight allow
// thousands per second.
const (
	maxConcurrentConnects = 64
	minConcurrentConnects = 8
	// slowLinkConnects bounds one worker's connects in flight through an emulated link.
	slowLinkConnects = 256
)

// concurrentConnects is one worker's share of maxConcurrentConnects. Through an emulated link of
// round trip rtt it is more, up to slowLinkConnects: the connects then wait on the link, not in
// the broker's accept queue, and the cap bounds the rate to cap / connect time (64 over a 600 ms
// satellite round trip, three of them to a CONNACK, would allow 35 connections a second).
func concurrentConnects(workers int, rtt time.Duration) int {
	n := max(minConcurrentConnects, maxConcurrentConnects/max(1, workers))
	if ms := int(rtt / time.Millisecond); ms > 1 {
		n = min(slowLinkConnects, n*ms)
	}
	return n
}

// newRamp starts the run's ramp (r.ramp) at spec.workload.connectRate.
func (r *run) newRamp() *ramp {
	rtt := r.compiled.Network.Link.RTT()
	for _, g := range r.compiled.Groups { // the slowest of the groups' own links
		if g.Network != nil {
			rtt = max(rtt, g.Network.Link.RTT())
		}
	}
	r.ramp = &ramp{rate: r.group().Load.ConnectRate, start: time.Now(), slots: make(chan struct{}, concurrentConnects(r.o.Workers, rtt))}
	return r.ramp
}

// restart begins the next phase (the publishers' ramp after the subscribers').
func (r *ramp) restart() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.phaseN > 0 {
		r.n += r.phaseN
		r.took += r.lastDone.Sub(r.start)
	}
	r.phaseN = 0
	r.start = time.Now()
}

// wait blocks until connection i may start; call done when its connect finished.
func (r *ramp) wait(ctx context.Context, i int) error {
	if r.rate > 0 {
		if err := sleepUntil(ctx, r.start.Add(time.Duration(i)*time.Second/time.Duration(r.rate))); err != nil {
			return err
		}
	}
	select {
	case r.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *ramp) done() {
	<-r.slots
	r.mu.Lock()
	r.phaseN++
	r.lastDone = time.Now()
	r.mu.Unlock()
}

// stats is the attempts every phase finished and the time they took, each phase from its start
// to its last attempt's end.
func (r *ramp) stats() (n int64, took time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, took = r.n, r.took
	if r.phaseN > 0 {
		n += r.phaseN
		took += r.lastDone.Sub(r.start)
	}
	return n, took
}

// summary is the result's connectRamp; nil when nothing connected.
func (r *ramp) summary() *results.ConnectRamp {
	if r == nil {
		return nil
	}
	n, took := r.stats()
	if n == 0 {
		return nil
	}
	return results.NewConnectRamp(n, took.Seconds(), int64(r.rate))
}

// connectTimeout bounds one client's connection set-up (dial, handshakes, CONNACK): a peer that
// accepts TCP but never answers must not hang the run. Long enough for satellite links.
const connectTimeout = 60 * time.Second

func (r *run) clientID(role string, index int) string {
	return fmt.Sprintf("mb%s-%s%d", r.o.RunID, role, index)
}

// connect opens a session, recording connect latency.
func (r *run) connect(ctx context.Context, gr *groupRun, c drivers.Client, h drivers.Handler, dialStart *atomic.Int64) (drivers.Session, error) {
	start := r.now()
	dialStart.Store(start)
	ctx, cancel := context.WithTimeout(drivers.WithClient(ctx, c.ID), connectTimeout)
	defer cancel()
	sess, err := gr.drv.Connect(ctx, c, h)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", gr.address, err) // the caller names the client
	}
	r.rec.recordConnect(gr.index, (r.now()-start)/1000)
	return sess, nil
}
