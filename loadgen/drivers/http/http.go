// Package http is the load generator's HTTP publish/subscribe driver (protocol http) for msgbench's
// HTTP gateway (docs/http-api.md): publishers POST /topics/<topic>, subscribers hold a streaming
// GET /topics/<topic>, over HTTP/1.1, HTTP/2 (h2c, or h2 with spec.tls) or HTTP/3 (QUIC, TLS 1.3)
// as spec.http.version says, on one connection per client (spec.http.keepAlive) or a new one per
// message.
//
// Definitions (docs/round-trips.md): a publisher's session is usable once its transport is —
// TCP connected (and TLS done), or the QUIC handshake done — so connect latency ends there and
// the first request's round trip shows in first-message latency; a subscriber's connect ends when
// the GET's response headers arrive, which the gateway sends after the broker's SUBACK.
// Completed reports every publish response (publish-ack latency is request to response, at every
// QoS; ok means 2xx).
package http

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/wire"
	"github.com/msgbench/msgbench/loadgen/drivers"
)

func init() {
	drivers.Register(string(v1alpha1.ProtocolHTTP), func(cfg drivers.Config) (drivers.Driver, error) {
		return New(cfg, Options{})
	})
}

// Options go beyond the group's options.
type Options struct {
	// Username and Password, when set, ride in every request as Basic credentials, which the
	// gateway passes to the broker.
	Username, Password string
}

type driver struct {
	drivers.TLSSeen // from the handshakes of dialTCP and the responses' TLS state
	cfg             drivers.Config
	o               Options
	version         v1alpha1.HTTPVersion
	keepAlive       bool // spec.http.keepAlive: one connection per client, else one per message
	window          int  // POSTs in flight at once over HTTP/2 and HTTP/3
	qos             int32
	tls             *tls.Config        // TCP TLS (nil: cleartext) or QUIC TLS for HTTP/3
	clientTLS       *drivers.ClientTLS // tls per client: its own session cache with resumption
	zeroRTT         bool               // spec.quic.zeroRTT: a subscriber's GET in 0-RTT (HTTP/3)
	host            string             // Host header / authority
	scheme          string
	auth            string // "Basic …" or ""
	quic            *quic.Config
	// maxFrame bounds a subscription frame: the payload size with room to spare.
	maxFrame int
}

// New returns an HTTP driver for cfg.Group (its HTTP options; plan.Compile checked its QoS).
func New(cfg drivers.Config, o Options) (drivers.Driver, error) {
	g := cfg.Group
	if g == nil || g.HTTP == nil {
		return nil, drivers.NoOptions(cfg, string(v1alpha1.ProtocolHTTP))
	}
	d := &driver{cfg: cfg, o: o, version: g.HTTP.Version, keepAlive: g.HTTP.KeepAlive, window: g.HTTP.Window, qos: g.QoS,
		host: cfg.Address, scheme: "http", maxFrame: int(g.PayloadBytes) + 64<<10}
	useTLS := d.version == v1alpha1.HTTP3 || g.TLS.Enabled
	if useTLS {
		d.scheme = "https"
		if cfg.TLS != nil {
			d.tls = cfg.TLS.Clone()
		} else {
			d.tls = &tls.Config{}
		}
		if d.tls.ServerName == "" {
			if host, _, err := net.SplitHostPort(cfg.Address); err == nil {
				d.tls.ServerName = host
			}
		}
		switch d.version {
		case v1alpha1.HTTP3:
			d.tls.MinVersion, d.tls.MaxVersion = tls.VersionTLS13, tls.VersionTLS13
			d.tls.NextProtos = []string{"h3"}
			d.quic = &quic.Config{MaxIdleTimeout: 2 * time.Minute, KeepAlivePeriod: 20 * time.Second, HandshakeIdleTimeout: 30 * time.Second}
		case v1alpha1.HTTP2:
			d.tls.NextProtos = []string{"h2"}
		default:
			d.tls.NextProtos = []string{"http/1.1"}
		}
	}
	d.clientTLS = drivers.NewClientTLS(d.tls, cfg)
	d.zeroRTT = d.version == v1alpha1.HTTP3 && g.QUICTransport != nil && g.QUICTransport.ZeroRTT
	if o.Username != "" {
		d.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(o.Username+":"+o.Password))
	}
	return d, nil
}

// authFor is the Authorization header of client c's requests: its own credentials (the
// group's plan.Identity) as Basic ones, else the driver's.
func (d *driver) authFor(c drivers.Client) string {
	if c.Username != "" {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(c.Username+":"+c.Password))
	}
	return d.auth
}

// path is the request path of a topic, with the QoS as a query parameter.
func (d *driver) path(topic string) string {
	return "/topics/" + (&url.URL{Path: topic}).EscapedPath() + "?qos=" + strconv.Itoa(int(d.qos))
}

func (d *driver) Connect(ctx context.Context, c drivers.Client, h drivers.Handler) (drivers.Session, error) {
	if c.Role == drivers.Subscriber {
		return d.subscribe(ctx, c, h)
	}
	if d.cfg.Group.HTTP.Endpoint != nil { // spec.http.endpoint: the user's own request
		return d.newEndpointPublisher(ctx, c, h), nil
	}
	if d.version == v1alpha1.HTTP11 {
		return d.newH1Publisher(ctx, c, h)
	}
	return d.newMuxPublisher(ctx, c, h)
}

// dialTCP opens a TCP connection counted below TLS, with TLS on top (tlsConf, the client's) when
// the run encrypts.
func (d *driver) dialTCP(ctx context.Context, tlsConf *tls.Config) (net.Conn, *wire.Conn, error) {
	raw, err := d.cfg.Dialer()(ctx, "tcp", d.cfg.Address)
	if err != nil {
		return nil, nil, err
	}
	counted := wire.NewConn(raw)
	if tlsConf == nil {
		return counted, counted, nil
	}
	tc := tls.Client(counted, tlsConf)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = raw.Close()
		return nil, nil, fmt.Errorf("TLS handshake with %s: %w", d.cfg.Address, err)
	}
	d.Note(tc.ConnectionState())
	return tc, counted, nil
}

// totals adds up the counters of a session's connections: those closed and the current one.
// Connections are added and retired by whichever goroutine opened them, so a mutex guards it.
type totals struct {
	mu     sync.Mutex
	closed wire.Counters
	open   map[*int]func() wire.Counters
}

// add starts counting a connection; call the returned function (before closing the socket,
// for TCP_INFO) when it is done.
func (t *totals) add(c func() wire.Counters) (retire func()) {
	key := new(int)
	t.mu.Lock()
	if t.open == nil {
		t.open = map[*int]func() wire.Counters{}
	}
	t.open[key] = c
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		if f, ok := t.open[key]; ok {
			t.closed.Add(f())
			delete(t.open, key)
		}
		t.mu.Unlock()
	}
}

func (t *totals) counters() wire.Counters {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.closed
	for _, f := range t.open {
		c.Add(f())
	}
	return c
}
