// Package drivers is the load generator's protocol interface. Each protocol is one package that
// registers a Factory by name (like database/sql drivers); the engine knows nothing of wire
// formats, and a new protocol is a new folder.
package drivers

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/wire"
	"github.com/msgbench/msgbench/plan"
	"github.com/msgbench/msgbench/results"
)

// Role of a client.
type Role int

// Roles.
const (
	Publisher Role = iota
	Subscriber
)

func (r Role) String() string {
	if r == Publisher {
		return "publisher"
	}
	return "subscriber"
}

// DialFunc opens a network connection (TCP or UDP). The local runner passes one that dials
// from inside the emulated device's network namespace.
type DialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// Config is what every client of a group shares.
type Config struct {
	// Group is the clients' share of the run plan: their protocol, QoS and the protocol's
	// options, defaulted and checked by plan.Compile. A driver reads it, never the spec.
	Group *plan.Group
	// Address is host:port the clients connect to: the broker, or the protocol's gateway.
	Address string
	// TLS is the client TLS configuration when the protocol encrypts (spec.tls, QUIC), else nil.
	TLS *tls.Config
	// ClientCerts, when set, signs each client's own certificate, which it presents when the
	// server asks (spec.tls.clientCertificates; drivers.ClientTLS).
	ClientCerts *certs.Issuer
	// Dial opens connections; nil uses a plain net.Dialer.
	Dial DialFunc
	// Now is the engine's monotonic clock in nanoseconds; drivers stamp send times with it.
	Now func() int64
}

// Dialer returns cfg.Dial or a default dialer, which spreads a large fleet's connections to a
// loopback destination over source addresses of 127.0.0.0/8 (sourceaddr.go).
func (cfg *Config) Dialer() DialFunc {
	if cfg.Dial != nil {
		return cfg.Dial
	}
	return processSpreader().dial
}

// Client identifies one protocol client.
type Client struct {
	// ID is unique within the run (MQTT client id, Kafka client id, …).
	ID   string
	Role Role
	// Topic the client publishes to or subscribes to.
	Topic string
	// TopicIndex is the topic's number (0-based), for protocols that use numeric ids.
	TopicIndex int
	// Index is the client's number among its group's clients of its role (plan.Client.Index).
	Index int
	// Username and Password are the credentials the client shows the broker (MQTT CONNECT,
	// HTTP Basic), from the group's plan.Identity; "" for none.
	Username, Password string
}

// TopicPublisher is a Session that can publish to a topic other than its client's: a device
// group's publisher cycling over several topics (a backend sending each device its command).
// The MQTT driver implements it; the plan gives cycling publishers to MQTT groups only.
type TopicPublisher interface {
	PublishTo(topic string, payload []byte, flush bool) error
}

// RetainedHandler is a Handler that takes the deliveries of retained messages a new
// subscription brings (MQTT's RETAIN flag on a delivery) apart from the others; a driver that
// knows the flag calls Retained for them instead of Message.
type RetainedHandler interface {
	Retained(payload []byte)
}

// Requester is a Session that asks and is answered, with MQTT 5's request/response (§4.10): a
// request carries the Response Topic its answer goes to and Correlation Data the answer
// carries back. The MQTT driver implements it for MQTT 5 sessions.
type Requester interface {
	// PublishRequest publishes payload to topic as a request answered on responseTopic.
	PublishRequest(topic string, payload []byte, responseTopic string, correlation []byte, flush bool) error
	// SubscribeTo subscribes the session to filter (where its answers come).
	SubscribeTo(ctx context.Context, filter string) error
	// Respond publishes payload to topic as the answer to the request that carried correlation.
	Respond(topic string, payload, correlation []byte) error
}

// RequestHandler is a Handler that answers requests: a driver that knows a delivery's Response
// Topic calls Request for the deliveries that carry one instead of Message. It runs on the
// session's reader and must not block.
type RequestHandler interface {
	Request(payload, responseTopic, correlation []byte)
}

// ResponseHandler is a publisher's Handler that takes the answers to its requests (the
// deliveries its SubscribeTo brings), with the Correlation Data each carries.
type ResponseHandler interface {
	Response(payload, correlation []byte)
}

