// Package mqttsn is the load generator's MQTT-SN 1.2 driver: each client is a UDP socket talking
// to msgbench's MQTT-SN gateway (gateway/mqttsn) or any MQTT-SN 1.2 gateway.
//
// Definitions (docs/mqtt-sn.md):
//   - A session is usable, and connect latency ends, when the client can publish or subscribe:
//     after CONNACK, and for a publisher with normal topic ids also after REGISTER/REGACK (its
//     topic id). QoS -1 publishers have no connection: the dial of the UDP socket.
//   - One QoS 1/2 PUBLISH is outstanding per client, whatever spec.mqtt.inflight says: MQTT-SN
//     1.2 §6.13 ("Client's publish procedure") allows a client only one, so Publish blocks until
//     the previous one completed. Lost datagrams are recovered by retransmission after
//     spec.mqttsn.retryInterval (T_retry), at most spec.mqttsn.maxRetries (N_retry) times, after
//     which the session fails.
//   - Bytes and datagrams are the UDP payloads the client's socket sent and received.
package mqttsn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/dialctx"
	"github.com/msgbench/msgbench/internal/keepalive"
	sn "github.com/msgbench/msgbench/internal/mqttsn"
	"github.com/msgbench/msgbench/internal/wire"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/plan"
)

func init() {
	drivers.Register(string(v1alpha1.ProtocolMQTTSN), New)
}

type driver struct {
	cfg        drivers.Config
	qos        int8
	idType     sn.TopicIDType
	retry      time.Duration
	maxRetries int
	keepAlive  uint16
	clean      bool
	dial       drivers.DialFunc
	opts       *plan.MQTTSNOptions
	found      *discovery // what the clients' gateway discovery found (nil without spec.mqttsn.discovery)
}

// New returns the MQTT-SN driver for cfg.Group (its MQTT-SN options; plan.Compile checked its
// QoS, topic id type and payload size).
func New(cfg drivers.Config) (drivers.Driver, error) {
	g := cfg.Group
	if g == nil || g.MQTTSN == nil {
		return nil, drivers.NoOptions(cfg, string(v1alpha1.ProtocolMQTTSN))
	}
	o := g.MQTTSN
	d := &driver{cfg: cfg, qos: int8(g.QoS), idType: o.TopicIDType, retry: o.RetryInterval, maxRetries: o.MaxRetries,
		keepAlive: uint16(o.KeepAlive / time.Second), clean: o.CleanSession, dial: cfg.Dialer(), opts: o}
	if o.Discovery != nil {
		d.found = &discovery{}
	}
	return d, nil
}

// session is one MQTT-SN client.
type session struct {
	d    *driver
	conn net.Conn
	c    drivers.Client
	h    drivers.Handler
	gw   string // the gateway's address, for messages: the one given, or the one discovery found

	topicID uint16
	pubFlag sn.Flags // QoS and topic id type of this client's PUBLISHes

	bytesSent, bytesRecv, dgSent, dgRecv atomic.Int64
	connectBytes                         int64

	ctl chan []byte // control answers (CONNACK, REGACK, SUBACK, …) for the request in progress

	// outstanding QoS 1/2 PUBLISH: window holds a token while one is in flight
	window    chan struct{}
	mu        sync.Mutex
	out       outMsg
	nextMsgID uint16
	wbuf      []byte // publisher goroutine (QoS 0)
	retry     *time.Timer
	ka        *keepalive.Pinger // nil without keep-alive

	// reader goroutine
	rbuf   []byte
	ackBuf []byte
	qos2In []uint64 // QoS 2 message ids received and not yet released: duplicates are not delivered

	closing   atomic.Bool
	done      chan struct{}
	closeOnce sync.Once
	err       error
	// stopped is closed when the reader goroutine returned: no handler call runs any more.
	stopped     chan struct{}
	closeCalled sync.Once
}

type outMsg struct {
	state   uint8 // outNone, outAwaitAck (PUBACK or PUBREC), outAwaitComp
	msgID   uint16
	sentAt  int64
	retries int
	buf     []byte
}

const (
	outNone uint8 = iota
	outAwaitAck
	outAwaitComp
)

