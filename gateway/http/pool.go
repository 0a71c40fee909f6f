package http

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msgbench/msgbench/gateway"
	"github.com/msgbench/msgbench/internal/mqtt"
)

// How HTTP publishers map to MQTT connections: every distinct set of credentials (anonymous is
// one) gets a pool of Limits.PoolSize MQTT connections, opened on first use with those
// credentials in CONNECT; requests take the pool's connections round-robin. The broker so checks
// the credentials once per pool connection, on the gateway's side of the link, and a publish
// costs the client no round trip besides its own request. Subscriptions get one MQTT connection
// each (subscribe.go).

// errRefused means the broker refused CONNECT (bad credentials, not authorised).
var errRefused = errors.New("broker refused the credentials")

// errBroker means the broker could not be reached or dropped the connection.
var errBroker = errors.New("broker unavailable")

type pools struct {
	o        gateway.Options
	limits   Limits
	settings settings
	seq      atomic.Uint64 // client id numbers
	prefix   string

	mu     sync.Mutex
	byCred map[string]*pool
	closed bool
}

func newPools(o gateway.Options, l Limits, set settings) *pools {
	return &pools{o: o, limits: l, settings: set, byCred: map[string]*pool{}, prefix: fmt.Sprintf("msgbench-gw%06x-", time.Now().UnixNano()&0xffffff)}
}

// get returns the pool of the credentials, creating it when there is room.
func (ps *pools) get(user, pass string) (*pool, error) {
	key := user + "\x00" + pass
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.closed {
		return nil, errBroker
	}
	if p := ps.byCred[key]; p != nil {
		return p, nil
	}
	if len(ps.byCred) >= ps.limits.MaxCredentials {
		return nil, fmt.Errorf("%w: %d distinct credentials already have broker connections", errBroker, len(ps.byCred))
	}
	p := &pool{ps: ps, key: key, user: user, pass: pass, conns: make([]slot, ps.limits.PoolSize)}
	ps.byCred[key] = p
	return p, nil
}

// forget drops a pool whose credentials the broker refused, so it does not hold a place.
func (ps *pools) forget(p *pool) {
	ps.mu.Lock()
	if ps.byCred[p.key] == p {
		delete(ps.byCred, p.key)
	}
	ps.mu.Unlock()
}

func (ps *pools) close() {
	ps.mu.Lock()
	ps.closed = true
	all := ps.byCred
	ps.byCred = map[string]*pool{}
	ps.mu.Unlock()
	for _, p := range all {
		for i := range p.conns {
			s := &p.conns[i]
			s.mu.Lock()
			if s.c != nil {
				_ = s.c.conn.Disconnect()
			}
			s.mu.Unlock()
		}
	}
}

// connect opens one MQTT connection to the broker.
func (ps *pools) connect(ctx context.Context, user, pass string, o mqtt.Options) (*mqtt.Conn, error) {
	nc, err := dialBroker(ctx, ps.o)
	if err != nil {
		return nil, err
	}
	o.Connect.Version = ps.settings.mqttVersion
	o.Connect.ClientID = ps.prefix + fmt.Sprint(ps.seq.Add(1))
	o.Connect.CleanSession = true
	o.Connect.KeepAlive = 60
	o.Connect.Username, o.Connect.Password = user, pass
	c, err := mqtt.Connect(ctx, nc, o)
	if err != nil {
		// internal/mqtt reports a CONNACK refusal in words only.
		if strings.Contains(err.Error(), "refused CONNECT") {
			return nil, fmt.Errorf("%w: %w", errRefused, err)
		}
		return nil, fmt.Errorf("%w: %w", errBroker, err)
	}
	return c, nil
}

func dialBroker(ctx context.Context, o gateway.Options) (net.Conn, error) {
	raw, err := o.DialBrokerOrDefault(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errBroker, o.Broker, err)
	}
	if o.BrokerTLS == nil {
		return raw, nil
	}
	tc := tls.Client(raw, o.BrokerTLS)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = raw.Close()
		return nil, fmt.Errorf("%w: %s: TLS: %w", errBroker, o.Broker, err)
	}
	return tc, nil
}

// pool is the MQTT connections of one set of credentials.
type pool struct {
	ps         *pools
	key        string
	user, pass string
	next       atomic.Uint32
	conns      []slot
}

type slot struct {
	mu sync.Mutex // held while connecting, so concurrent requests wait for one CONNECT
	c  *brokerConn
}

// conn returns a live connection of the pool, connecting it when needed.
func (p *pool) conn(ctx context.Context) (*brokerConn, error) {
	s := &p.conns[int(p.next.Add(1))%len(p.conns)]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c != nil {
		select {
		case <-s.c.conn.Done():
			s.c = nil // lost: reconnect below
		default:
			return s.c, nil
		}
	}
	bc := &brokerConn{pending: map[uint16]chan byte{}, early: map[uint16]byte{}}
	c, err := p.ps.connect(ctx, p.user, p.pass, mqtt.Options{
		Inflight:      max(64, p.ps.settings.inflight),
		MaxPacketSize: 64 << 10, // the broker sends acknowledgements only
		OnComplete:    bc.completed,
	})
	if err != nil {
		if errors.Is(err, errRefused) {
			p.ps.forget(p)
		}
		return nil, err
	}
	bc.conn = c
	s.c = bc
	return bc, nil
}

// brokerConn is one pooled MQTT connection shared by concurrent publish requests.
type brokerConn struct {
	wmu  sync.Mutex // serialises Publish: internal/mqtt allows one publishing goroutine
	conn *mqtt.Conn

	// Completions by packet id. A PUBACK can arrive before Publish has returned the id to its
	// request (loopback brokers are fast): it then waits in early until the request looks.
	mu      sync.Mutex
	pending map[uint16]chan byte
	early   map[uint16]byte
}

func (b *brokerConn) completed(id uint16, _ int64, reason byte) {
	b.mu.Lock()
	if ch, ok := b.pending[id]; ok {
		delete(b.pending, id)
		b.mu.Unlock()
		ch <- reason
		return
	}
	b.early[id] = reason
	b.mu.Unlock()
}

var replyPool = sync.Pool{New: func() any { return make(chan byte, 1) }}

// publish sends one message and returns once the broker accepted it at qos (QoS 0: once
// written), with the broker's reason code.
func (b *brokerConn) publish(ctx context.Context, topic string, payload []byte, qos byte) (byte, error) {
	b.wmu.Lock()
	id, err := b.conn.Publish(topic, payload, qos, false, true)
	b.wmu.Unlock()
	if err != nil {
		return 0, fmt.Errorf("%w: %w", errBroker, err)
	}
	if qos == 0 {
		return 0, nil
	}
	b.mu.Lock()
	if reason, ok := b.early[id]; ok {
		delete(b.early, id)
		b.mu.Unlock()
		return reason, nil
	}
	ch := replyPool.Get().(chan byte)
	b.pending[id] = ch
	b.mu.Unlock()
	select {
	case reason := <-ch:
		replyPool.Put(ch)
		return reason, nil
	case <-b.conn.Done():
		return 0, fmt.Errorf("%w: connection lost before the acknowledgement (the message may or may not be delivered)", errBroker)
	case <-ctx.Done():
		// The client left; the acknowledgement will land in ch (buffered) and be dropped.
		return 0, ctx.Err()
	}
}
