package kafka

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync"

	"github.com/msgbench/msgbench/internal/wire"
)

// conns counts the bytes of every connection one Kafka client opens. A client opens several
// (bootstrap, one per broker for metadata, produce and fetch requests, reconnects), so the
// session's figure is the sum over all of them, closed ones included.
type conns struct {
	mu     sync.Mutex
	live   map[*countedConn]struct{}
	closed wire.Counters // totals of connections already closed
}

func newConns() *conns { return &conns{live: map[*countedConn]struct{}{}} }

// counters sums closed and open connections.
func (cs *conns) counters() wire.Counters {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	out := cs.closed
	for c := range cs.live {
		out.Add(c.Counters())
	}
	return out
}

// countedConn is a raw TCP connection counted below TLS. On Close it moves its final counts
// (with TCP_INFO, which is gone once the socket is closed) to the closed totals.
type countedConn struct {
	*wire.Conn
	set  *conns
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() {
		final := c.Counters()
		c.set.mu.Lock()
		delete(c.set.live, c)
		c.set.closed.Add(final)
		c.set.mu.Unlock()
	})
	return c.Conn.Close()
}

// dialer returns franz-go's Dialer: the run's dial function, counted, with TLS on top when
// tlsCfg is set. The TLS server name defaults to the host dialed (a broker's advertised name).
func (cs *conns) dialer(dial func(ctx context.Context, network, address string) (net.Conn, error), tlsCfg *tls.Config, handshake func(tls.ConnectionState)) func(ctx context.Context, network, host string) (net.Conn, error) {
	return func(ctx context.Context, network, host string) (net.Conn, error) {
		raw, err := dial(ctx, network, host)
		if err != nil {
			return nil, err
		}
		c := &countedConn{Conn: wire.NewConn(raw), set: cs}
		cs.mu.Lock()
		cs.live[c] = struct{}{}
		cs.mu.Unlock()
		if tlsCfg == nil {
			return c, nil
		}
		cfg := tlsCfg.Clone()
		if cfg.ServerName == "" {
			if h, _, err := net.SplitHostPort(host); err == nil {
				cfg.ServerName = h
			}
		}
		tc := tls.Client(c, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = c.Close()
			return nil, fmt.Errorf("TLS handshake with %s: %w", host, err)
		}
		handshake(tc.ConnectionState())
		return tc, nil
	}
}
