// Package mqtt is the load generator's MQTT 3.1.1/5 driver (MQTTS with spec.tls), on msgbench's
// lean client (internal/mqtt). Other transports (MQTT over QUIC) reuse it through Transport.
package mqtt

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/mqtt"
	"github.com/msgbench/msgbench/internal/refusal"
	"github.com/msgbench/msgbench/internal/wire"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/plan"
)

func init() {
	drivers.Register(string(v1alpha1.ProtocolMQTT), func(cfg drivers.Config) (drivers.Driver, error) {
		if cfg.Group.MQTT != nil && cfg.Group.MQTT.WebSocket {
			return New(cfg, WebSocketTransport(cfg))
		}
		d, err := New(cfg, TCPTransport(cfg))
		if err == nil {
			d.(*driver).diag = &diagnosis{cfg: cfg}
		}
		return d, err
	})
}

// Transport opens the byte stream client c's MQTT session runs on (c's own TLS configuration:
// drivers.ClientTLS). The returned counters report the bytes below any encryption (and segments
// or datagrams when the transport knows them).
type Transport func(ctx context.Context, c drivers.Client) (net.Conn, func() wire.Counters, error)

// TCPTransport dials cfg.Address over TCP, with TLS on top when cfg.TLS is set (each client its
// own session cache with resumption); bytes are counted below TLS.
func TCPTransport(cfg drivers.Config) Transport {
	dial := cfg.Dialer()
	clientTLS := drivers.NewClientTLS(cfg.TLS, cfg)
	return func(ctx context.Context, c drivers.Client) (net.Conn, func() wire.Counters, error) {
		raw, err := dial(ctx, "tcp", cfg.Address)
		if err != nil {
			return nil, nil, err
		}
		counted := wire.NewConn(raw)
		if cfg.TLS == nil {
			return counted, counted.Counters, nil
		}
		tc := tls.Client(counted, clientTLS.For(c.ID))
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = raw.Close()
			return nil, nil, fmt.Errorf("TLS handshake with %s: %w", cfg.Address, err)
		}
		return tc, counted.Counters, nil
	}
}

type driver struct {
	drivers.TLSSeen // the handshake of the sessions' TLS or QUIC connections
	cfg             drivers.Config
	transport       Transport
	o               plan.MQTTOptions
	payloadBytes    int
	version         byte
	qos             byte
	retain          bool
	// diag explains a connection closed before CONNACK or in the TLS handshake (TCP only).
	diag *diagnosis
}

// New returns an MQTT driver for cfg.Group (its MQTT options; plan.Compile checked its QoS)
// whose sessions run on transport.
func New(cfg drivers.Config, transport Transport) (drivers.Driver, error) {
	g := cfg.Group
	if g == nil || g.MQTT == nil {
		return nil, drivers.NoOptions(cfg, string(v1alpha1.ProtocolMQTT))
	}
	d := &driver{cfg: cfg, transport: transport, o: *g.MQTT, payloadBytes: int(g.PayloadBytes), version: mqtt.V311, qos: byte(g.QoS)}
	if d.o.Version == v1alpha1.MQTT5 {
		d.version = mqtt.V5
	}
	d.retain = g.Fleet != nil && g.Fleet.Retain
	return d, nil
}

type session struct {
	conn         *mqtt.Conn
	closed       atomic.Bool
	closeOnce    sync.Once
	counters     func() wire.Counters
	connectBytes int64
	topic        string
	qos          byte
	retain       bool
	// id is the client's id, version its protocol level, publishBytes the size of its PUBLISH (0
	// for a subscriber): a refusal's detail. refused is the first publish the broker refused
	// (a PUBACK or PUBREC reason code of 0x80 or above), which Drain reports.
	id           string
	version      byte
	publishBytes int
	refused      atomic.Pointer[refusal.Error]
	// acked is set at the broker's first acknowledgement of a publish.
	acked atomic.Bool
	props []byte // a request's or an answer's properties, reused
}

