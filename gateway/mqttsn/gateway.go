// Package mqttsn is msgbench's MQTT-SN 1.2 gateway: it serves MQTT-SN clients over UDP (IPv4 and
// IPv6) and bridges them to an MQTT broker, either with one MQTT connection per client
// (transparent mode) or over a small pool of shared connections (aggregating mode). It is
// registered as gateway mode "mqtt-sn" (`msgbench gateway --mode mqtt-sn`).
//
// It is built so that the gateway is not what a benchmark measures: topic ids are indexes into
// one array shared by all clients, message ids are counters, per-client state sits in fixed-size
// tables, and a PUBLISH crosses the gateway without an allocation, goroutine or channel hop. See
// docs/mqtt-sn.md.
package mqttsn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/gateway"
	"github.com/msgbench/msgbench/internal/mqtt"
	sn "github.com/msgbench/msgbench/internal/mqttsn"
	"github.com/msgbench/msgbench/plan"
)

func init() {
	gateway.Register("mqtt-sn", func(ctx context.Context, o gateway.Options) (gateway.Gateway, error) {
		c, err := ConfigFromGroups(o.Groups)
		if err != nil {
			return nil, err
		}
		return Start(ctx, o, c)
	})
}

// Mode is how clients map to MQTT connections.
type Mode string

// Modes.
const (
	// Transparent gives every MQTT-SN client its own MQTT connection, with the client's id,
	// clean-session flag and will.
	Transparent Mode = "transparent"
	// Aggregating multiplexes all clients over PoolSize MQTT connections: the gateway
	// subscribes once per topic filter and fans messages out to its clients, and publishes
	// their wills itself.
	Aggregating Mode = "aggregating"
)

// Config tunes the gateway. Zero fields take the defaults listed.
type Config struct {
	// Mode is transparent (default) or aggregating.
	Mode Mode
	// GatewayID is sent in ADVERTISE and GWINFO (default 1).
	GatewayID byte
	// RetryInterval is T_retry: how long the gateway waits for a client's acknowledgement of a
	// PUBLISH, PUBREL or REGISTER before sending it again (default 10 s).
	RetryInterval time.Duration
	// MaxRetries is N_retry: retransmissions before the client is considered lost (default 5).
	MaxRetries int
	// MaxClients bounds sessions; a CONNECT beyond it is answered "rejected: congestion"
	// (default 10000; ConfigFromGroups raises it to the benchmark's publishers + subscribers).
	MaxClients int
	// PoolSize is the number of MQTT connections in aggregating mode (default 4).
	PoolSize int
	// MaxQueuedMessages and MaxQueuedBytes bound the messages waiting for one client: behind
	// its unacknowledged QoS 1/2 PUBLISH, or buffered while it sleeps (defaults 1000 and 1 MiB).
	MaxQueuedMessages int
	MaxQueuedBytes    int
	// MaxSubscriptions per client (default 64).
	MaxSubscriptions int
	// MaxTopics bounds the topic table shared by all clients (default 65535).
	MaxTopics int
	// Predefined maps predefined topic ids to names (default: benchmark topic i has id i+1).
	Predefined map[uint16]string
	// AdvertiseAddress, when set, receives an ADVERTISE every AdvertiseInterval (a broadcast
	// or multicast host:port, default interval 15 minutes as MQTT-SN 1.2 suggests).
	AdvertiseAddress  string
	AdvertiseInterval time.Duration
	// AnswerBroadcast makes the gateway answer SEARCHGW sent to 255.255.255.255 and to its
	// subnet's broadcast address at its port, not only to its own address (search.go);
	// ConfigFromGroups sets it when a group's clients search for it (spec.mqttsn.discovery).
	AnswerBroadcast bool
	// MQTTVersion (mqtt.V311 or mqtt.V5) and KeepAlive of the gateway's MQTT connections.
	MQTTVersion byte
	KeepAlive   time.Duration
	// BrokerTimeout bounds dialling the broker and its CONNACK, SUBACK and UNSUBACK (default 10 s).
	BrokerTimeout time.Duration

	// benchmark topic naming, for the topic table's fast path
	topicPrefix string
	topicCount  int
}

