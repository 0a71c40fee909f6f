// Package localrun runs a whole MessagingBenchmark on one machine — `msgbench run`: the broker
// as a local process (Mosquitto, a local Kafka, or an embedded broker when Mosquitto is not
// installed), the protocol gateway in-process, the user-space link emulator for spec.network,
// and the workers — in-process, or one process each when there are several (workers_process.go) —
// with a synchronized start. It walks the operator's steps with
// processes instead of pods and shares its parts: the spec decisions (v1alpha1), the broker
// configuration (brokers/), the gateways (gateway/), the worker engine (loadgen/) and the exact
// merge (results/). Everything it starts is torn down when Run returns, also on cancellation.
package localrun

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/proc"
	"github.com/msgbench/msgbench/internal/version"
	"github.com/msgbench/msgbench/loadgen"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/plan"
	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/results/complete"
)

// Options of a local run.
type Options struct {
	// NoEmbedded refuses the embedded broker: without Mosquitto the run fails instead.
	NoEmbedded bool
	// BrokerPort pins the local broker's port (0: a free one).
	BrokerPort int
	// Progress receives the run's progress: one updating line on a terminal, log lines otherwise.
	Progress ProgressFunc
	// Logf receives what the runner does (nil: silent).
	Logf func(format string, args ...any)
	// WorkerCommand is the program and leading arguments of a worker process, run as
	// WorkerCommand… loadgen … (default: this executable). Tests that run in a test binary set it
	// to a built msgbench.
	WorkerCommand []string
	// sockets, a test's, receives the merged result as the workers accounted their radios from
	// their sockets (loadgen.Options.AccountRadio, as on Kubernetes), before the emulator's
	// energy takes its place: the two accountings of one run, side by side.
	sockets func(*results.Result)
	// ManifestDir is the folder of the manifest, against which a relative
	// spec.identity.credentials.file is read ("": the working directory).
	ManifestDir string
	// Metrics, when set, gets the run's live metrics: every worker's (kept after the run, with
	// the result's totals), the broker's CPU and memory and the gateway's counters (until they
	// stop).
	Metrics prometheus.Registerer
}

// ProgressFunc is called with the run's state: every 250 ms on a terminal, every few seconds
// otherwise (the caller decides how to show it).
type ProgressFunc func(p Progress)

// Progress is a moment of a run.
type Progress struct {
	Phase                  string
	Elapsed, Total         time.Duration // publishing time so far and planned (0: messages mode)
	Sent, Received, Errors int64
	// RecentPerSecond is the received rate over the last interval.
	RecentPerSecond float64
}