// Connect implements drivers.Driver: dial, CONNECT/CONNACK, and REGISTER/REGACK for a
// publisher with normal topic ids.
func (d *driver) Connect(ctx context.Context, c drivers.Client, h drivers.Handler) (drivers.Session, error) {
	if port := d.opts.ClientPort(d.cfg.Group, c.Role == drivers.Subscriber, c.Index); port != 0 {
		ctx = dialctx.WithLocalPort(ctx, port) // spec.mqttsn.sourcePort: a gateway may list it
	}
	var conn net.Conn
	var f *found
	var err error
	if o := d.opts.Discovery; o != nil { // spec.mqttsn.discovery: SEARCHGW, GWINFO, then a socket connected to that gateway
		if conn, f, err = d.discover(ctx, o); err != nil {
			return nil, fmt.Errorf("MQTT-SN %s: %w", c.ID, err)
		}
	} else if conn, err = d.dial(ctx, "udp", d.cfg.Address); err != nil {
		return nil, err
	}
	if uc, ok := conn.(interface{ SetReadBuffer(int) error }); ok { // a UDP socket, or one wrapped (radiolog)
		_ = uc.SetReadBuffer(1 << 20)
	}
	s := &session{d: d, conn: conn, c: c, h: h, gw: d.cfg.Address, ctl: make(chan []byte, 4), window: make(chan struct{}, 1),
		nextMsgID: 1, rbuf: make([]byte, 65536), done: make(chan struct{}), stopped: make(chan struct{})}
	if f != nil { // the search's datagrams are the session's too (wire figures, connect bytes)
		s.gw = f.gateway.String()
		s.bytesSent.Add(int64(f.searches * searchGWBytes))
		s.dgSent.Add(int64(f.searches))
		s.bytesRecv.Add(int64(f.bytesIn))
		s.dgRecv.Add(int64(f.dgIn))
	}
	s.retry = time.AfterFunc(time.Hour, s.retransmit)
	s.retry.Stop()
	if d.keepAlive > 0 && d.qos >= 0 || c.Role == drivers.Subscriber && d.keepAlive > 0 {
		s.ka = keepalive.New(time.Duration(d.keepAlive)*time.Second, s.sendPing, s.fail)
	}
	go s.readLoop()
	if err := s.setup(ctx); err != nil {
		s.fail(err)
		_ = conn.Close()
		return nil, fmt.Errorf("MQTT-SN %s: %w", c.ID, err)
	}
	s.connectBytes = s.bytesSent.Load() + s.bytesRecv.Load()
	s.ka.Start()
	return s, nil
}

func (s *session) setup(ctx context.Context) error {
	d := s.d
	name := s.c.Topic
	switch d.idType {
	case sn.TopicPredefined:
		id, err := d.opts.PredefinedID(name, s.c.TopicIndex)
		if err != nil {
			return err
		}
		s.topicID = id
	case sn.TopicShort:
		short, err := sn.ShortTopicName(s.c.TopicIndex)
		if err != nil {
			return err
		}
		s.topicID = sn.ShortTopicID(short)
	}
	s.pubFlag = sn.Flags(0).WithQoS(d.qos).WithTopicIDType(d.idType)
	if d.qos == -1 && s.c.Role == drivers.Publisher {
		return nil // QoS -1: no connection
	}
	flags := sn.Flags(0)
	if d.clean {
		flags |= sn.FlagCleanSession
	}
	req, _ := (&sn.Connect{Flags: flags, ProtocolID: sn.ProtocolID, Duration: d.keepAlive, ClientID: []byte(s.c.ID)}).Append(nil)
	ans, err := s.request(ctx, req, sn.CONNACK, 0)
	if err != nil {
		return err
	}
	if rc := sn.ReturnCode(ans[2]); rc != sn.Accepted {
		return fmt.Errorf("gateway refused CONNECT: %v", rc)
	}
	if s.c.Role == drivers.Publisher && d.idType == sn.TopicNormal {
		req, err := (&sn.Register{MsgID: s.nextID(), TopicName: []byte(name)}).Append(nil)
		if err != nil {
			return err
		}
		ans, err := s.request(ctx, req, sn.REGACK, s.nextMsgID-1)
		if err != nil {
			return err
		}
		var ra sn.IDAck
		ra.T = sn.REGACK
		_, body, _ := sn.ReadHeader(ans)
		if err := ra.Decode(body); err != nil {
			return err
		}
		if ra.ReturnCode != sn.Accepted {
			return fmt.Errorf("gateway refused REGISTER %s: %v", name, ra.ReturnCode)
		}
		s.topicID = ra.TopicID
	}
	return nil
}

