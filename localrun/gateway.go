package localrun

import (
	"context"
	"fmt"

	"github.com/msgbench/msgbench/gateway"
	"github.com/msgbench/msgbench/internal/devicetls"
	"github.com/msgbench/msgbench/loadgen"
)

// startGateway starts the gateway the plan's groups reach the broker through in-process, on the
// server side of the link, serving the plan's groups of its mode. A local run gives its clients
// one address, so one gateway: the first group's.
func (r *runner) startGateway(ctx context.Context) error {
	mode := r.plan.Groups[0].Gateway
	if mode == "" {
		return nil
	}
	groups := r.plan.GatewayGroups(mode)
	o := gateway.Options{
		Listen: hostPort(r.net.serverHost, 0), Broker: r.broker, Groups: groups,
		ListenTCP: r.net.listenTCP, ListenUDP: r.net.listenUDP, DialBroker: r.net.serverDial, Logf: r.o.Logf,
	}
	secure := groups[0].GatewayTLS
	if secure {
		cfg, err := r.serverTLS()
		if err != nil {
			return err
		}
		o.TLS = cfg
	}
	gw, err := gateway.Start(ctx, mode, o)
	if err != nil {
		return fmt.Errorf("%s gateway: %w", mode, err)
	}
	r.onTeardown(func() { _ = gw.Close() })
	r.register(gateway.NewCollector(gw, loadgen.LabelsOf(r.plan, 0).Component("gateway")), true)
	r.address = gw.Addr().String()
	r.env.Gateway = "msgbench " + mode + " gateway (in-process)"
	if secure {
		cfg, err := devicetls.Client(r.bundle.CACert, hostOf(r.address), r.plan.Groups[0].TLSVersion, r.plan.Groups[0].TLS.Offer)
		if err != nil {
			return err
		}
		r.clientTLS = cfg
	}
	r.logf("gateway: %s on %s, bridging to %s", mode, r.address, r.broker)
	return nil
}
