package main

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/devicetls"
	"github.com/msgbench/msgbench/internal/metricserver"
	"github.com/msgbench/msgbench/internal/proc"
	"github.com/msgbench/msgbench/internal/version"
	"github.com/msgbench/msgbench/loadgen"
	"github.com/msgbench/msgbench/loadgen/control"
	_ "github.com/msgbench/msgbench/loadgen/drivers/all" // every protocol driver
	"github.com/msgbench/msgbench/plan"
	"github.com/msgbench/msgbench/results"
)

type loadgenFlags struct {
	in                                     planInput
	broker, out, caFile, serverName, runID string
	clientCA, clientCAKey                  string
	endpoints                              map[string]string
	credentials                            map[string]string
	groups                                 []string
	cpuProfile, control                    string
	metrics, brokerUsage, gatewayUsage     string
	metricsWait                            time.Duration
	hold                                   time.Duration
	worker, workers, brokerPID, controlFD  int
	json                                   bool
}

func newLoadgenCommand() *cobra.Command {
	var f loadgenFlags
	cmd := &cobra.Command{
		Use:   "loadgen (-f FILE | --plan plan.json) --broker HOST:PORT [--out result.json]",
		Short: "Run a manifest's workload as one load-generator worker against a running broker",
		Long: `Runs the publishers and subscribers of a MessagingBenchmark manifest (this worker's share of
them) against a broker or gateway that is already running, and writes the result document.
The operator's worker pods and 'msgbench run' use this; run it by hand against your own broker.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runLoadgen(cmd, f) },
	}
	fl := cmd.Flags()
	f.in.flags(fl, "whose workload to run")
	fl.StringVar(&f.broker, "broker", "", "host:port the clients connect to (broker or gateway)")
	fl.StringSliceVar(&f.groups, "groups", nil, "GROUP,...: run only these device groups (a run's groups spread over several workers, as on Kubernetes: one pod per link); default every group")
	fl.StringToStringVar(&f.credentials, "credentials", nil, "GROUP=FILE: the file listing device group GROUP's credentials (clientId,username,password lines; spec.identity.credentials); a group whose credentials are a Secret's is read from $MSGBENCH_CREDENTIALS_DIR/SECRET/credentials.csv by default (/etc/msgbench/credentials, where the operator mounts it); repeatable")
	fl.StringToStringVar(&f.endpoints, "endpoint", nil, "GROUP=HOST:PORT: where the clients of device group GROUP connect instead of --broker (its gateway, the broker's WebSocket listener); repeatable")
	fl.StringVar(&f.out, "out", "", "write the result JSON to this file")
	fl.IntVar(&f.worker, "worker-index", envInt("JOB_COMPLETION_INDEX", 0), "this worker's index (an Indexed Job sets JOB_COMPLETION_INDEX)")
	fl.IntVar(&f.workers, "workers", 0, "number of workers (default spec.workers.replicas)")
	fl.StringVar(&f.caFile, "ca", "", "PEM CA certificate to verify the broker's TLS certificate (default: system roots)")
	fl.StringVar(&f.clientCA, "client-ca", "", "PEM CA certificate that signs each device's client certificate (spec.tls.clientCertificates; with --client-ca-key)")
	fl.StringVar(&f.clientCAKey, "client-ca-key", "", "PEM private key of --client-ca")
	fl.StringVar(&f.serverName, "server-name", "", "TLS server name (default: the host of --broker)")
	fl.StringVar(&f.runID, "run-id", "", "token that makes client ids unique per run (default: random)")
	fl.BoolVar(&f.json, "json", false, "also print the result JSON on stdout")
	fl.StringVar(&f.control, "control", "", "serve the operator's control protocol on this address (token from $MSGBENCH_CONTROL_TOKEN): wait for its start signal, keep the result until it is collected")
	fl.IntVar(&f.controlFD, "control-fd", 0, "serve the control protocol on the listening socket inherited as this file descriptor (how `msgbench run` starts its worker processes; token from $MSGBENCH_CONTROL_TOKEN)")
	fl.DurationVar(&f.hold, "hold", 30*time.Minute, "with --control: how long to keep the result for the operator before exiting anyway")
	fl.StringVar(&f.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the run to this file (for msgbench developers)")
	fl.StringVar(&f.metrics, "metrics", "", "serve live Prometheus metrics on HOST:PORT/metrics while it runs")
	fl.DurationVar(&f.metricsWait, "metrics-wait", 0, "with --metrics: once the result is out, wait at most this long for a scrape of the final values")
	fl.StringVar(&f.brokerUsage, "broker-usage", "", "URL of the broker's usage endpoint (`msgbench usage`): its CPU and peak RSS go into the result")
	fl.StringVar(&f.gatewayUsage, "gateway-usage", "", "URL of the gateway's usage endpoint (`msgbench gateway --metrics`)")
	fl.IntVar(&f.brokerPID, "broker-pid", 0, "PID of a local broker process: its CPU time and peak RSS go into the result")
	_ = cmd.MarkFlagRequired("broker")
	return cmd
}

func runLoadgen(cmd *cobra.Command, f loadgenFlags) error {
	p, err := f.in.read()
	if err != nil {
		return err
	}
	if f.out != "" {
		// Found unwritable now, not after the run.
		if err := checkWritable(f.out); err != nil {
			return fmt.Errorf("--out %s: %w", f.out, err)
		}
	}
	if err := checkEndpoints(p, f.endpoints); err != nil {
		return err
	}
	g := &p.Groups[0]
	tlsCfg, err := clientTLS(g.DialsTLS(p.Broker), g.TLSVersion, f.broker, f.caFile, f.serverName)
	if err != nil {
		return err
	}
	if err := devicetls.Apply(tlsCfg, g.TLS.Offer); err != nil { // the device's groups and suites
		return err
	}
	issuer, err := deviceIssuer(p.Source, f.clientCA, f.clientCAKey)
	if err != nil {
		return err
	}
	if f.cpuProfile != "" {
		pf, err := os.Create(f.cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var ctl *control.Server
	if f.control != "" || f.controlFD > 0 {
		token := os.Getenv("MSGBENCH_CONTROL_TOKEN")
		if token == "" {
			return fmt.Errorf("--control needs the control token in $MSGBENCH_CONTROL_TOKEN")
		}
		ctl = control.NewServer(token)
		ln, err := controlListener(f.control, f.controlFD)
		if err != nil {
			return err
		}
		srv := &http.Server{Handler: ctl.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
	}
	var brokerUsage, gatewayUsage func() (proc.Usage, error)
	switch {
	case f.brokerPID > 0:
		brokerUsage = func() (proc.Usage, error) { return proc.Of(f.brokerPID) }
	case f.brokerUsage != "":
		brokerUsage = proc.Fetch(f.brokerUsage, 15*time.Second)
	}
	if f.gatewayUsage != "" {
		gatewayUsage = proc.Fetch(f.gatewayUsage, 15*time.Second)
	}
	monitor := &loadgen.Monitor{}
	if ctl != nil {
		// The control protocol's GET /metrics: how `msgbench run --metrics` shows its worker
		// processes' metrics.
		reg := prometheus.NewRegistry()
		labels := loadgen.LabelsOf(p, f.worker)
		reg.MustRegister(loadgen.NewCollector(monitor, labels), proc.NewCollector(proc.Own, labels.Component("loadgen")))
		ctl.ServeMetrics(reg)
	}
	if f.metrics != "" {
		srv, err := metricserver.Listen(f.metrics)
		if err != nil {
			return fmt.Errorf("--metrics: %w", err)
		}
		defer srv.Close()
		labels := loadgen.LabelsOf(p, f.worker)
		srv.Registry.MustRegister(loadgen.NewCollector(monitor, labels), proc.NewCollector(proc.Own, labels.Component("loadgen")))
		defer finalScrape(ctx, srv, f.metricsWait, cmd.ErrOrStderr())
	}
	creds, err := readCredentials(p, f.credentials)
	if err != nil {
		return err
	}
	o := loadgen.Options{
		BrokerUsage: brokerUsage, GatewayUsage: gatewayUsage, Monitor: monitor,
		Name: p.Benchmark.Name, Plan: p, Worker: f.worker, Workers: f.workers, RunID: f.runID,
		Address: f.broker, Endpoints: f.endpoints, Groups: f.groups, TLS: tlsCfg, ClientCerts: issuer, Credentials: creds,
		Environment: results.Environment{Mode: "local", MsgbenchVersion: version.Version, Broker: "at " + f.broker},
		Logf:        func(format string, args ...any) { fmt.Fprintf(cmd.ErrOrStderr(), format+"\n", args...) },
	}
	// msgbench run's emulator sees its worker processes' packets and accounts their radios;
	// a worker pod, or msgbench loadgen on its own, accounts them from its sockets.
	o.AccountRadio = ctl == nil || f.controlFD == 0
	if ctl == nil {
		res, err := loadgen.Run(ctx, o)
		if err != nil {
			return err
		}
		return emitResult(cmd, res, f.out, f.json)
	}
	// A worker pod, or a local run's worker process: start on the operator's (or msgbench
	// run's) signal, then keep the result until it is collected.
	if f.controlFD == 0 {
		o.Environment.Mode = "kubernetes"
	}
	res, runErr := ctl.Run(ctx, o, func(format string, args ...any) {
		fmt.Fprintf(cmd.ErrOrStderr(), "msgbench loadgen: "+format+"\n", args...)
	})
	var outErr error
	if runErr == nil {
		outErr = emitResult(cmd, res, f.out, f.json)
	}
	select {
	case <-ctl.Exited():
	case <-ctx.Done():
	case <-time.After(f.hold):
		fmt.Fprintln(cmd.ErrOrStderr(), "msgbench loadgen: nobody collected the result within --hold; exiting")
	}
	if runErr != nil {
		return runErr
	}
	return outErr
}

// checkEndpoints refuses an --endpoint naming no device group of the plan: a misspelt group
// would otherwise be ignored, its clients connecting to --broker.
func checkEndpoints(p *plan.Plan, endpoints map[string]string) error {
	var names []string
	for _, g := range p.Groups {
		if g.Fleet != nil {
			names = append(names, g.Name)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(endpoints)) {
		if !slices.Contains(names, n) {
			if len(names) == 0 {
				return fmt.Errorf("--endpoint %s=%s: the benchmark has no device groups (spec.groups); its clients connect to --broker", n, endpoints[n])
			}
			return fmt.Errorf("--endpoint %s=%s: no device group %q (the benchmark has %s)", n, endpoints[n], n, strings.Join(names, ", "))
		}
	}
	return nil
}

// controlListener is the control protocol's socket: one it opens on addr (a worker pod), or the
// one `msgbench run` opened and handed down as file descriptor fd, so that it can reach its
// worker processes wherever their clients' network namespace is.
func controlListener(addr string, fd int) (net.Listener, error) {
	if fd > 0 {
		if addr != "" {
			return nil, fmt.Errorf("--control and --control-fd: give one")
		}
		f := os.NewFile(uintptr(fd), "control")
		defer f.Close() // FileListener holds its own copy
		ln, err := net.FileListener(f)
		if err != nil {
			return nil, fmt.Errorf("--control-fd %d: not a listening socket: %w", fd, err)
		}
		return ln, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--control: %w", err)
	}
	return ln, nil
}

// emitResult writes the result file, the summary and, with asJSON, the JSON; it fails when the
// run failed, so scripts see a non-zero exit.
func emitResult(cmd *cobra.Command, res *results.Result, out string, asJSON bool) error {
	if out != "" {
		if err := res.WriteFile(out); err != nil {
			return err
		}
	}
	if asJSON {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else if err := results.WriteSummary(cmd.OutOrStdout(), res); err != nil {
		return err
	}
	if res.Phase != "Succeeded" {
		return fmt.Errorf("benchmark %s failed: %s", res.Name, res.Message)
	}
	if res.ObjectivesMet != nil && !*res.ObjectivesMet {
		return fmt.Errorf("benchmark %s measured correctly but missed its objectives: %s", res.Name, results.MissedObjectives(res.Objectives))
	}
	return nil
}

// clientTLS builds the clients' TLS configuration for spec.tls.
func clientTLS(enabled bool, version, address, caFile, serverName string) (*tls.Config, error) {
	if !enabled {
		return nil, nil
	}
	if serverName == "" {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return nil, fmt.Errorf("--broker %q: %w", address, err)
		}
		serverName = host
	}
	var caPEM []byte
	if caFile != "" {
		var err error
		if caPEM, err = os.ReadFile(caFile); err != nil {
			return nil, fmt.Errorf("--ca: %w", err)
		}
	}
	return certs.ClientTLS(caPEM, serverName, version)
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

// readCredentials reads the listed credentials of the plan's groups: --credentials GROUP=FILE,
// else a Secret's file where the operator mounts it. Their content goes nowhere but the clients'
// CONNECTs.
func readCredentials(p *plan.Plan, files map[string]string) (map[string]plan.Credentials, error) {
	creds := map[string]plan.Credentials{}
	for _, g := range p.Groups {
		if !g.Identity.Listed() {
			if f, ok := files[g.Name]; ok {
				return nil, fmt.Errorf("--credentials %s=%s: group %s's credentials are not listed (spec.identity.credentials)", g.Name, f, g.Name)
			}
			continue
		}
		f, ok := files[g.Name]
		if !ok && g.Identity.CredentialsSecret != "" {
			dir := os.Getenv("MSGBENCH_CREDENTIALS_DIR")
			if dir == "" {
				dir = resources.CredentialsDir // where the operator mounts each Secret
			}
			f = filepath.Join(dir, g.Identity.CredentialsSecret, plan.CredentialsKey)
		} else if !ok {
			continue // loadgen.Run names the missing list
		}
		fh, err := os.Open(f)
		if err != nil {
			return nil, fmt.Errorf("group %s's credentials: %w", g.Name, err)
		}
		c, err := plan.ReadCredentials(fh, f)
		_ = fh.Close()
		if err != nil {
			return nil, err
		}
		creds[g.Name] = c
	}
	return creds, nil
}

// deviceIssuer reads the devices' CA for spec.tls.clientCertificates (nil without).
func deviceIssuer(spec *v1alpha1.MessagingBenchmarkSpec, caFile, keyFile string) (*certs.Issuer, error) {
	var cc *v1alpha1.ClientCertificatesSpec
	if spec != nil {
		cc = spec.ClientCertificates()
	}
	if cc == nil {
		return nil, nil
	}
	if caFile == "" || keyFile == "" {
		return nil, fmt.Errorf("spec.tls.clientCertificates: give the devices' CA with --client-ca and --client-ca-key")
	}
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("--client-ca: %w", err)
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("--client-ca-key: %w", err)
	}
	return certs.NewIssuer(ca, key, string(cc.KeyType), cc.CommonName)
}
