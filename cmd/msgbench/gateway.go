package main

import (
	"crypto/tls"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/msgbench/msgbench/gateway"
	_ "github.com/msgbench/msgbench/gateway/all" // every gateway mode
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/metricserver"
	"github.com/msgbench/msgbench/internal/proc"
	"github.com/msgbench/msgbench/loadgen"
	"github.com/msgbench/msgbench/plan"
)

type gatewayFlags struct {
	in                                      planInput
	mode, listen, broker, certFile, keyFile string
	brokerCA, clientCA, metrics             string
}

func newGatewayCommand() *cobra.Command {
	var f gatewayFlags
	cmd := &cobra.Command{
		Use:   "gateway --mode MODE --listen HOST:PORT --broker HOST:PORT [-f FILE | --plan FILE]",
		Short: "Run a protocol gateway (MQTT-SN, HTTP, MQTT over QUIC) in front of an MQTT broker",
		Long: `Bridges clients of another protocol to an MQTT broker, as the operator's gateway pods and
'msgbench run' do. Settings the gateway needs (MQTT-SN gateway mode and topics, HTTP version,
MQTT version) come from the run's compiled plan given with --plan (how the operator's gateway
pods run it), from a manifest given with -f (compiled here), or defaults for the mode without
either.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runGateway(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.mode, "mode", "", fmt.Sprintf("gateway to run: %v", gateway.Modes()))
	fl.StringVar(&f.listen, "listen", "", "host:port to serve on")
	fl.StringVar(&f.broker, "broker", "", "MQTT broker host:port to bridge to")
	f.in.flags(fl, "with the gateway's settings (without -f or --plan: the mode's defaults)")
	fl.StringVar(&f.certFile, "tls-cert", "", "PEM server certificate (HTTPS, QUIC)")
	fl.StringVar(&f.keyFile, "tls-key", "", "PEM server key (HTTPS, QUIC)")
	fl.StringVar(&f.clientCA, "client-ca", "", "PEM CA certificate of the devices' client certificates (spec.tls.clientCertificates): require each client's certificate and verify it with this CA (with --tls-cert)")
	fl.StringVar(&f.brokerCA, "broker-ca", "", "PEM CA certificate: connect to the broker over TLS and verify it with this CA")
	fl.StringVar(&f.metrics, "metrics", "", "serve the gateway's Prometheus metrics and its own CPU and memory (/metrics, /usage) on HOST:PORT")
	for _, name := range []string{"mode", "listen", "broker"} {
		_ = cmd.MarkFlagRequired(name)
	}
	return cmd
}

func runGateway(cmd *cobra.Command, f gatewayFlags) error {
	p, err := gatewayPlan(f)
	if err != nil {
		return err
	}
	served := p.GatewayGroups(f.mode)
	if len(served) == 0 {
		return fmt.Errorf("--mode %s: no group of the plan reaches the broker through a %s gateway", f.mode, f.mode)
	}
	o := gateway.Options{Listen: f.listen, Broker: f.broker, Groups: served,
		Logf: func(format string, args ...any) { fmt.Fprintf(cmd.ErrOrStderr(), format+"\n", args...) }}
	if f.certFile != "" || f.keyFile != "" {
		cert, err := os.ReadFile(f.certFile)
		if err != nil {
			return fmt.Errorf("--tls-cert: %w", err)
		}
		key, err := os.ReadFile(f.keyFile)
		if err != nil {
			return fmt.Errorf("--tls-key: %w", err)
		}
		if o.TLS, err = (&certs.Bundle{ServerCert: cert, ServerKey: key}).ServerTLS(); err != nil {
			return err
		}
	}
	if f.clientCA != "" {
		if o.TLS == nil {
			return fmt.Errorf("--client-ca: the gateway verifies client certificates only when it serves TLS (--tls-cert, --tls-key)")
		}
		ca, err := os.ReadFile(f.clientCA)
		if err != nil {
			return fmt.Errorf("--client-ca: %w", err)
		}
		pool, err := certs.CertPool(ca)
		if err != nil {
			return fmt.Errorf("--client-ca: %w", err)
		}
		o.TLS.ClientAuth, o.TLS.ClientCAs = tls.RequireAndVerifyClientCert, pool
	}
	if f.brokerCA != "" {
		ca, err := os.ReadFile(f.brokerCA)
		if err != nil {
			return fmt.Errorf("--broker-ca: %w", err)
		}
		if o.BrokerTLS, err = clientTLS(true, served[0].TLSVersion, f.broker, "", ""); err != nil {
			return err
		}
		if o.BrokerTLS.RootCAs, err = certs.CertPool(ca); err != nil {
			return fmt.Errorf("--broker-ca: %w", err)
		}
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	gw, err := gateway.Start(ctx, f.mode, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "msgbench gateway %s: serving on %s, bridging to %s\n", f.mode, gw.Addr(), f.broker)
	if f.metrics != "" {
		srv, err := metricserver.Listen(f.metrics)
		if err != nil {
			_ = gw.Close()
			return fmt.Errorf("--metrics: %w", err)
		}
		defer srv.Close()
		labels := loadgen.LabelsOf(p, 0)
		sampler := proc.NewSampler(ctx, proc.Own, proc.SampleInterval, proc.SampleKeep)
		srv.Registry.MustRegister(gateway.NewCollector(gw, labels.Component("gateway")), proc.NewCollector(sampler.Now, labels.Component("gateway")))
		srv.Handle("/usage", proc.UsageHandler(sampler))
	}
	select {
	case <-ctx.Done():
		return gw.Close()
	case <-gw.Done():
		return gw.Err()
	}
}

// gatewayPlan is the run's plan the gateway serves: --plan as given (compiled by the operator or
// `msgbench run`), the -f manifest compiled here, or, without either, a defaulted manifest of the
// mode's protocol.
func gatewayPlan(f gatewayFlags) (*plan.Plan, error) {
	in := f.in
	protocol := map[string]string{"http": "http", "quic": "mqtt-quic"}[f.mode]
	if protocol == "" {
		protocol = f.mode
	}
	in.standIn = fmt.Sprintf("apiVersion: msgbench.io/v1alpha1\nkind: MessagingBenchmark\nmetadata: {name: gateway}\nspec: {protocol: %s}\n", protocol)
	in.standInName = "--mode " + f.mode
	return in.read()
}
