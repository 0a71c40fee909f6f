package localrun

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/msgbench/msgbench/brokers/kafka"
)

// startKafka starts a single-node KRaft Kafka from the jars hack/kafka.sh fetched, on the
// server side of the link.
//
// When the devices show credentials (spec.identity), it gets a SASL listener (SASL_SSL with
// TLS, SASL_PLAINTEXT without) that knows each device's user, and the clients connect there.
func (r *runner) startKafka(ctx context.Context) error {
	users, err := r.kafkaUsers()
	if err != nil {
		return err
	}
	p, err := kafka.Start(ctx, kafka.Options{
		Host: r.net.serverHost, TLS: r.plan.Broker.TLS, TLSVersion: r.plan.Broker.TLSVersion,
		Extra: r.spec.Broker.Config, Start: r.net.start, Dial: r.net.serverDial, SASL: users,
		Listen: func(ctx context.Context, network, address string) (net.Listener, error) {
			return r.net.listenTCP(ctx, address)
		},
	})
	if err != nil {
		return err
	}
	if users != nil {
		r.adopt(p, fmt.Sprintf("kafka %s (single-node KRaft, SASL %s, %d users)", p.Version, strings.Join(users.Mechanisms, ","), len(users.Users)), p.SASLAddr, p.SASLAddr, p.CA)
		return nil
	}
	r.adopt(p, "kafka "+p.Version+" (single-node KRaft)", p.Addr, p.TLSAddr, p.CA)
	return nil
}
