package quic

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/quic-go/quic-go"

	"github.com/msgbench/msgbench/gateway"
)

// copyBuffer bounds what one direction of a session holds: one buffer, reused.
const copyBuffer = 32 << 10

// bridge runs one session: the client's first bidirectional stream is copied byte for byte to a
// new TCP connection to the broker and back, until either side ends.
func bridge(ctx context.Context, o gateway.Options, c *quic.Conn) error {
	// The stream is waited for as long as QUIC keeps an idle connection: on a loaded NB-IoT
	// link (30 kbit/s down, 2 % loss) a client's first stream frame can queue behind other
	// sessions' data for well over 30 s, the limit this once had, which failed healthy clients
	// with "no stream". A client that sends nothing at all is closed by the idle timeout.
	actx, cancel := context.WithTimeout(ctx, ServerConfig(o).MaxIdleTimeout)
	s, err := c.AcceptStream(actx)
	cancel()
	if err != nil {
		_ = c.CloseWithError(2, "no stream")
		return fmt.Errorf("waiting for the MQTT stream: %w", err)
	}
	broker, err := dialBroker(ctx, o)
	if err != nil {
		// Tell the client why: it sees a connection error instead of a silent timeout.
		_ = c.CloseWithError(3, "broker unreachable")
		return err
	}
	errs := make(chan error, 2)
	go func() { // client → broker
		_, err := io.CopyBuffer(broker, s, make([]byte, copyBuffer))
		if cw, ok := broker.(interface{ CloseWrite() error }); ok && err == nil {
			_ = cw.CloseWrite()
		}
		errs <- err
	}()
	go func() { // broker → client
		_, err := io.CopyBuffer(s, broker, make([]byte, copyBuffer))
		_ = s.Close()
		errs <- err
	}()
	var first error
	select {
	case first = <-errs:
	case <-ctx.Done():
	}
	// Either side ending ends the session: close both, then wait for the other copy.
	_ = broker.Close()
	s.CancelRead(0)
	_ = c.CloseWithError(0, "")
	if second := <-errs; first == nil {
		first = second
	}
	if first != nil && !isClosed(first) {
		return first
	}
	return nil
}

func dialBroker(ctx context.Context, o gateway.Options) (net.Conn, error) {
	raw, err := o.DialBrokerOrDefault(ctx)
	if err != nil {
		return nil, fmt.Errorf("broker %s: %w", o.Broker, err)
	}
	if o.BrokerTLS == nil {
		return raw, nil
	}
	tc := tls.Client(raw, o.BrokerTLS)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = raw.Close()
		return nil, fmt.Errorf("broker %s: TLS: %w", o.Broker, err)
	}
	return tc, nil
}

func isClosed(err error) bool {
	var app *quic.ApplicationError
	var idle *quic.IdleTimeoutError
	return errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) || errors.As(err, &app) || errors.As(err, &idle)
}
