package drivers

import (
	"context"
	"net"
)

type clientKey struct{}

// WithClient is ctx carrying the id of the client a driver connects for; the engine passes it to
// Connect, and a driver that dials again later (a connection per message, a redial) keeps it on
// the context it dials with. The local runner's dial reads it to know which device each
// connection belongs to: a device that reconnects is one radio (docs/energy.md).
func WithClient(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, clientKey{}, id)
}

// ClientOf is the client id WithClient put on ctx ("" if none).
func ClientOf(ctx context.Context) string {
	id, _ := ctx.Value(clientKey{}).(string)
	return id
}

// ForClient is dial with every connection's context carrying id (WithClient): for a client
// library that dials with contexts of its own (franz-go).
func ForClient(dial DialFunc, id string) DialFunc {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		return dial(WithClient(ctx, id), network, address)
	}
}
