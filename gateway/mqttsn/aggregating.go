package mqttsn

import (
	"context"
	"hash/maphash"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/msgbench/msgbench/internal/mqtt"
)

// aggregating multiplexes all clients over a pool of MQTT connections. Client i publishes on
// connection i mod PoolSize; each topic filter is subscribed once, on the connection its hash
// picks, at the highest QoS any client asked for, and messages fan out to the subscribed clients
// through per-topic lists (exact filters) and one list of wildcard filters.
type aggregating struct {
	g    *Gateway
	pool []*brokerConn
	seed maphash.Seed

	mu      sync.Mutex // guards filters and writers of the fan-out lists
	filters map[string]*filterState
	wild    atomic.Pointer[[]wildSub] // copy on write
}

type filterState struct {
	refs int
	qos  byte
}

type wildSub struct {
	filter string
	c      *client
	qos    byte
}

// aggregatingInflight is each pool connection's window; publish refuses rather than block
// when it is full, and the client retransmits.
const aggregatingInflight = 32768

func newAggregating(ctx context.Context, g *Gateway) (*aggregating, error) {
	a := &aggregating{g: g, seed: maphash.MakeSeed(), filters: map[string]*filterState{}}
	base := gatewayClientID("pool")
	for i := range g.cfg.PoolSize {
		b, err := g.dial(ctx, mqtt.ConnectOptions{ClientID: base + strconv.Itoa(i), CleanSession: true}, aggregatingInflight, a.fanout)
		if err != nil {
			a.shutdown()
			return nil, err
		}
		a.pool = append(a.pool, b)
		g.watch(b, "pool connection "+strconv.Itoa(i))
	}
	return a, nil
}

func (a *aggregating) open(_ context.Context, c *client) error {
	c.mu.Lock()
	c.bc = a.pool[int(c.slot)%len(a.pool)]
	c.mu.Unlock()
	return nil
}

func (a *aggregating) publishNoSession(topic string, data []byte, qos byte, retain bool) error {
	return a.pool[0].publish(topic, data, qos, retain, 0, true)
}

func (a *aggregating) connFor(filter string) *brokerConn {
	return a.pool[maphash.String(a.seed, filter)%uint64(len(a.pool))]
}

// subscribe subscribes the filter at the broker when no client had it at this QoS yet.
func (a *aggregating) subscribe(ctx context.Context, _ *client, filter string, qos byte) (byte, error) {
	a.mu.Lock()
	fs := a.filters[filter]
	need := fs == nil || qos > fs.qos
	have := byte(0)
	if fs != nil {
		have = fs.qos
	}
	a.mu.Unlock()
	granted := have
	if need {
		var err error
		if granted, err = a.connFor(filter).subscribe(ctx, filter, max(qos, have)); err != nil {
			return 0, err
		}
	}
	a.mu.Lock()
	if fs = a.filters[filter]; fs == nil {
		fs = &filterState{}
		a.filters[filter] = fs
	}
	fs.refs++
	fs.qos = max(fs.qos, granted)
	a.mu.Unlock()
	return min(qos, granted), nil
}

// unsubscribe drops one client's reference; the last one unsubscribes at the broker.
func (a *aggregating) unsubscribe(ctx context.Context, _ *client, filter string) error {
	a.mu.Lock()
	fs := a.filters[filter]
	last := false
	if fs != nil {
		fs.refs--
		if fs.refs <= 0 {
			delete(a.filters, filter)
			last = true
		}
	}
	a.mu.Unlock()
	if last {
		return a.connFor(filter).unsubscribe(ctx, filter)
	}
	return nil
}

func (a *aggregating) attach(c *client, s clientSub) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.detachLocked(c, s)
	if s.wildcard {
		old := a.loadWild()
		n := append(append(make([]wildSub, 0, len(old)+1), old...), wildSub{filter: s.filter, c: c, qos: s.qos})
		a.wild.Store(&n)
		return
	}
	old := loadSubs(s.topic)
	n := append(append(make([]subRef, 0, len(old)+1), old...), subRef{c: c, qos: s.qos})
	s.topic.subs.Store(&n)
}

func (a *aggregating) detach(c *client, s clientSub) {
	a.mu.Lock()
	a.detachLocked(c, s)
	a.mu.Unlock()
}

func (a *aggregating) detachLocked(c *client, s clientSub) {
	if s.wildcard {
		old := a.loadWild()
		n := make([]wildSub, 0, len(old))
		for _, w := range old {
			if w.c != c || w.filter != s.filter {
				n = append(n, w)
			}
		}
		a.wild.Store(&n)
		return
	}
	old := loadSubs(s.topic)
	n := make([]subRef, 0, len(old))
	for _, r := range old {
		if r.c != c {
			n = append(n, r)
		}
	}
	s.topic.subs.Store(&n)
}

func (a *aggregating) loadWild() []wildSub {
	if p := a.wild.Load(); p != nil {
		return *p
	}
	return nil
}

func loadSubs(tp *topic) []subRef {
	if p := tp.subs.Load(); p != nil {
		return *p
	}
	return nil
}

// fanout delivers a message from a pool connection to every client subscribed to its topic,
// once per client even when several of its filters match.
func (a *aggregating) fanout(p *mqtt.Publish) {
	g := a.g
	tp := g.topics.intern(p.Topic)
	if tp == nil {
		g.st.drop(DropUnsupported)
		return
	}
	seq := g.fan.Add(1)
	for _, s := range loadSubs(tp) {
		if s.c.lastFan.Swap(seq) != seq {
			s.c.deliver(tp, p.Payload, min(p.QoS, s.qos), p.Retain)
		}
	}
	for _, w := range a.loadWild() {
		if match(w.filter, tp.name) && w.c.lastFan.Swap(seq) != seq {
			w.c.deliver(tp, p.Payload, min(p.QoS, w.qos), p.Retain)
		}
	}
}

// close detaches the client's subscriptions (unsubscribing at the broker those nobody else
// holds) and, when the client was lost, publishes its will.
func (a *aggregating) close(c *client, subs []clientSub, graceful bool) {
	g := a.g
	for _, s := range subs {
		a.detach(c, s)
	}
	if len(subs) > 0 {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			ctx, cancel := context.WithTimeout(g.ctx, g.cfg.BrokerTimeout)
			defer cancel()
			for _, s := range subs {
				_ = a.unsubscribe(ctx, c, s.filter)
			}
		}()
	}
	if !graceful && c.will.set {
		if a.publishNoSession(c.will.topic, c.will.msg, c.will.qos, c.will.retain) == nil {
			g.st.willsPublished.Add(1)
		}
	}
}

func (a *aggregating) shutdown() {
	for _, b := range a.pool {
		b.closing.Store(true)
		_ = b.conn.Disconnect()
	}
}
