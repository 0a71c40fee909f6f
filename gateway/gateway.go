// Package gateway runs msgbench's protocol gateways, which bridge clients of one protocol
// (MQTT-SN over UDP, HTTP/1.1/2/3 publish/subscribe, MQTT over QUIC) to an MQTT broker. Each
// gateway is one package that registers itself by mode name; `msgbench gateway --mode M` runs
// one alone, the operator deploys it in a pod, and `msgbench run` starts it in-process.
package gateway

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sort"
	"sync"
	"time"

	"github.com/msgbench/msgbench/plan"
)

// QUICHandshakeTimeout bounds a QUIC handshake on the gateways' side. quic-go's default, 5 s,
// is shorter than a handshake takes on NB-IoT (30 kbit/s down, 600 ms RTT, several handshakes
// sharing the link: 10-20 s measured): the server gave up while the client completed, and the
// client's first request then waited on a connection the server no longer knew. The clients
// allow 30 s too.
const QUICHandshakeTimeout = 30 * time.Second

// Options are what every gateway needs.
type Options struct {
	// Listen is host:port to serve on (UDP for mqtt-sn and QUIC, TCP for HTTP/1.1 and 2;
	// HTTP/3 serves UDP on the same port number).
	Listen string
	// Broker is the MQTT broker's host:port; BrokerTLS, when set, encrypts that connection.
	Broker    string
	BrokerTLS *tls.Config
	// TLS is the gateway's server TLS configuration (HTTPS, QUIC); nil serves cleartext where
	// the protocol allows.
	TLS *tls.Config
	// Groups are the groups of the run's plan whose clients this gateway serves
	// (plan.Plan.GatewayGroups of its mode). A gateway reads its settings from their typed
	// fields and nothing else of the plan or the spec: its groups' protocol options (MQTTSN,
	// HTTP, MQTT), QoS, Inflight, topics and payload size, their GatewayOptions, and their
	// publishers and subscribers for its limits.
	//
	// Groups, not the whole plan with a selection: the network, timing and workers are the
	// runner's and the load generator's, and the broker's address comes in Broker, so a gateway
	// given only its groups cannot come to depend on the rest; the caller selects once. Several
	// groups of one protocol may share a gateway (the device groups of one run): its limits
	// cover all their clients, and a setting it holds once (the MQTT version of its broker
	// connections, MQTT-SN's gateway mode, the HTTP default QoS) must be the same in each
	// (Shared). Without groups a gateway runs on its defaults (no benchmark).
	Groups []plan.Group
	// ListenTCP and ListenUDP open sockets; nil uses the net package (the local runner passes
	// functions that listen inside the emulated server's network namespace).
	ListenTCP func(ctx context.Context, address string) (net.Listener, error)
	ListenUDP func(ctx context.Context, address string) (net.PacketConn, error)
	// DialBroker opens the connection to the broker; nil uses the net package (the local runner
	// dials from inside the emulated server's network namespace).
	DialBroker func(ctx context.Context, network, address string) (net.Conn, error)
	// Logf receives operational messages (nil: silent).
	Logf func(format string, args ...any)
}

// Clients is how many clients a gateway's groups have: every publisher and subscriber may hold
// a session at once.
func Clients(groups []plan.Group) int {
	n := 0
	for i := range groups {
		n += groups[i].Clients()
	}
	return n
}

// Shared is the value of a setting a gateway holds once for all its groups, which must agree:
// of(g) for each group, the zero value without groups, or an error naming the setting (what)
// and the two groups that differ.
func Shared[T comparable](groups []plan.Group, what string, of func(*plan.Group) T) (T, error) {
	var v T
	for i := range groups {
		w := of(&groups[i])
		if i > 0 && w != v {
			return v, fmt.Errorf("%s: group %q has %v, group %q %v; one gateway serves both with one setting", what, groups[0].Name, v, groups[i].Name, w)
		}
		v = w
	}
	return v, nil
}

// DialBrokerOrDefault opens a TCP connection to the broker with o.DialBroker or the net package.
func (o *Options) DialBrokerOrDefault(ctx context.Context) (net.Conn, error) {
	if o.DialBroker != nil {
		return o.DialBroker(ctx, "tcp", o.Broker)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", o.Broker)
}

// Gateway is a running gateway.
type Gateway interface {
	// Addr is the address clients connect to.
	Addr() net.Addr
	// Close stops serving and disconnects everyone from the broker.
	Close() error
	// Done is closed when the gateway stopped; Err says why (nil after Close).
	Done() <-chan struct{}
	Err() error
	// Totals are its running totals (its metrics read them when scraped).
	Totals() Totals
}

// Totals are a gateway's running totals, read by its metrics (msgbench_gateway_*).
type Totals struct {
	// Clients are the client sessions open now (MQTT-SN sessions, HTTP subscription streams,
	// QUIC connections).
	Clients int64
	// MessagesIn came from clients and went to the broker; MessagesOut went from the broker to
	// clients. A byte-level bridge (MQTT over QUIC) does not see messages and reports none.
	MessagesIn, MessagesOut uint64
	// Dropped are messages, datagrams or requests the gateway refused or could not pass on.
	Dropped uint64
}

// Factory starts a gateway and returns once it is serving.
type Factory func(ctx context.Context, o Options) (Gateway, error)

var (
	mu        sync.Mutex
	factories = map[string]Factory{}
)

// Register makes a gateway mode available; a duplicate name panics (a programming error).
func Register(mode string, f Factory) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := factories[mode]; dup {
		panic("gateway: duplicate mode " + mode)
	}
	factories[mode] = f
}

// Start starts the gateway of a mode.
func Start(ctx context.Context, mode string, o Options) (Gateway, error) {
	mu.Lock()
	f, ok := factories[mode]
	mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("gateway mode %q does not exist in this build (available: %v)", mode, Modes())
	}
	return f(ctx, o)
}

// Modes lists the registered modes.
func Modes() []string {
	mu.Lock()
	defer mu.Unlock()
	out := make([]string, 0, len(factories))
	for m := range factories {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// ListenTCPOrDefault opens a TCP listener with o.ListenTCP or the net package.
func (o *Options) ListenTCPOrDefault(ctx context.Context, address string) (net.Listener, error) {
	if o.ListenTCP != nil {
		return o.ListenTCP(ctx, address)
	}
	var lc net.ListenConfig
	return lc.Listen(ctx, "tcp", address)
}

// ListenUDPOrDefault opens a UDP socket with o.ListenUDP or the net package.
func (o *Options) ListenUDPOrDefault(ctx context.Context, address string) (net.PacketConn, error) {
	if o.ListenUDP != nil {
		return o.ListenUDP(ctx, address)
	}
	var lc net.ListenConfig
	return lc.ListenPacket(ctx, "udp", address)
}

// Log logs through o.Logf when set.
func (o *Options) Log(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}
