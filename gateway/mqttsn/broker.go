package mqttsn

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/msgbench/msgbench/internal/mqtt"
)

// upstream is the broker side of the gateway: transparent or aggregating.
type upstream interface {
	// open connects client c's broker side (blocking; runs on its own goroutine). It sets c.bc.
	open(ctx context.Context, c *client) error
	// publishNoSession publishes for no client (QoS -1 messages, wills the gateway publishes).
	publishNoSession(topic string, data []byte, qos byte, retain bool) error
	// subscribe and unsubscribe make the broker deliver a filter to c (blocking).
	subscribe(ctx context.Context, c *client, filter string, qos byte) (granted byte, err error)
	unsubscribe(ctx context.Context, c *client, filter string) error
	// attach and detach add or remove a confirmed subscription of c to message fan-out (under
	// c.mu; they must not block).
	attach(c *client, s clientSub)
	detach(c *client, s clientSub)
	// close ends c's broker side: graceful without the will, else the will is published.
	close(c *client, subs []clientSub, graceful bool)
	shutdown()
}

var (
	errWindowFull = errors.New("broker connection's inflight window is full")
	errRefused    = errors.New("broker refused the subscription")
)

// brokerConn is one MQTT connection of the gateway. Its publish lock makes the connection's
// single-publisher rule hold when several clients share it. Each QoS 1/2 PUBLISH carries a
// completion token (client slot and message id) as its stamp, which OnComplete hands back, so
// the gateway keeps no map from MQTT packet ids to clients.
type brokerConn struct {
	conn    *mqtt.Conn
	mu      sync.Mutex
	closing atomic.Bool
	dirty   bool // unflushed publishes of the UDP reader (reader goroutine only)
}

// publish writes a PUBLISH without ever blocking on the inflight window (the caller may be the
// UDP reader, which must keep reading to let acknowledgements through). With flush false the
// PUBLISH stays in the connection's buffer until flush: the UDP reader flushes when no datagram
// is waiting, so a burst of datagrams becomes one TCP write.
func (b *brokerConn) publish(topic string, data []byte, qos byte, retain bool, tok int64, flush bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if qos > 0 && b.conn.Inflight() >= b.conn.Window() {
		return errWindowFull
	}
	_, err := b.conn.PublishStamped(topic, data, qos, retain, flush, tok)
	return err
}

func (b *brokerConn) flush() {
	b.mu.Lock()
	_ = b.conn.Flush() // a failed connection ends itself; its watcher cleans up
	b.mu.Unlock()
}

// dial connects one MQTT connection to the broker.
func (g *Gateway) dial(ctx context.Context, o mqtt.ConnectOptions, inflight int, onPublish func(*mqtt.Publish)) (*brokerConn, error) {
	ctx, cancel := context.WithTimeout(ctx, g.cfg.BrokerTimeout)
	defer cancel()
	nc, err := g.o.DialBrokerOrDefault(ctx)
	if err != nil {
		return nil, err
	}
	if g.o.BrokerTLS != nil {
		tc := tls.Client(nc, g.o.BrokerTLS)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = nc.Close()
			return nil, fmt.Errorf("TLS handshake: %w", err)
		}
		nc = tc
	}
	o.Version = g.cfg.MQTTVersion
	o.KeepAlive = uint16(min(g.cfg.KeepAlive.Seconds(), 65535))
	b := &brokerConn{}
	b.conn, err = mqtt.Connect(ctx, nc, mqtt.Options{
		Connect:         o,
		Inflight:        inflight,
		MaxPacketSize:   1 << 20,
		OnPublish:       onPublish,
		OnComplete:      func(_ uint16, tok int64, reason byte) { g.completed(tok, reason) },
		ReadBufferSize:  16 << 10,
		WriteBufferSize: 16 << 10,
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

func (b *brokerConn) subscribe(ctx context.Context, filter string, qos byte) (byte, error) {
	codes, err := b.conn.Subscribe(ctx, mqtt.Subscription{Filter: filter, QoS: qos})
	if err != nil {
		return 0, fmt.Errorf("subscribe %q: %w", filter, err)
	}
	if len(codes) != 1 || codes[0] >= 0x80 {
		return 0, errRefused
	}
	return codes[0], nil
}

func (b *brokerConn) unsubscribe(ctx context.Context, filter string) error {
	if _, err := b.conn.Unsubscribe(ctx, filter); err != nil {
		return fmt.Errorf("unsubscribe %q: %w", filter, err)
	}
	return nil
}

// watch stops the gateway when a connection it cannot do without ends.
func (g *Gateway) watch(b *brokerConn, what string) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		select {
		case <-b.conn.Done():
			if !b.closing.Load() {
				go g.stop(fmt.Errorf("%s to the broker ended: %w", what, b.conn.Err()))
			}
		case <-g.ctx.Done():
		}
	}()
}