// ConfigFromGroups derives the gateway's configuration from the plan's groups it serves
// (gateway.Options.Groups): their MQTT-SN options' timers and keep-alive, their gateway's mode
// and MQTT version (GatewayOptions), and their topics as predefined topics (topic i, named
// TopicPrefix + i, has id i+1, as the drivers number them). It admits every client of the
// groups at once. Settings the gateway holds once must agree between the groups, and so must
// the predefined ids: groups of different topic prefixes would give one id two names. No
// groups: the defaults.
func ConfigFromGroups(groups []plan.Group) (Config, error) {
	var c Config
	if len(groups) == 0 {
		return c, nil
	}
	for i := range groups {
		if groups[i].MQTTSN == nil {
			return c, fmt.Errorf("mqtt-sn gateway: group %q is %s, not mqtt-sn (it has no MQTT-SN options)", groups[i].Name, groups[i].Protocol)
		}
	}
	mode, err := gateway.Shared(groups, "spec.mqttsn.gatewayMode", func(g *plan.Group) Mode {
		if g.GatewayOptions == nil {
			return ""
		}
		return Mode(g.GatewayOptions.MQTTSNMode)
	})
	if err != nil {
		return c, fmt.Errorf("mqtt-sn gateway: %w", err)
	}
	version, err := gateway.Shared(groups, "spec.mqtt.version", func(g *plan.Group) v1alpha1.MQTTVersion {
		if g.GatewayOptions == nil || g.GatewayOptions.MQTTVersion == "" {
			return v1alpha1.MQTT311
		}
		return g.GatewayOptions.MQTTVersion
	})
	if err != nil {
		return c, fmt.Errorf("mqtt-sn gateway: %w", err)
	}
	if c.RetryInterval, err = gateway.Shared(groups, "spec.mqttsn.retryInterval", func(g *plan.Group) time.Duration { return g.MQTTSN.RetryInterval }); err != nil {
		return c, fmt.Errorf("mqtt-sn gateway: %w", err)
	}
	if c.MaxRetries, err = gateway.Shared(groups, "spec.mqttsn.maxRetries", func(g *plan.Group) int { return g.MQTTSN.MaxRetries }); err != nil {
		return c, fmt.Errorf("mqtt-sn gateway: %w", err)
	}
	if c.KeepAlive, err = gateway.Shared(groups, "spec.mqtt.keepAliveSeconds", func(g *plan.Group) time.Duration { return g.MQTTSN.KeepAlive }); err != nil {
		return c, fmt.Errorf("mqtt-sn gateway: %w", err)
	}
	c.Mode = mode
	for i := range groups {
		if groups[i].MQTTSN.Discovery != nil && groups[i].MQTTSN.Discovery.Address != "" {
			c.AnswerBroadcast = true // a search may come by broadcast
		}
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = -1 // explicit zero: never retransmit
	}
	if version == v1alpha1.MQTT5 {
		c.MQTTVersion = mqtt.V5
	}
	c.Predefined = map[uint16]string{}
	named := map[uint16]string{} // id → the group that named it
	for i := range groups {
		g := &groups[i]
		if g.Fleet != nil {
			continue // a device group's devices register their topics by name (plan)
		}
		if g.MQTTSN.Predefined != nil { // spec.mqttsn.predefinedTopicIds: the ids as given
			for name, id := range g.MQTTSN.Predefined {
				if had, ok := c.Predefined[id]; ok && had != name {
					return c, fmt.Errorf("mqtt-sn gateway: predefined topic id %d is %q for group %q and %q for group %q (spec.mqttsn.predefinedTopicIds differ)", id, had, named[id], name, g.Name)
				}
				c.Predefined[id], named[id] = name, g.Name
			}
			continue
		}
		n := min(int(g.Topics), 0xFFFE)
		for t := range n {
			id, name := uint16(t+1), g.TopicName(t)
			if had, ok := c.Predefined[id]; ok && had != name {
				return c, fmt.Errorf("mqtt-sn gateway: predefined topic id %d is %q for group %q and %q for group %q (spec.workload.topicPrefix differs)", id, had, named[id], name, g.Name)
			}
			c.Predefined[id], named[id] = name, g.Name
		}
		if n > c.topicCount {
			c.topicPrefix, c.topicCount = g.TopicPrefix, n
		}
	}
	// Every client of the groups may be a session of this gateway at once.
	if clients := gateway.Clients(groups); clients > defaultMaxClients {
		c.MaxClients = clients
	}
	return c, nil
}

// Defaults fills in the zero fields with the defaults listed on Config and refuses an unknown
// mode. Start calls it; it starts nothing.
func (c *Config) Defaults() error {
	if c.Mode == "" {
		c.Mode = Transparent
	}
	if c.Mode != Transparent && c.Mode != Aggregating {
		return fmt.Errorf("spec.mqttsn.gatewayMode: %q is neither transparent nor aggregating", c.Mode)
	}
	if c.GatewayID == 0 {
		c.GatewayID = 1
	}
	if c.RetryInterval <= 0 {
		c.RetryInterval = 10 * time.Second
	}
	switch {
	case c.MaxRetries == 0:
		c.MaxRetries = 5
	case c.MaxRetries < 0:
		c.MaxRetries = 0
	}
	setDefault(&c.MaxClients, defaultMaxClients)
	setDefault(&c.PoolSize, 4)
	setDefault(&c.MaxQueuedMessages, 1000)
	setDefault(&c.MaxQueuedBytes, 1<<20)
	setDefault(&c.MaxSubscriptions, 64)
	setDefault(&c.MaxTopics, 0xFFFF)
	if c.AdvertiseInterval <= 0 {
		c.AdvertiseInterval = 15 * time.Minute
	}
	if c.MQTTVersion == 0 {
		c.MQTTVersion = mqtt.V311
	}
	if c.BrokerTimeout <= 0 {
		c.BrokerTimeout = 10 * time.Second
	}
	return nil
}