// Run runs mb locally and returns its merged result (Write stores it).
func Run(ctx context.Context, mb *v1alpha1.MessagingBenchmark, o Options) (*results.Result, error) {
	p, cerr := Check(&mb.Spec, o)
	if cerr != nil {
		return nil, cerr
	}
	p.Benchmark = plan.NameOf(mb)
	r := &runner{mb: mb, spec: &mb.Spec, plan: p, o: o, runID: randomHex(3)}
	if r.creds, cerr = loadCredentials(p, o); cerr != nil {
		return nil, cerr
	}
	if r.clientCerts, cerr = loadClientCerts(&mb.Spec, o); cerr != nil {
		return nil, cerr
	}
	r.logLimits()
	if t := p.Timing.Timeout; t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, t, fmt.Errorf("spec.timeout of %s passed", t))
		defer cancel()
	}
	res, err := r.run(ctx)
	if err != nil && context.Cause(ctx) != nil && ctx.Err() == context.DeadlineExceeded {
		err = fmt.Errorf("%w: %w", context.Cause(ctx), err)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// runner holds what one run started, to stop it again.
type runner struct {
	// creds are the groups' listed credentials (spec.identity.credentials.file), by group.
	creds map[string]plan.Credentials
	// runID is the {run} of every worker's client ids and identity patterns: one per run, so
	// that the local Kafka's SASL users are the devices' (kafkaUsers).
	runID string
	// clientCerts is the devices' CA (spec.tls.clientCertificates), nil without.
	clientCerts *clientCerts
	mb          *v1alpha1.MessagingBenchmark
	spec        *v1alpha1.MessagingBenchmarkSpec
	plan        *plan.Plan // the spec compiled (Check): the network resolved once
	o           Options
	// energy attaches each emulated link's devices' energy to the result (energyOf).
	energy []func(*results.Result)
	// groupLinks are the groups' own links (spec.groups[].network): the path's caveats are theirs.
	groupLinks []groupLink

	net      *network
	bundle   *certs.Bundle
	broker   string // host:port the gateway or the clients use
	brokerCA []byte
	// brokerMQTT is the broker's MQTT over TCP (or TLS) listener, what the gateways bridge to;
	// brokerWS its MQTT over WebSocket listener ("" without one).
	brokerMQTT, brokerWS string
	// client side
	address   string // host:port the clients connect to
	clientTLS *tls.Config
	// endpoints are the addresses of the groups whose clients connect elsewhere than address,
	// by group name (a run with device groups on several protocols).
	endpoints map[string]string
	// dials are how the groups with a link of their own dial (from its device namespace).
	dials     map[string]drivers.DialFunc
	env       results.Environment
	usage     func() (proc.Usage, error)
	brokerPID int // a local broker process's, for worker processes (0: none)
	// workerGrace is how long worker processes have to exit before the teardown kills them:
	// none unless they were told to.
	workerGrace time.Duration

	mu       sync.Mutex
	teardown []func()
}

func (r *runner) logf(format string, args ...any) {
	if r.o.Logf != nil {
		r.o.Logf(format, args...)
	}
}

func (r *runner) onTeardown(f func()) {
	r.mu.Lock()
	r.teardown = append(r.teardown, f)
	r.mu.Unlock()
}

func (r *runner) teardownAll() {
	r.mu.Lock()
	fs := r.teardown
	r.teardown = nil
	r.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

func (r *runner) run(ctx context.Context) (*results.Result, error) {
	defer r.teardownAll()
	r.env = results.Environment{Mode: "local", MsgbenchVersion: version.Version}
	r.env.Host, _ = os.Hostname()
	steps := []struct {
		name string
		f    func(context.Context) error
	}{
		{"network", r.startNetwork},
		{"certificates", r.makeCertificates},
		{"broker", r.startBroker},
		{"gateway", r.startGateway},
		{"group links", r.startGroupLinks},
	}
	for _, s := range steps {
		if err := s.f(ctx); err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return r.runWorkers(ctx)
}

// runWorkers runs spec.workers.replicas workers with one start time, as processes when
// workerProcesses says so (workers_process.go) and otherwise in-process, and merges their results
// exactly like the operator does.
func (r *runner) runWorkers(ctx context.Context) (*results.Result, error) {
	if workerProcesses(r.spec) {
		return r.runWorkerProcesses(ctx)
	}
	n := r.plan.Workers
	start := newStartGate(n)
	monitors := make([]*loadgen.Monitor, n)
	parts := make([]*results.Result, n)
	errs := make([]error, n)
	for i := range monitors {
		monitors[i] = &loadgen.Monitor{}
	}
	stopProgress := r.progress(ctx, func() []loadgen.Snapshot {
		s := make([]loadgen.Snapshot, n)
		for i, m := range monitors {
			s[i] = m.Snapshot()
		}
		return s
	})
	defer stopProgress()
	var wg sync.WaitGroup
	if r.usage != nil {
		r.register(proc.NewCollector(r.usage, loadgen.LabelsOf(r.plan, 0).Component("broker")), true)
	}
	r.register(proc.NewCollector(proc.Own, loadgen.LabelsOf(r.plan, 0).Component("loadgen")), true)
	for i := 0; i < n; i++ {
		r.register(loadgen.NewCollector(monitors[i], loadgen.LabelsOf(r.plan, i)), false)
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			parts[i], errs[i] = loadgen.Run(ctx, loadgen.Options{
				Name: r.mb.Name, Plan: r.plan, Worker: i, Workers: n, Credentials: r.creds, RunID: r.runID,
				Address: r.address, Endpoints: r.endpoints, Dials: r.dials, TLS: r.clientTLS, ClientCerts: r.clientCerts.issuerOrNil(), Dial: r.net.dial,
				Ready: start.ready, Start: start.wait,
				BrokerUsage: r.usage, Environment: r.env, Network: r.net.applied(),
				Monitor: monitors[i], AccountRadio: r.o.sockets != nil,
			})
			if errs[i] != nil {
				start.abort(errs[i])
			}
		}(i)
	}
	marks, stopTimeline := r.startTimeline(ctx, start)
	wg.Wait()
	timelineErr := stopTimeline()
	if err := errors.Join(append(errs, timelineErr)...); err != nil {
		return nil, err
	}
	// merged.Environment is r.env as the workers completed it: the machine, the build, the
	// protocol as spoken and the TLS their handshakes negotiated. In-process workers share one
	// process: its CPU was counted by each of them.
	run := r.completion(*marks)
	run.SharedProcess = true
	return complete.Complete(parts, run)
}

// completion is what the run itself measured beside its workers — the network timeline as
// applied, the radio states, the link's packets, the path's caveats — for the one completion
// pipeline (merge, judge, caveats, objectives) the operator shares.
func (r *runner) completion(marks []results.NetworkStepMark) complete.Run {
	run := complete.Run{Caveats: r.net.pathCaveats}
	if len(r.groupLinks) > 0 {
		run.Caveats = r.groupLinkCaveats
	}
	if len(r.net.timeline) > 0 {
		run.Timeline = marks
	}
	if r.net.radio != nil {
		run.Radio = r.net.radio()
	}
	if r.net.packets != nil {
		run.Packets = r.net.packets()
	}
	if len(r.energy) > 0 {
		run.Energy = func(res *results.Result) {
			if r.o.sockets != nil {
				r.o.sockets(res)
			}
			for _, f := range r.energy {
				f(res)
			}
		}
	}
	return run
}

// register adds c to the run's metrics, replacing one with the same labels (a run of the same
// name in the same process); temporary ones are removed when the run's processes stop.
func (r *runner) register(c prometheus.Collector, temporary bool) {
	if r.o.Metrics == nil {
		return
	}
	if err := r.o.Metrics.Register(c); err != nil {
		var dup prometheus.AlreadyRegisteredError
		if !errors.As(err, &dup) {
			r.logf("metrics: %v", err)
			return
		}
		r.o.Metrics.Unregister(dup.ExistingCollector)
		if err := r.o.Metrics.Register(c); err != nil {
			r.logf("metrics: %v", err)
			return
		}
	}
	if temporary {
		r.onTeardown(func() { r.o.Metrics.Unregister(c) })
	}
}

// makeCertificates generates the run's CA and server certificate when TLS is needed.
func (r *runner) makeCertificates(context.Context) error {
	if !r.plan.NeedsCertificate() {
		return nil
	}
	b, err := certs.New("msgbench-local", append([]string{"localhost", "127.0.0.1", "::1"}, r.net.serverHosts()...), 24*time.Hour)
	if err != nil {
		return err
	}
	r.bundle = b
	return nil
}

// startGate releases every worker at one start time once all are ready.
type startGate struct {
	mu      sync.Mutex
	waiting int
	at      time.Time
	err     error
	done    chan struct{}
}

func newStartGate(n int) *startGate { return &startGate{waiting: n, done: make(chan struct{})} }

func (g *startGate) ready() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.waiting--
	if g.waiting == 0 {
		g.at = time.Now().Add(100 * time.Millisecond)
		close(g.done)
	}
}

func (g *startGate) abort(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err == nil && g.waiting > 0 {
		g.err = err
		g.waiting = -1 << 30
		close(g.done)
	}
}

func (g *startGate) wait(ctx context.Context) (time.Time, error) {
	select {
	case <-g.done:
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.err != nil {
			return time.Time{}, fmt.Errorf("another worker failed: %w", g.err)
		}
		return g.at, nil
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
}

func hostPort(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }

var _ = tls.VersionTLS13
