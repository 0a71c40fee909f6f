package localrun

import (
	"context"
	"net"

	"github.com/msgbench/msgbench/brokers/kafka"
)

// startKafka starts a single-node KRaft Kafka from the jars hack/kafka.sh fetched, on the
// server side of the link.
func (r *runner) startKafka(ctx context.Context) error {
	p, err := kafka.Start(ctx, kafka.Options{
		Host: r.net.serverHost, TLS: r.spec.BrokerTLS(), TLSVersion: r.spec.ClientTLSVersion(),
		Extra: r.spec.Broker.Config, Start: r.net.start, Dial: r.net.serverDial,
		Listen: func(ctx context.Context, network, address string) (net.Listener, error) {
			return r.net.listenTCP(ctx, address)
		},
	})
	if err != nil {
		return err
	}
	r.onTeardown(func() { _ = p.Stop() })
	r.broker, r.brokerCA = p.Addr, p.CA
	if r.spec.BrokerTLS() {
		r.broker = p.TLSAddr
	}
	r.usage = p.Usage
	r.env.Broker = "kafka " + p.Version + " (single-node KRaft)"
	r.logf("broker: kafka %s on %s (pid %d)", p.Version, r.broker, p.PID())
	return nil
}