// gatewayClientID names the gateway's own MQTT connections, unique per gateway process.
func gatewayClientID(role string) string {
	var r [4]byte
	_, _ = rand.Read(r[:])
	return "msgbench-sngw-" + hex.EncodeToString(r[:]) + "-" + role
}

// deliverFromBroker hands a broker message to client c.
func (g *Gateway) deliverFromBroker(c *client, p *mqtt.Publish) {
	tp := g.topics.intern(p.Topic)
	if tp == nil {
		g.st.drop(DropUnsupported) // the topic table is full
		return
	}
	c.deliver(tp, p.Payload, p.QoS, p.Retain)
}

// transparent gives each client its own MQTT connection.
type transparent struct {
	g    *Gateway
	anon *brokerConn // QoS -1 messages and wills updated after CONNECT
}

// transparentInflight is each client connection's window: the gateway tracks at most inSlots
// PUBLISHes per client, plus room for a SUBSCRIBE, so the window never blocks.
const transparentInflight = 2*inSlots + 2

func newTransparent(ctx context.Context, g *Gateway) (*transparent, error) {
	anon, err := g.dial(ctx, mqtt.ConnectOptions{ClientID: gatewayClientID("anon"), CleanSession: true}, 1024, nil)
	if err != nil {
		return nil, err
	}
	g.watch(anon, "the gateway's own connection")
	return &transparent{g: g, anon: anon}, nil
}

func (t *transparent) open(ctx context.Context, c *client) error {
	g := t.g
	c.mu.Lock()
	o := mqtt.ConnectOptions{ClientID: c.id, CleanSession: c.clean}
	if c.will.set {
		o.WillTopic, o.WillPayload, o.WillQoS, o.WillRetain = c.will.topic, c.will.msg, c.will.qos, c.will.retain
	}
	c.mu.Unlock()
	b, err := g.dial(ctx, o, transparentInflight, func(p *mqtt.Publish) { g.deliverFromBroker(c, p) })
	if err != nil {
		return fmt.Errorf("connect to broker %s: %w", g.o.Broker, err)
	}
	c.mu.Lock()
	if c.state == stGone {
		c.mu.Unlock()
		b.closing.Store(true)
		_ = b.conn.Disconnect()
		return errors.New("client left while connecting")
	}
	c.bc = b
	c.mu.Unlock()
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		<-b.conn.Done()
		if !b.closing.Load() {
			g.o.Log("mqtt-sn gateway: client %s: broker connection ended: %v", c.id, b.conn.Err())
			g.remove(c, endUpstream)
		}
	}()
	return nil
}

func (t *transparent) publishNoSession(topic string, data []byte, qos byte, retain bool) error {
	return t.anon.publish(topic, data, qos, retain, 0, true)
}

func (t *transparent) subscribe(ctx context.Context, c *client, filter string, qos byte) (byte, error) {
	return c.bc.subscribe(ctx, filter, qos)
}

func (t *transparent) unsubscribe(ctx context.Context, c *client, filter string) error {
	return c.bc.unsubscribe(ctx, filter)
}

func (t *transparent) attach(*client, clientSub) {} // the broker delivers to the client's own connection
func (t *transparent) detach(*client, clientSub) {}

// close ends the client's connection: DISCONNECT when graceful, else a dropped TCP connection
// so that the broker publishes the will. A will updated after CONNECT (WILLTOPICUPD,
// WILLMSGUPD) is not the one the broker holds, so the gateway publishes it itself.
func (t *transparent) close(c *client, _ []clientSub, graceful bool) {
	b := c.bc
	if b == nil {
		return
	}
	b.closing.Store(true)
	if graceful || c.willUpdate {
		_ = b.conn.Disconnect()
	} else {
		_ = b.conn.Close()
	}
	if !graceful && c.willUpdate && c.will.set {
		if t.anon.publish(c.will.topic, c.will.msg, c.will.qos, c.will.retain, 0, true) == nil {
			t.g.st.willsPublished.Add(1)
		}
	}
}

func (t *transparent) shutdown() {
	t.anon.closing.Store(true)
	_ = t.anon.conn.Disconnect()
}
