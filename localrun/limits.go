package localrun

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/internal/fleetlimits"
	"github.com/msgbench/msgbench/plan"
)

// checkLimits works out, before anything starts, the open files, ephemeral ports and memory
// every process of the run needs (msgbench with its in-process workers and gateway, worker
// processes, the broker) and refuses a run that cannot fit (internal/fleetlimits). It first raises
// the soft open-files limit to the hard one, so that the broker and worker processes msgbench
// starts inherit it.
func checkLimits(spec *v1alpha1.MessagingBenchmarkSpec, p *plan.Plan, o Options) error {
	_, _ = fleetlimits.Raise() // cannot fail but for a broken kernel; Read tells what is in force
	m, err := fleetlimits.Read()
	if err != nil {
		return fmt.Errorf("reading this machine's limits: %w", err)
	}
	return fleetlimits.Check(limitsInput(spec, p, o), m)
}

// logLimits logs what the run's processes need against the limits.
func (r *runner) logLimits() {
	if r.o.Logf == nil {
		return
	}
	if m, err := fleetlimits.Read(); err == nil {
		r.logf("limits: %s", fleetlimits.Summary(limitsInput(r.spec, r.plan, r.o), m))
	}
}

// limitsInput describes the run to fleetlimits as the runner will start it.
func limitsInput(spec *v1alpha1.MessagingBenchmarkSpec, p *plan.Plan, o Options) fleetlimits.Input {
	embedded := false
	if t := spec.Broker.Type; (t == v1alpha1.BrokerMosquitto || t == "") && !o.NoEmbedded {
		_, err := mosquitto.Binary()
		embedded = err != nil
	}
	return fleetlimits.Input{
		Spec: spec, Plan: p, WorkerProcesses: workerProcesses, EmbeddedBroker: embedded,
		// The clients use the default dialer, which spreads over 127.0.0.0/8, on the host's
		// loopback only: over an emulated link or in an isolated namespace they dial there.
		SpreadSources: !spec.Impaired() && !bindsEveryAddress(spec) && loopbackTarget(spec, p),
	}
}

// loopbackTarget reports whether the clients connect to an IPv4 loopback address: a broker or
// gateway the run starts, or an external broker given as such an address.
func loopbackTarget(spec *v1alpha1.MessagingBenchmarkSpec, p *plan.Plan) bool {
	if spec.Broker.Type != v1alpha1.BrokerExternal || !p.DirectToBroker() {
		return true
	}
	host, _, err := net.SplitHostPort(spec.Broker.External.Address)
	if err != nil {
		return false
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Is4() && a.IsLoopback()
}