// defaultMaxClients is Config.MaxClients unless the benchmark has more clients.
const defaultMaxClients = 10000

func setDefault(v *int, d int) {
	if *v <= 0 {
		*v = d
	}
}

// Gateway is a running MQTT-SN gateway.
type Gateway struct {
	cfg    Config
	o      gateway.Options
	pc     *net.UDPConn
	topics *topicTable
	up     upstream
	st     counters

	mu     sync.RWMutex // guards byAddr, byID, free
	byAddr map[netip.AddrPort]*client
	byID   map[string]*client
	slots  []atomic.Pointer[client] // by client slot: completions find their client by index
	free   []int32
	gen    uint32

	opening chan struct{} // bounds concurrent broker connects

	broadcast []net.PacketConn // sockets answering SEARCHGW sent to a broadcast address

	ctx       context.Context
	cancel    context.CancelFunc
	closeOnce sync.Once
	done      chan struct{}
	err       error
	wg        sync.WaitGroup

	rbuf  []byte        // read buffer (reader goroutine)
	dirty []*brokerConn // connections with buffered publishes (reader goroutine)
	// datagramWaiting's socket, probe and answer (reader goroutine)
	raw     syscall.RawConn
	probe   func(fd uintptr)
	waiting bool
	reply   []byte // scratch for replies to addresses without a session (reader goroutine)
	pub     sn.Publish
	fan     atomic.Uint64 // fan-out sequence (aggregating)
}

// Start serves MQTT-SN on o.Listen and returns once the gateway is serving and, in aggregating
// mode, its broker connections are up. ctx bounds the start only; Close stops the gateway.
func Start(ctx context.Context, o gateway.Options, cfg Config) (*Gateway, error) {
	if err := cfg.Defaults(); err != nil {
		return nil, err
	}
	pc, err := o.ListenUDPOrDefault(ctx, o.Listen)
	if err != nil {
		return nil, fmt.Errorf("mqtt-sn gateway: listen on %s: %w", o.Listen, err)
	}
	udp, ok := pc.(*net.UDPConn)
	if !ok {
		_ = pc.Close()
		return nil, fmt.Errorf("mqtt-sn gateway: listener on %s is a %T, not a UDP socket", o.Listen, pc)
	}
	_ = udp.SetReadBuffer(4 << 20) // absorb bursts; the kernel caps it at net.core.rmem_max
	_ = udp.SetWriteBuffer(4 << 20)
	g := &Gateway{
		cfg: cfg, o: o, pc: udp,
		topics:  newTopicTable(cfg.Predefined, cfg.MaxTopics, cfg.topicPrefix, cfg.topicCount),
		byAddr:  map[netip.AddrPort]*client{},
		byID:    map[string]*client{},
		slots:   make([]atomic.Pointer[client], cfg.MaxClients),
		opening: make(chan struct{}, 64),
		done:    make(chan struct{}),
		rbuf:    make([]byte, 65536),
	}
	if g.raw, err = udp.SyscallConn(); err != nil {
		_ = udp.Close()
		return nil, fmt.Errorf("mqtt-sn gateway: %w", err)
	}
	g.probe = func(fd uintptr) { g.waiting = queuedBytes(fd) > 0 }
	g.free = make([]int32, cfg.MaxClients)
	for i := range g.free {
		g.free[i] = int32(cfg.MaxClients - 1 - i) // pop from the end: slot 0 first
	}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	if cfg.Mode == Aggregating {
		g.up, err = newAggregating(ctx, g)
	} else {
		g.up, err = newTransparent(ctx, g)
	}
	if err != nil {
		_ = udp.Close()
		g.cancel()
		return nil, fmt.Errorf("mqtt-sn gateway: broker %s: %w", o.Broker, err)
	}
	g.wg.Add(1)
	go g.readLoop()
	if cfg.AnswerBroadcast {
		if err := g.listenBroadcast(); err != nil {
			_ = g.Close()
			return nil, fmt.Errorf("mqtt-sn gateway: listen for SEARCHGW by broadcast: %w", err)
		}
	}
	if cfg.AdvertiseAddress != "" {
		if err := g.startAdvertising(); err != nil {
			_ = g.Close()
			return nil, err
		}
	}
	o.Log("mqtt-sn gateway: %s mode on %s, broker %s, %d predefined topics", cfg.Mode, udp.LocalAddr(), o.Broker, len(cfg.Predefined))
	return g, nil
}

