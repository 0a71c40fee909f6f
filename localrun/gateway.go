package localrun

import (
	"context"
	"fmt"

	"github.com/msgbench/msgbench/gateway"
	"github.com/msgbench/msgbench/internal/devicetls"
	"github.com/msgbench/msgbench/loadgen"
)

// startGateway starts the protocol's gateway in-process, on the server side of the link.
func (r *runner) startGateway(ctx context.Context) error {
	mode := r.spec.GatewayMode()
	if mode == "" {
		return nil
	}
	o := gateway.Options{
		Listen: hostPort(r.net.serverHost, 0), Broker: r.broker, Spec: r.spec,
		ListenTCP: r.net.listenTCP, ListenUDP: r.net.listenUDP, DialBroker: r.net.serverDial, Logf: r.o.Logf,
	}
	if r.spec.GatewayTLS() {
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
	if r.spec.GatewayTLS() {
		cfg, err := devicetls.Client(r.bundle.CACert, hostOf(r.address), r.spec)
		if err != nil {
			return err
		}
		r.clientTLS = cfg
	}
	r.logf("gateway: %s on %s, bridging to %s", mode, r.address, r.broker)
	return nil
}