// Handler receives a session's events. It is called on the session's own goroutine(s) and must
// not block (nor call the session's Close).
//
// The contract every driver keeps (driverstest.Run checks it for all of them):
//   - Completed is called at most once per Publish that returned nil, and exactly once for each
//     such publish the protocol acknowledges: QoS > 0 for MQTT, MQTT-SN and Kafka; every
//     publish for HTTP, whose response is its acknowledgement. At QoS 0 a driver may report a
//     publish it knows failed with ok false.
//   - A publish's Completed has returned before Drain returns nil.
//   - Neither Message nor Completed is called once Close has returned.
type Handler interface {
	// Message is a message delivered to a subscriber. payload is valid only during the call.
	Message(payload []byte)
	// Completed reports a publish the broker acknowledged (QoS/acks > 0): sentAt is the Now
	// time it was handed to the socket; ok is false when the broker refused it.
	Completed(sentAt int64, ok bool)
}

// ErrClosed is the error of Subscribe, Publish, Flush and Drain on a session its owner closed,
// including a call that Close interrupted. Every driver returns it (wrapped or not), so that
// errors.Is(err, ErrClosed) tells a session the load generator ended from one that failed.
var ErrClosed = errors.New("session closed")

// DrainError is Drain's error when its ctx ended first: how many publishes were still
// unacknowledged, wrapping ctx's error (errors.Is(err, context.DeadlineExceeded) holds).
type DrainError struct {
	Unacknowledged int
	Err            error
}

func (e *DrainError) Error() string {
	if e.Unacknowledged == 1 {
		return fmt.Sprintf("1 publish still unacknowledged: %v", e.Err)
	}
	return fmt.Sprintf("%d publishes still unacknowledged: %v", e.Unacknowledged, e.Err)
}

// Unwrap returns ctx's error.
func (e *DrainError) Unwrap() error { return e.Err }

// Session is one connected client. One goroutine calls Subscribe, Publish, Flush and Drain;
// Close, Counters, ConnectBytes, Done and Err may be called from any goroutine at any time.
//
// Close is the one way the owner ends a session, and every driver keeps the same pattern: it is
// idempotent (a second call returns nil), returns within a few seconds even when the peer
// stopped answering, interrupting a Publish blocked on a full window or waiting for its
// response and a Drain (which then return ErrClosed), and once it has returned no handler call
// is running or will be made. Afterwards Done is closed, Err is nil unless the session had
// failed before, and Subscribe, Publish, Flush and Drain return ErrClosed.
type Session interface {
	// Subscribe subscribes to the client's topic at the run's QoS and returns once the broker
	// confirmed it.
	Subscribe(ctx context.Context) error
	// Publish sends one message to the client's topic. It may block while the inflight window
	// is full: until an acknowledgement frees a place, the session fails, or Close. With flush
	// false the driver may batch it with later messages (closed loop). The caller may reuse
	// payload as soon as Publish returns.
	Publish(payload []byte, flush bool) error
	// Flush sends anything batched.
	Flush() error
	// Drain waits until every publish has been acknowledged and its Completed has returned.
	// When ctx ends first it returns at once a *DrainError wrapping ctx.Err(); when the session
	// ends first, its Err, or ErrClosed.
	Drain(ctx context.Context) error
	// ConnectBytes is the number of bytes sent and received until the session was usable.
	ConnectBytes() int64
	// Counters returns the session's wire counters so far (call before Close).
	Counters() wire.Counters
	// Done is closed when the session ends; Err says why (nil after Close).
	Done() <-chan struct{}
	Err() error
	// Close ends the session gracefully (see above).
	Close() error
}

// Driver connects clients of one protocol.
type Driver interface {
	// Connect opens a session for c and returns once it is usable (for MQTT: CONNACK).
	Connect(ctx context.Context, c Client, h Handler) (Session, error)
}

// Factory makes a Driver for a run.
type Factory func(cfg Config) (Driver, error)

var (
	mu        sync.Mutex
	factories = map[string]Factory{}
)

// Register makes a protocol available; it panics on a duplicate name (a programming error).
func Register(protocol string, f Factory) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := factories[protocol]; dup {
		panic("drivers: duplicate protocol " + protocol)
	}
	factories[protocol] = f
}