// Addr implements gateway.Gateway.
func (g *Gateway) Addr() net.Addr { return g.pc.LocalAddr() }

// Done implements gateway.Gateway.
func (g *Gateway) Done() <-chan struct{} { return g.done }

// Err implements gateway.Gateway.
func (g *Gateway) Err() error {
	select {
	case <-g.done:
		return g.err
	default:
		return nil
	}
}

// Close implements gateway.Gateway: clients are dropped (transparent connections end with
// DISCONNECT, so no will is published) and the broker connections closed.
func (g *Gateway) Close() error {
	g.stop(nil)
	return nil
}

// Stats returns the gateway's counters.
func (g *Gateway) Stats() Stats { return g.st.snapshot() }

// Totals implements gateway.Gateway.
func (g *Gateway) Totals() gateway.Totals {
	s := g.st.snapshot()
	return gateway.Totals{Clients: s.Clients, MessagesIn: s.PublishesIn, MessagesOut: s.PublishesOut, Dropped: s.DropTotal()}
}

// Config returns the configuration in use, defaults filled in.
func (g *Gateway) Config() Config { return g.cfg }

func (g *Gateway) stop(err error) {
	g.closeOnce.Do(func() {
		g.err = err
		if err != nil {
			g.o.Log("mqtt-sn gateway: stopping: %v", err)
		}
		g.cancel()
		_ = g.pc.Close()
		for _, pc := range g.broadcast {
			_ = pc.Close()
		}
		g.mu.Lock()
		all := make([]*client, 0, len(g.byID))
		for _, c := range g.byAddr {
			all = append(all, c)
		}
		g.mu.Unlock()
		for _, c := range all {
			g.remove(c, endShutdown)
		}
		g.up.shutdown()
		g.wg.Wait()
		close(g.done)
	})
}

// send writes one datagram.
func (g *Gateway) send(to netip.AddrPort, b []byte) {
	if _, err := g.pc.WriteToUDPAddrPort(b, to); err != nil {
		if !errors.Is(err, net.ErrClosed) {
			g.o.Log("mqtt-sn gateway: send to %s: %v", to, err)
		}
		return
	}
	g.st.datagramsOut.Add(1)
	g.st.bytesOut.Add(uint64(len(b)))
}

// maxBatch bounds how many datagrams' publishes wait in a broker connection's buffer.
const maxBatch = 64

// readLoop reads datagrams until the socket closes. QoS 0 publishes from clients wait in their
// broker connections' buffers while more datagrams are already queued on the socket, and are
// flushed (one write per broker connection) when none is, or after maxBatch datagrams: a client
// streaming QoS 0 (or, in aggregating mode, many clients) reaches the broker in few writes, and a
// lone publish is never held.
func (g *Gateway) readLoop() {
	defer g.wg.Done()
	batch := 0
	for {
		n, from, err := g.pc.ReadFromUDPAddrPort(g.rbuf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) || g.ctx.Err() != nil {
				g.flushDirty()
				return
			}
			// ICMP errors surface on unconnected sockets on some systems; they are not fatal.
			// Flush first: the next read may block, and buffered publishes must not wait for it.
			g.o.Log("mqtt-sn gateway: read: %v", err)
			g.flushDirty()
			batch = 0
			continue
		}
		g.handle(from, g.rbuf[:n])
		if len(g.dirty) > 0 {
			if batch++; batch >= maxBatch || !g.datagramWaiting() {
				g.flushDirty()
				batch = 0
			}
		}
	}
}

// datagramWaiting reports whether a datagram is queued on the socket, so that the next read will
// not block. (A read with an expired deadline cannot tell: Go fails it before looking at the
// socket, data waiting or not.) One ioctl, no allocation: Start makes the probe closure once.
func (g *Gateway) datagramWaiting() bool {
	g.waiting = false
	if err := g.raw.Control(g.probe); err != nil {
		return false
	}
	return g.waiting
}

// markDirty notes a broker connection with a buffered publish (reader goroutine).
func (g *Gateway) markDirty(b *brokerConn) {
	if !b.dirty {
		b.dirty = true
		g.dirty = append(g.dirty, b)
	}
}

func (g *Gateway) flushDirty() {
	g.st.brokerFlushes.Add(uint64(len(g.dirty)))
	for i, b := range g.dirty {
		b.flush()
		b.dirty = false
		g.dirty[i] = nil
	}
	g.dirty = g.dirty[:0]
}