func (d *driver) Connect(ctx context.Context, c drivers.Client, h drivers.Handler) (drivers.Session, error) {
	nc, counters, err := d.transport(ctx, c)
	if err != nil {
		if d.cfg.TLS != nil {
			err = d.explainEarlyClose(ctx, err, true)
		}
		return nil, err
	}
	s := &session{counters: counters, topic: c.Topic, qos: d.qos, retain: d.retain, id: c.ID, version: d.version}
	if c.Role == drivers.Publisher {
		s.publishBytes = mqtt.PublishSize(d.version, len(c.Topic), d.payloadBytes, d.qos)
	}
	o := mqtt.Options{
		Connect: mqtt.ConnectOptions{
			Version:      d.version,
			ClientID:     c.ID,
			Username:     c.Username,
			Password:     c.Password,
			CleanSession: d.o.CleanSession,
			KeepAlive:    uint16(d.o.KeepAlive / time.Second),
		},
		Inflight:      d.o.Inflight,
		MaxPacketSize: d.payloadBytes + len(c.Topic) + 1024,
		Now:           d.cfg.Now,
	}
	if !d.o.CleanSession && d.version == mqtt.V5 {
		o.Connect.SessionExpiry = 3600
	}
	if c.Role == drivers.Publisher {
		// A publisher batches closed-loop messages; a larger buffer means fewer system calls
		// (allocated at its first PUBLISH: an idle device does not hold it).
		o.WriteBufferSize = 16 << 10
		// It reads only acknowledgements (4 bytes each, a window's worth at a time).
		o.ReadBufferSize = 512
		o.OnComplete = func(_ uint16, sentAt int64, reason byte) {
			if !s.acked.Load() {
				s.acked.Store(true)
			}
			if reason >= 0x80 {
				s.ackRefused(reason)
			}
			h.Completed(sentAt, reason < 0x80)
		}
		if rh, ok := h.(drivers.ResponseHandler); ok { // a requester: it reads its answers too
			o.ReadBufferSize = 0
			o.OnPublish = func(p *mqtt.Publish) { rh.Response(p.Payload, p.CorrelationData) }
		}
	} else {
		o.OnPublish = func(p *mqtt.Publish) { h.Message(p.Payload) }
		if rh, ok := h.(drivers.RetainedHandler); ok {
			o.OnPublish = func(p *mqtt.Publish) {
				if p.Retain {
					rh.Retained(p.Payload)
				} else {
					h.Message(p.Payload)
				}
			}
		}
		if rq, ok := h.(drivers.RequestHandler); ok && d.version == mqtt.V5 {
			next := o.OnPublish
			o.OnPublish = func(p *mqtt.Publish) {
				if p.ResponseTopic != nil && !p.Retain {
					rq.Request(p.Payload, p.ResponseTopic, p.CorrelationData)
				} else {
					next(p)
				}
			}
		}
	}
	if wc, ok := nc.(*wire.Conn); ok { // plain TCP: an idle reader need not hold its buffer
		if sc, ok := wc.Conn.(syscall.Conn); ok {
			if raw, err := sc.SyscallConn(); err == nil {
				o.Raw = raw
			}
		}
	}
	conn, err := mqtt.Connect(ctx, nc, o)
	if err != nil {
		err = d.explainEarlyClose(ctx, err, false)
		return nil, fmt.Errorf("MQTT %s: %w", c.ID, s.refusedBy(err))
	}
	s.conn = conn
	if err := d.checkPacketSize(c, conn, s.publishBytes); err != nil {
		_ = conn.Close()
		<-conn.Stopped()
		return nil, fmt.Errorf("MQTT %s: %w", c.ID, err)
	}
	if tc, ok := nc.(interface{ ConnectionState() tls.ConnectionState }); ok { // *tls.Conn, a QUIC stream
		d.Note(tc.ConnectionState())
	}
	if q, ok := nc.(interface{ Used0RTT() bool }); ok && q.Used0RTT() { // CONNACK came: the handshake is done
		d.NoteZeroRTT()
	}
	cs := counters()
	s.connectBytes = cs.BytesSent + cs.BytesReceived
	return s, nil
}

func (s *session) Subscribe(ctx context.Context) error { return s.subscribe(ctx, s.topic) }