// request sends a control message and waits for the answer of type want (and message id, when
// not 0), retransmitting after T_retry up to N_retry times.
func (s *session) request(ctx context.Context, req []byte, want sn.MsgType, msgID uint16) ([]byte, error) {
	t := time.NewTimer(s.d.retry)
	defer t.Stop()
	for try := 0; ; try++ {
		if err := s.write(req); err != nil {
			return nil, err
		}
		t.Reset(s.d.retry)
	wait:
		for {
			select {
			case ans := <-s.ctl:
				typ, body, _ := sn.ReadHeader(ans)
				if typ != want || (msgID != 0 && !answers(typ, body, msgID)) {
					continue // a late answer to an earlier try
				}
				return ans, nil
			case <-t.C:
				break wait
			case <-s.done:
				return nil, s.closedErr()
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if try >= s.d.maxRetries {
			return nil, fmt.Errorf("no %v from gateway %s after %d retransmissions", want, s.gw, try)
		}
	}
}

// answers reports whether an answer body carries msgID.
func answers(t sn.MsgType, body []byte, msgID uint16) bool {
	switch t {
	case sn.REGACK:
		return len(body) == 5 && uint16(body[2])<<8|uint16(body[3]) == msgID
	case sn.SUBACK:
		return len(body) == 6 && uint16(body[3])<<8|uint16(body[4]) == msgID
	case sn.UNSUBACK:
		return len(body) == 2 && uint16(body[0])<<8|uint16(body[1]) == msgID
	}
	return true
}

func (s *session) nextID() uint16 {
	id := s.nextMsgID
	s.nextMsgID++
	if s.nextMsgID == 0 {
		s.nextMsgID = 1
	}
	return id
}

func (s *session) write(b []byte) error {
	n, err := s.conn.Write(b)
	if err != nil {
		return err
	}
	s.bytesSent.Add(int64(n))
	s.dgSent.Add(1)
	s.ka.Wrote()
	return nil
}

// Subscribe implements drivers.Session: SUBSCRIBE at the run's QoS (QoS 0 when the run
// publishes at -1) and SUBACK.
func (s *session) Subscribe(ctx context.Context) error {
	qos := max(0, s.d.qos)
	m := sn.Subscribe{T: sn.SUBSCRIBE, Flags: sn.Flags(0).WithQoS(qos).WithTopicIDType(s.d.idType), MsgID: s.nextID()}
	if s.d.idType == sn.TopicNormal {
		m.TopicName = []byte(s.c.Topic)
	} else {
		m.TopicID = s.topicID
	}
	req, err := m.Append(nil)
	if err != nil {
		return err
	}
	ans, err := s.request(ctx, req, sn.SUBACK, m.MsgID)
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", s.c.Topic, err)
	}
	var sa sn.Suback
	_, body, _ := sn.ReadHeader(ans)
	if err := sa.Decode(body); err != nil {
		return err
	}
	if sa.ReturnCode != sn.Accepted {
		return fmt.Errorf("subscribe %s: gateway refused: %v", s.c.Topic, sa.ReturnCode)
	}
	if sa.Flags.QoS() < qos {
		return fmt.Errorf("subscribe %s: gateway granted QoS %d, the benchmark asks for %d", s.c.Topic, sa.Flags.QoS(), qos)
	}
	return nil
}

// Publish implements drivers.Session. QoS -1 and 0 send one datagram; QoS 1 and 2 first wait
// until the previous PUBLISH completed (one outstanding, MQTT-SN 1.2 §6.13).
func (s *session) Publish(payload []byte, _ bool) error {
	select {
	case <-s.done:
		return s.closedErr()
	default:
	}
	if s.d.qos <= 0 {
		var err error
		if s.wbuf, err = sn.AppendPublish(s.wbuf[:0], s.pubFlag, s.topicID, 0, payload); err != nil {
			return err
		}
		return s.writeErr(s.write(s.wbuf))
	}
	select {
	case s.window <- struct{}{}:
	case <-s.done:
		return s.closedErr()
	}
	if s.closing.Load() {
		<-s.window
		return drivers.ErrClosed
	}
	s.mu.Lock()
	id := s.nextID()
	var err error
	s.out.buf, err = sn.AppendPublish(s.out.buf[:0], s.pubFlag, s.topicID, id, payload)
	if err != nil {
		s.mu.Unlock()
		<-s.window
		return err
	}
	s.out.state, s.out.msgID, s.out.retries, s.out.sentAt = outAwaitAck, id, 0, s.d.cfg.Now()
	err = s.write(s.out.buf)
	s.retry.Reset(s.d.retry)
	s.mu.Unlock()
	return s.writeErr(err)
}

// writeErr is drivers.ErrClosed in place of a write's error once Close began.
func (s *session) writeErr(err error) error {
	if err != nil && s.closing.Load() {
		return drivers.ErrClosed
	}
	return err
}

// retransmit runs when T_retry passed without the gateway's answer.
func (s *session) retransmit() {
	s.mu.Lock()
	if s.out.state == outNone {
		s.mu.Unlock()
		return
	}
	if s.out.retries >= s.d.maxRetries {
		n := s.out.retries
		s.mu.Unlock()
		s.fail(fmt.Errorf("no answer from gateway %s to PUBLISH after %d retransmissions", s.gw, n))
		return
	}
	s.out.retries++
	if s.out.state == outAwaitAck {
		off := 2
		if s.out.buf[0] == 0x01 {
			off = 4
		}
		s.out.buf[off] |= byte(sn.FlagDUP)
	}
	err := s.write(s.out.buf)
	s.retry.Reset(s.d.retry)
	s.mu.Unlock()
	if err != nil {
		s.fail(err)
	}
}

// Flush implements drivers.Session; datagrams are never batched.
func (s *session) Flush() error {
	if s.closing.Load() {
		return drivers.ErrClosed
	}
	return nil
}

// Drain implements drivers.Session.
func (s *session) Drain(ctx context.Context) error {
	if s.closing.Load() {
		return drivers.ErrClosed
	}
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for len(s.window) > 0 {
		select {
		case <-t.C:
		case <-s.done:
			return s.closedErr()
		case <-ctx.Done():
			return &drivers.DrainError{Unacknowledged: len(s.window), Err: ctx.Err()}
		}
	}
	return nil
}

// ConnectBytes implements drivers.Session.
func (s *session) ConnectBytes() int64 { return s.connectBytes }

// Counters implements drivers.Session.
func (s *session) Counters() wire.Counters {
	return wire.Counters{BytesSent: s.bytesSent.Load(), BytesReceived: s.bytesRecv.Load(),
		DatagramsSent: s.dgSent.Load(), DatagramsReceived: s.dgRecv.Load()}
}

// Done implements drivers.Session.
func (s *session) Done() <-chan struct{} { return s.done }

// Err implements drivers.Session.
func (s *session) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

func (s *session) closedErr() error {
	if err := s.Err(); err != nil {
		return err
	}
	return drivers.ErrClosed
}

// Close implements drivers.Session: DISCONNECT, and the gateway's DISCONNECT awaited briefly;
// then the socket is closed, which ends a Publish waiting for its acknowledgement, and Close
// waits for the reader goroutine, so that no handler call follows. A second call returns nil.
func (s *session) Close() error {
	s.closeCalled.Do(func() {
		s.closing.Store(true)
		if s.d.qos >= 0 || s.c.Role == drivers.Subscriber {
			select {
			case <-s.done:
			default:
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				_, _ = s.request(ctx, []byte{2, byte(sn.DISCONNECT)}, sn.DISCONNECT, 0)
				cancel()
			}
		}
		s.fail(nil)
		<-s.stopped
	})
	return nil
}

func (s *session) fail(err error) {
	s.closeOnce.Do(func() {
		if s.closing.Load() {
			err = nil
		}
		s.err = err
		s.retry.Stop()
		s.ka.Stop()
		close(s.done)
		_ = s.conn.Close()
	})
}

// sendPing sends PINGREQ (keepalive.Pinger calls it when nothing was sent for the period).
func (s *session) sendPing() error {
	select {
	case <-s.done:
		return nil
	default:
	}
	return s.write([]byte{2, byte(sn.PINGREQ)})
}

func (s *session) readLoop() {
	defer close(s.stopped)
	for {
		n, err := s.conn.Read(s.rbuf)
		if err != nil {
			if errors.Is(err, syscall.ECONNREFUSED) {
				continue // ICMP port unreachable: the gateway is not there (yet); retransmission decides
			}
			s.fail(err)
			return
		}
		s.bytesRecv.Add(int64(n))
		s.dgRecv.Add(1)
		s.handle(s.rbuf[:n])
	}
}

func (s *session) handle(b []byte) {
	t, body, err := sn.ReadHeader(b)
	if err != nil {
		return
	}
	switch t {
	case sn.PUBLISH:
		var p sn.Publish
		if p.Decode(body) != nil {
			return
		}
		switch p.Flags.QoS() {
		case 1:
			s.h.Message(p.Data)
			s.ack(sn.AppendIDAck(s.ackBuf[:0], sn.PUBACK, p.TopicID, p.MsgID, sn.Accepted))
		case 2:
			if s.qos2In == nil {
				s.qos2In = make([]uint64, 65536/64)
			}
			w, bit := p.MsgID/64, uint64(1)<<(p.MsgID%64)
			if s.qos2In[w]&bit == 0 { // a retransmitted PUBLISH before PUBREL is not delivered twice
				s.qos2In[w] |= bit
				s.h.Message(p.Data)
			}
			s.ack(sn.AppendAck(s.ackBuf[:0], sn.PUBREC, p.MsgID))
		default:
			s.h.Message(p.Data)
		}
	case sn.PUBREL:
		if len(body) != 2 {
			return
		}
		id := uint16(body[0])<<8 | uint16(body[1])
		if s.qos2In != nil {
			s.qos2In[id/64] &^= uint64(1) << (id % 64)
		}
		s.ack(sn.AppendAck(s.ackBuf[:0], sn.PUBCOMP, id))
	case sn.PUBACK, sn.PUBREC, sn.PUBCOMP:
		s.onAck(t, body)
	case sn.REGISTER:
		var r sn.Register
		if r.Decode(body) != nil {
			return
		}
		s.ack(sn.AppendIDAck(s.ackBuf[:0], sn.REGACK, r.TopicID, r.MsgID, sn.Accepted))
	case sn.DISCONNECT:
		if !s.closing.Load() {
			s.fail(errors.New("gateway sent DISCONNECT"))
			return
		}
		s.toCtl(b)
	default:
		s.toCtl(b)
	}
}

func (s *session) toCtl(b []byte) {
	select {
	case s.ctl <- append([]byte(nil), b...):
	default:
	}
}

func (s *session) ack(b []byte) {
	s.ackBuf = b
	if err := s.write(b); err != nil {
		s.fail(err)
	}
}

// onAck advances the outstanding PUBLISH.
func (s *session) onAck(t sn.MsgType, body []byte) {
	var id uint16
	rc := sn.Accepted
	switch {
	case t == sn.PUBACK && len(body) == 5:
		id, rc = uint16(body[2])<<8|uint16(body[3]), sn.ReturnCode(body[4])
	case t != sn.PUBACK && len(body) == 2:
		id = uint16(body[0])<<8 | uint16(body[1])
	default:
		return
	}
	s.mu.Lock()
	if s.out.state == outNone || s.out.msgID != id {
		s.mu.Unlock()
		return // late answer to a retransmission
	}
	if t == sn.PUBREC && s.d.qos == 2 && rc == sn.Accepted {
		s.out.state, s.out.retries = outAwaitComp, 0
		s.out.buf = sn.AppendAck(s.out.buf[:0], sn.PUBREL, id)
		err := s.write(s.out.buf)
		s.retry.Reset(s.d.retry)
		s.mu.Unlock()
		if err != nil {
			s.fail(err)
		}
		return
	}
	if t == sn.PUBCOMP && s.out.state != outAwaitComp || t == sn.PUBACK && s.d.qos == 2 && rc == sn.Accepted {
		s.mu.Unlock()
		return
	}
	sentAt := s.out.sentAt
	s.out.state = outNone
	s.retry.Stop()
	s.mu.Unlock()
	// Record first, then free the slot: Drain waits for an empty window, and the run counts
	// acknowledgements right after it.
	s.h.Completed(sentAt, rc == sn.Accepted)
	<-s.window
}
