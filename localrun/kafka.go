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
		Host: r.net.serverHost, TLS: r.plan.Broker.TLS, TLSVersion: r.plan.Broker.TLSVersion,
		Extra: r.spec.Broker.Config, Start: r.net.start, Dial: r.net.serverDial,
		Listen: func(ctx context.Context, network, address string) (net.Listener, error) {
			return r.net.listenTCP(ctx, address)
		},
	})
	if err != nil {
		return err
	}
	r.adopt(p, "kafka "+p.Version+" (single-node KRaft)", p.Addr, p.TLSAddr, p.CA)
	return nil
}
