package localrun

import (
	"context"
	"fmt"
	"strings"

	"github.com/msgbench/msgbench/gateway"
	"github.com/msgbench/msgbench/internal/devicetls"
	"github.com/msgbench/msgbench/loadgen"
)

// startGateway starts, in-process on the server side of the link, the gateway of each mode the
// plan's groups reach the broker through (one serving all the groups of its mode), and gives each
// group the address its clients connect to: its gateway's, the broker's WebSocket listener or the
// broker's own (r.endpoints, where it differs from r.address, the first group's).
func (r *runner) startGateway(ctx context.Context) error {
	modes := r.plan.GatewayModes()
	at := map[string]string{}
	var names []string
	for _, mode := range modes {
		addr, err := r.startGatewayOf(ctx, mode, len(modes) > 1)
		if err != nil {
			return err
		}
		at[mode] = addr
		names = append(names, mode)
	}
	if len(modes) > 0 {
		r.env.Gateway = "msgbench " + strings.Join(names, ", ") + " gateway (in-process)"
	}
	if ext := r.plan.ExternalGateway(); ext != "" {
		r.env.Gateway = "external at " + ext
		if r.spec.HTTP.Endpoint != nil {
			r.env.Gateway = "HTTP endpoint of your own at " + ext + " (spec.http.endpoint)"
		}
		if err := r.externalGatewayTLS(ext); err != nil {
			return err
		}
	}
	for i, g := range r.plan.Groups {
		addr := r.brokerMQTT
		switch {
		case g.ExternalGateway != "":
			addr = g.ExternalGateway
		case g.Gateway != "":
			addr = at[g.Gateway]
		case g.MQTT != nil && g.MQTT.WebSocket && r.brokerWS != "":
			addr = r.brokerWS
		}
		if i == 0 {
			r.address = addr
			continue
		}
		if addr != r.address {
			if r.endpoints == nil {
				r.endpoints = map[string]string{}
			}
			r.endpoints[g.Name] = addr
		}
	}
	return nil
}

// startGatewayOf starts the gateway of mode for the groups of that mode and returns its address.
// Several gateways' metrics carry their mode in the component (gateway-mqtt-sn).
func (r *runner) startGatewayOf(ctx context.Context, mode string, several bool) (string, error) {
	groups := r.plan.GatewayGroups(mode)
	o := gateway.Options{
		Listen: hostPort(r.net.serverHost, 0), Broker: r.brokerMQTT, Groups: groups,
		ListenTCP: r.net.listenTCP, ListenUDP: r.net.listenUDP, DialBroker: r.net.serverDial, Logf: r.o.Logf,
	}
	secure := groups[0].GatewayTLS
	if secure {
		cfg, err := r.serverTLS()
		if err != nil {
			return "", err
		}
		if err := r.clientCerts.requireClientCerts(cfg); err != nil {
			return "", err
		}
		o.TLS = cfg
	}
	gw, err := gateway.Start(ctx, mode, o)
	if err != nil {
		return "", fmt.Errorf("%s gateway: %w", mode, err)
	}
	r.onTeardown(func() { _ = gw.Close() })
	component := "gateway"
	if several {
		component += "-" + mode
	}
	r.register(gateway.NewCollector(gw, loadgen.LabelsOf(r.plan, 0).Component(component)), true)
	addr := gw.Addr().String()
	if secure {
		cfg, err := devicetls.Client(r.bundle.CACert, hostOf(addr), groups[0].TLSVersion, groups[0].TLS.Offer)
		if err != nil {
			return "", err
		}
		r.clientTLS = cfg
	}
	how := ""
	if secure && r.clientCerts != nil {
		how = " (requiring each device's certificate, verified with the devices' CA)"
	}
	r.logf("gateway: %s on %s%s, bridging to %s", mode, addr, how, r.brokerMQTT)
	return addr, nil
}

// externalGatewayTLS is the clients' TLS toward an external gateway that serves TLS (QUIC always
// does; HTTPS with spec.tls): verified against the system's roots (SSL_CERT_FILE adds a private
// CA), as msgbench holds no key of that server (docs/gateways.md).
func (r *runner) externalGatewayTLS(addr string) error {
	for _, g := range r.plan.Groups {
		if g.ExternalGateway == "" || !g.GatewayTLS || r.clientTLS != nil {
			continue
		}
		cfg, err := devicetls.Client(nil, hostOf(addr), g.TLSVersion, g.TLS.Offer)
		if err != nil {
			return err
		}
		r.clientTLS = cfg
	}
	return nil
}