// New returns the driver of a protocol for cfg.Group's clients.
func New(protocol string, cfg Config) (Driver, error) {
	mu.Lock()
	f, ok := factories[protocol]
	mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("protocol %q has no load-generator driver in this build (available: %v)", protocol, Protocols())
	}
	if cfg.Group == nil {
		return nil, NoOptions(cfg, protocol)
	}
	return f(cfg)
}

// NoOptions is a driver's error for a Config without its protocol's options: no group, or a
// group of another protocol (whose options for this one are nil).
func NoOptions(cfg Config, protocol string) error {
	if cfg.Group == nil {
		return fmt.Errorf("drivers: protocol %s: no group (compile the spec with plan.Compile)", protocol)
	}
	return fmt.Errorf("drivers: protocol %s: group %q is protocol %q, without %s options", protocol, cfg.Group.Name, cfg.Group.Protocol, protocol)
}

// Protocols lists the registered protocols.
func Protocols() []string {
	mu.Lock()
	defer mu.Unlock()
	out := make([]string, 0, len(factories))
	for p := range factories {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// TLSReporter is implemented by drivers whose connections run over TLS (MQTTS, HTTPS, HTTP/3,
// QUIC, Kafka over TLS): the state of a handshake as negotiated, so that the result records
// the TLS version, key-exchange group and cipher suite really used (nil before any handshake and
// without TLS), and the counts of handshakes, resumed ones and 0-RTT ones.
type TLSReporter interface {
	TLSState() *tls.ConnectionState
	TLSStats() TLSStats
}

// DiscoveryReporter is a Driver whose clients search for their gateway before connecting
// (MQTT-SN's spec.mqttsn.discovery): Discovery is what they found so far, nil when they do not
// search.
type DiscoveryReporter interface {
	Discovery() *results.Discovery
}

// TLSStats counts a driver's TLS handshakes (QUIC's included) over the whole run.
type TLSStats struct {
	// Handshakes completed; Resumed of them resumed an earlier session (a ticket); ZeroRTT of
	// them carried application data in 0-RTT that the server accepted.
	Handshakes, Resumed, ZeroRTT int64
}

// TLSSeen keeps the first handshake a driver saw and counts them all; embed it to implement
// TLSReporter, and call Note once per completed handshake.
type TLSSeen struct {
	p                            atomic.Pointer[tls.ConnectionState]
	handshakes, resumed, zeroRTT atomic.Int64
}

// Note counts a completed handshake and records cs unless a handshake was already recorded.
func (t *TLSSeen) Note(cs tls.ConnectionState) {
	t.handshakes.Add(1)
	if cs.DidResume {
		t.resumed.Add(1)
	}
	if t.p.Load() == nil {
		t.p.CompareAndSwap(nil, &cs)
	}
}

// NoteZeroRTT counts a connection whose 0-RTT data the server accepted (call Note for it too).
func (t *TLSSeen) NoteZeroRTT() { t.zeroRTT.Add(1) }

// TLSState implements TLSReporter.
func (t *TLSSeen) TLSState() *tls.ConnectionState { return t.p.Load() }

// TLSStats implements TLSReporter.
func (t *TLSSeen) TLSStats() TLSStats {
	return TLSStats{Handshakes: t.handshakes.Load(), Resumed: t.resumed.Load(), ZeroRTT: t.zeroRTT.Load()}
}

// Gate guards handler calls made from goroutines a session does not own (a client library's
// callbacks, sender goroutines), so that Close can keep its promise that no handler call follows
// it. Drivers whose handler calls all come from one reader goroutine wait for that goroutine
// instead.
//
//	if g.Enter() {
//		h.Completed(sentAt, ok)
//		g.Leave()
//	}
type Gate struct {
	mu     sync.RWMutex
	closed bool
}

// Enter reports whether a handler call may be made; when true, call Leave after it.
func (g *Gate) Enter() bool {
	g.mu.RLock()
	if g.closed {
		g.mu.RUnlock()
		return false
	}
	return true
}

// Leave ends a call that Enter allowed.
func (g *Gate) Leave() { g.mu.RUnlock() }

// Close waits for the calls in progress and refuses every later one. Never call it from inside
// a handler call.
func (g *Gate) Close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}
