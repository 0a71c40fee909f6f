package quicconn

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/certs/certstest"
)

// TestRefusedConnectionsAreExplained fills a real quic-go server's accept queue (nobody calls
// Accept) and checks that the refusals that follow reach the caller with the explanation, as
// they do when a gateway takes new connections faster than its CPU serves them.
func TestRefusedConnectionsAreExplained(t *testing.T) {
	b, serverTLS := certstest.Loopback(t)
	serverTLS.NextProtos = []string{"test"}
	ln, err := quic.ListenAddr("127.0.0.1:0", serverTLS, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	clientTLS, err := certs.ClientTLS(b.CACert, "127.0.0.1", "1.3")
	if err != nil {
		t.Fatal(err)
	}
	clientTLS.NextProtos = []string{"test"}
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, address)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var conns []*Conn
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	refused := 0
	for i := 0; i < 40 && refused == 0; i++ {
		c, err := Dial(ctx, dial, ln.Addr().String(), clientTLS, nil, false)
		if err != nil {
			refused++
			if !strings.Contains(err.Error(), "CONNECTION_REFUSED") || !strings.Contains(err.Error(), "queue of handshaken connections") {
				t.Fatalf("connection %d: %v; want CONNECTION_REFUSED with the explanation", i, err)
			}
			continue
		}
		conns = append(conns, c)
	}
	// A refusal can also arrive just after the client's handshake completed.
	deadline := time.Now().Add(5 * time.Second)
	for refused == 0 && time.Now().Before(deadline) {
		for _, c := range conns {
			if err := context.Cause(c.Context()); err != nil {
				if msg := ExplainRefused(err).Error(); !strings.Contains(msg, "queue of handshaken connections") {
					t.Fatalf("closed with %q; want CONNECTION_REFUSED explained", msg)
				}
				refused++
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if refused == 0 {
		t.Fatalf("%d connections to a server that accepts none, none refused; quic-go's accept queue is 32", len(conns))
	}
	if other := ExplainRefused(context.Canceled); other.Error() != context.Canceled.Error() {
		t.Errorf("ExplainRefused changed an unrelated error: %v", other)
	}
}
