package mqtt

import (
	"context"
	"crypto/tls"
	"net"

	"github.com/msgbench/msgbench/internal/wire"
	"github.com/msgbench/msgbench/internal/wsconn"
	"github.com/msgbench/msgbench/loadgen/drivers"
)

// WebSocketTransport is MQTT over WebSocket (spec.mqtt.transport websocket): TCPTransport's
// connection (wss when cfg.TLS is set) upgraded at spec.mqtt.webSocketPath with subprotocol
// "mqtt". Bytes are counted below TLS and WebSocket, so the upgrade and every frame header are in
// the counts, as they are on the wire.
func WebSocketTransport(cfg drivers.Config) Transport {
	stream := TCPTransport(cfg)
	path := "/mqtt"
	if o := cfg.Group; o != nil && o.MQTT != nil {
		path = o.MQTT.WebSocketPath
	}
	return func(ctx context.Context, c drivers.Client) (net.Conn, func() wire.Counters, error) {
		nc, counters, err := stream(ctx, c)
		if err != nil {
			return nil, nil, err
		}
		ws, err := wsconn.Client(ctx, nc, cfg.Address, path)
		if err != nil {
			_ = nc.Close()
			return nil, nil, err
		}
		if tc, ok := nc.(interface{ ConnectionState() tls.ConnectionState }); ok {
			return wssConn{ws, tc}, counters, nil
		}
		return ws, counters, nil
	}
}

// wssConn is a WebSocket over TLS that still tells its TLS state (the result's handshake
// figures).
type wssConn struct {
	*wsconn.Conn
	tls interface{ ConnectionState() tls.ConnectionState }
}

func (c wssConn) ConnectionState() tls.ConnectionState { return c.tls.ConnectionState() }