func (s *session) subscribe(ctx context.Context, filter string) error {
	if s.closed.Load() {
		return drivers.ErrClosed
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	codes, err := s.conn.Subscribe(ctx, mqtt.Subscription{Filter: filter, QoS: s.qos})
	if err != nil {
		return fmt.Errorf("subscribe %s: %w", filter, s.closedErr(err))
	}
	if len(codes) != 1 {
		return fmt.Errorf("subscribe %s: broker answered %d codes for one filter (SUBACK %v)", filter, len(codes), codes)
	}
	if codes[0] >= 0x80 {
		return refusal.Explain(s.version, refusal.SUBACK, codes[0], "", fmt.Sprintf("client %s, SUBSCRIBE to %s", s.id, filter))
	}
	if codes[0] < s.qos {
		return fmt.Errorf("subscribe %s: broker granted QoS %d, the benchmark asks for %d", filter, codes[0], s.qos)
	}
	return nil
}

// closedErr is drivers.ErrClosed in place of err once Close began: whatever a call interrupted
// by Close saw (a closed socket, a write deadline) is the close, not a failure.
func (s *session) closedErr(err error) error {
	if err != nil && s.closed.Load() {
		return drivers.ErrClosed
	}
	return s.refusedBy(err)
}

func (s *session) Publish(payload []byte, flush bool) error {
	if s.closed.Load() {
		return drivers.ErrClosed
	}
	_, err := s.conn.Publish(s.topic, payload, s.qos, s.retain, flush)
	return s.closedErr(err)
}

// PublishTo implements drivers.TopicPublisher.
func (s *session) PublishTo(topic string, payload []byte, flush bool) error {
	if s.closed.Load() {
		return drivers.ErrClosed
	}
	_, err := s.conn.Publish(topic, payload, s.qos, s.retain, flush)
	return s.closedErr(err)
}

// PublishRequest implements drivers.Requester.
func (s *session) PublishRequest(topic string, payload []byte, responseTopic string, correlation []byte, flush bool) error {
	if s.closed.Load() {
		return drivers.ErrClosed
	}
	s.props = mqtt.AppendRequestProperties(s.props[:0], responseTopic, correlation)
	_, err := s.conn.PublishWithProperties(topic, payload, s.qos, s.retain, flush, s.props)
	return s.closedErr(err)
}

// SubscribeTo implements drivers.Requester.
func (s *session) SubscribeTo(ctx context.Context, filter string) error {
	return s.subscribe(ctx, filter)
}

// Respond implements drivers.Requester. It is called from the responder's own goroutine, never
// from the reader (a full window would wait for acknowledgements only the reader reads).
func (s *session) Respond(topic string, payload, correlation []byte) error {
	if s.closed.Load() {
		return drivers.ErrClosed
	}
	s.props = mqtt.AppendRequestProperties(s.props[:0], "", correlation)
	_, err := s.conn.PublishWithProperties(topic, payload, s.qos, false, true, s.props)
	return s.closedErr(err)
}

func (s *session) Flush() error {
	if s.closed.Load() {
		return drivers.ErrClosed
	}
	return s.closedErr(s.conn.Flush())
}

func (s *session) Drain(ctx context.Context) error {
	if s.closed.Load() {
		return drivers.ErrClosed
	}
	err := s.conn.WaitInflight(ctx)
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return &drivers.DrainError{Unacknowledged: s.conn.Inflight(), Err: ctx.Err()}
	}
	if err == nil {
		if re := s.refused.Load(); re != nil { // every acknowledgement came, some said no
			return re
		}
	}
	return s.closedErr(err)
}

func (s *session) ConnectBytes() int64     { return s.connectBytes }
func (s *session) Counters() wire.Counters { return s.counters() }
func (s *session) Done() <-chan struct{}   { return s.conn.Done() }
func (s *session) Err() error              { return s.refusedBy(s.conn.Err()) }

// Abort drops the connection without DISCONNECT, as a NAT or a gateway that loses it would
// (the broker keeps a persistent session and publishes the will); otherwise it keeps Close's
// promises: once it has returned no handler call follows, and Close returns nil.
func (s *session) Abort() {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		_ = s.conn.Close()
		<-s.conn.Stopped()
	})
}

// Close sends DISCONNECT (bounded by a write deadline), closes the connection, which ends a
// Publish or Drain waiting on it, and waits for the reader goroutine, so that no handler call
// follows. A second call returns nil.
func (s *session) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		err = s.conn.Disconnect()
		<-s.conn.Stopped()
	})
	return err
}
