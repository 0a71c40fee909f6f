package mqttsn

import (
	"encoding/binary"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// state of a client session, as in MQTT-SN 1.2 §6.14 (Figure 4), plus connecting.
type state uint8

const (
	stConnecting state = iota // CONNECT received: will exchange or broker connect under way
	stActive
	stAsleep
	stAwake
	stGone
)

// willStep is where a connecting client is in the will exchange.
type willStep uint8

const (
	willNone willStep = iota
	willAwaitTopic
	willAwaitMsg
	willOpening // broker connect under way
)

// inSlots is the number of the client's QoS 1/2 PUBLISHes the gateway tracks at once, indexed
// by message id modulo inSlots. MQTT-SN 1.2 allows a client one; a few more tolerate clients
// that pipeline.
const inSlots = 16

// inEntry tracks one QoS 1/2 PUBLISH from the client.
type inEntry struct {
	msgID   uint16
	state   uint8 // inFree, inAwaitBroker, inAwaitRel
	qos     byte
	topicID uint16 // as the client sent it, echoed in PUBACK
	since   int64  // unix nanos, to evict entries of clients that gave up
}

const (
	inFree uint8 = iota
	inAwaitBroker
	inAwaitRel
)

// outKind is the gateway's outstanding message to the client (one at a time, MQTT-SN 1.2
// §6.13's publish procedure applied in the gateway-to-client direction).
type outKind uint8

const (
	outNone outKind = iota
	outPublish
	outPubrel
	outRegister
)

type will struct {
	set    bool
	topic  string
	msg    []byte
	qos    byte
	retain bool
}

// client is one MQTT-SN session. mu guards everything but the fields marked otherwise.
type client struct {
	g    *Gateway
	slot int32
	gen  uint8
	id   string // immutable

	mu    sync.Mutex
	space sync.Cond // signalled when the queue has room or the client leaves
	addr  netip.AddrPort
	state state
	step  willStep

	keepAlive  time.Duration
	sleep      time.Duration
	clean      bool
	will       will
	willUpdate bool // will changed after CONNECT (the gateway publishes it on loss)
	activity   int  // messages handled since CONNACK (a repeated CONNECT with none is a retransmission)
	lastRx     atomic.Int64

	// upstream: the client's own broker connection (transparent) or its pool connection
	bc *brokerConn

	in [inSlots]inEntry

	nextMsgID uint16
	out       struct {
		kind    outKind
		msgID   uint16
		qos     byte
		topic   *topic
		retries int
		buf     []byte // the datagram, for retransmission
	}
	q          msgQueue
	known, pre bitset // topic ids the client knows as normal / subscribed as predefined
	subs       []clientSub

	ctlBusy   bool   // a SUBSCRIBE or UNSUBSCRIBE is at the broker
	ctlMsgID  uint16 // its message id, or the last one answered
	ctlAnswer []byte // the last SUBACK/UNSUBACK, for retransmitted requests

	lastFan atomic.Uint64 // aggregating fan-out stamp: one copy per message and client

	retryTimer *time.Timer
	aliveTimer *time.Timer
	scratch    []byte
}

// clientSub is one subscription of the client.
type clientSub struct {
	filter   string
	qos      byte
	wildcard bool
	topic    *topic // exact subscriptions
}

func (g *Gateway) newClient(slot int32, id string, addr netip.AddrPort) *client {
	c := &client{g: g, slot: slot, id: id, addr: addr, nextMsgID: 1}
	c.space.L = &c.mu
	g.gen++
	c.gen = uint8(g.gen)
	c.q.maxMsgs, c.q.maxBytes = g.cfg.MaxQueuedMessages, g.cfg.MaxQueuedBytes
	c.retryTimer = time.AfterFunc(time.Hour, c.retry)
	c.retryTimer.Stop()
	c.aliveTimer = time.AfterFunc(time.Hour, c.checkAlive)
	c.aliveTimer.Stop()
	c.lastRx.Store(time.Now().UnixNano())
	return c
}

// nextID returns the next message id for a gateway-to-client message: a counter, skipping 0.
func (c *client) nextID() uint16 {
	id := c.nextMsgID
	c.nextMsgID++
	if c.nextMsgID == 0 {
		c.nextMsgID = 1
	}
	return id
}

// token identifies a client's QoS 1/2 PUBLISH to the broker completion callback: slot, a
// generation byte against slot reuse, and the client's message id.
func (c *client) token(msgID uint16) int64 {
	return 1<<62 | int64(c.slot)<<24 | int64(c.gen)<<16 | int64(msgID)
}

func splitToken(t int64) (slot int32, gen uint8, msgID uint16) {
	return int32(t>>24) & 0x3fffffff, uint8(t >> 16), uint16(t)
}

// bitset is a growable set of topic ids, bounded by the topic table.
type bitset []uint64

func (b bitset) has(i uint16) bool {
	w := int(i) >> 6
	return w < len(b) && b[w]&(1<<(i&63)) != 0
}

func (b *bitset) set(i uint16) {
	w := int(i) >> 6
	for w >= len(*b) {
		*b = append(*b, 0)
	}
	(*b)[w] |= 1 << (i & 63)
}

func (b bitset) clear(i uint16) {
	if w := int(i) >> 6; w < len(b) {
		b[w] &^= 1 << (i & 63)
	}
}

// msgQueue is a FIFO of messages for one client in one byte slice: each entry is a 6-byte head
// (data length, QoS, retain, topic id) and the data. The slice is compacted when its consumed
// front passes half, so steady use allocates nothing, and it never holds more than maxBytes of
// data or maxMsgs entries.
type msgQueue struct {
	buf               []byte
	head              int
	n                 int
	maxMsgs, maxBytes int
}

const qHead = 8

type queued struct {
	qos    byte
	retain bool
	topic  uint16
	data   []byte // aliases the queue until the next push
	size   int
}

func (q *msgQueue) empty() bool { return q.n == 0 }

func (q *msgQueue) fits(dataLen int) bool {
	return q.n < q.maxMsgs && len(q.buf)-q.head+qHead+dataLen <= q.maxBytes
}

func (q *msgQueue) push(topicID uint16, qos byte, retain bool, data []byte) {
	if q.head > 0 && q.head >= len(q.buf)/2 {
		n := copy(q.buf, q.buf[q.head:])
		q.buf = q.buf[:n]
		q.head = 0
	}
	var h [qHead]byte
	binary.BigEndian.PutUint32(h[0:], uint32(len(data)))
	h[4] = qos
	if retain {
		h[5] = 1
	}
	binary.BigEndian.PutUint16(h[6:], topicID)
	q.buf = append(append(q.buf, h[:]...), data...)
	q.n++
}

func (q *msgQueue) peek() (queued, bool) {
	if q.n == 0 {
		return queued{}, false
	}
	h := q.buf[q.head:]
	n := int(binary.BigEndian.Uint32(h))
	return queued{qos: h[4], retain: h[5] == 1, topic: binary.BigEndian.Uint16(h[6:]), data: h[qHead : qHead+n], size: qHead + n}, true
}

func (q *msgQueue) pop(e queued) {
	q.head += e.size
	q.n--
	if q.n == 0 {
		q.buf, q.head = q.buf[:0], 0
		if cap(q.buf) > 64<<10 {
			q.buf = nil // do not keep a large buffer for an idle client
		}
	}
}

func (q *msgQueue) reset() { q.buf, q.head, q.n = nil, 0, 0 }
