// Package loadgen is msgbench's load generator: it connects the publishers and subscribers of a
// worker's share of the plan through a protocol driver, publishes on an open- or closed-loop
// schedule, and turns what it observes into a result (results.Result) whose every figure follows
// docs/measurement.md.
package loadgen

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/proc"
	"github.com/msgbench/msgbench/internal/wire"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/plan"
	"github.com/msgbench/msgbench/results"
)

// Options configure one worker's run.
type Options struct {
	// Name of the benchmark (metadata.name).
	Name string
	// Plan is the run's compiled plan (the operator's or msgbench run's, as its workers receive
	// it). Without one, Spec — a defaulted spec, as read by hand — is compiled.
	Plan *plan.Plan
	Spec *v1alpha1.MessagingBenchmarkSpec
	// Worker is this worker's index among Workers (the plan's when 0).
	Worker, Workers int
	// RunID makes client ids unique per run on a shared broker (default: random).
	RunID string
	// Credentials are the listed credentials (plan.Identity's file or Secret) of the groups
	// whose devices' credentials are listed, by group name: whoever starts the worker reads them
	// (identity.go).
	Credentials map[string]plan.Credentials

	// Address the clients connect to, TLS their TLS configuration (nil: plain), Dial how.
	Address string
	// Endpoints are the addresses of the groups whose clients connect elsewhere than Address, by
	// group name: with device groups on several protocols, each reaches its own gateway or the
	// broker's WebSocket listener.
	Endpoints map[string]string
	// Dials are how the groups whose clients sit behind a link of their own dial (from its
	// device side), by group name; the others use Dial.
	Dials map[string]drivers.DialFunc
	TLS   *tls.Config
	Dial  drivers.DialFunc
	// ClientCerts, when set, signs each client's own TLS client certificate
	// (spec.tls.clientCertificates).
	ClientCerts *certs.Issuer

	// Connect, when set, blocks until the worker may connect its clients (the operator first
	// puts the network impairment in place, so that connections see the emulated link).
	Connect func(ctx context.Context) error
	// Ready, when set, is called once every subscriber is connected and subscribed.
	Ready func()
	// Start, when set, blocks until the run may begin and returns the agreed wall-clock start
	// time; the worker starts publishing then. Unset starts at once.
	Start func(ctx context.Context) (time.Time, error)
	// Groups are the device groups this worker runs, by name (nil: every group of the plan). A
	// run's groups can be spread over several workers (on Kubernetes, one pod per link): each
	// worker counts the deliveries its subscribers see and the messages its publishers sent to
	// every group, and results.Merge adds them up (docs/fleets.md).
	Groups []string
	// Clocks, when set, is called once Start returned: the offset of each worker's clock from
	// the coordinator's, with the groups it runs. A message from another worker's publisher is
	// put on this worker's clock with the difference of the two offsets before its latency is
	// taken; the pair's result states the correction and its uncertainty.
	Clocks func() []PeerClock

	// BrokerUsage and GatewayUsage, when set, report the broker's and the gateway's CPU and
	// peak RSS (a local broker's /proc; on Kubernetes, the pods' usage endpoints).
	BrokerUsage, GatewayUsage func() (proc.Usage, error)
	// Environment is copied into the result.
	Environment results.Environment
	// Network is the applied link, copied into the result.
	Network any
	// Monitor, when set, shows the run's progress to the caller while it runs.
	Monitor *Monitor
	// Logf receives progress lines (nil: silent).
	Logf func(format string, args ...any)
	// wallSkew is added to the wall clock the headers carry when split (tests: a worker on
	// another machine, whose clock is off).
	wallSkew time.Duration
	// AccountRadio records what every client with a radio energy model (spec.network.radio.energy)
	// writes and reads on its sockets and accounts its energy from that (loadgen/radiolog): on
	// Kubernetes, where no link emulator sees the devices' packets. msgbench run's emulator
	// accounts them itself.
	AccountRadio bool
	// AckWait is how long the end of the run waits for acknowledgements still due, before
	// twice the slowest acknowledgement seen is added (default 60 s).
	AckWait time.Duration
}

// PeerClock is one worker's clock as the coordinator measured it (control.Client.ClockOffset):
// its offset from the coordinator's clock, bounded by ± half the round trip.
type PeerClock struct {
	Groups       []string `json:"groups"`
	OffsetMicros int64    `json:"offsetMicros"`
	RTTMicros    int64    `json:"rttMicros"`
}

// Resolve compiles Spec into Plan when no plan was given.
func (o *Options) Resolve() error {
	if o.Plan != nil {
		return nil
	}
	if o.Spec == nil {
		return errors.New("loadgen: no plan")
	}
	p, err := plan.Compile(o.Spec, plan.Admitted)
	o.Plan = p
	return err
}

// Phases a Monitor reports.
const (
	PhaseConnecting = "Connecting"
	PhaseReady      = "Ready"
	PhaseWarmup     = "Warmup"
	PhaseMeasuring  = "Measuring"
	PhaseDraining   = "Draining"
	PhaseDone       = "Done"
)

// Monitor exposes a running worker's progress.
type Monitor struct {
	phase atomic.Pointer[string]
	rec   atomic.Pointer[recorder]
	run   atomic.Pointer[run] // set once every client exists, until the end (metrics read them)
	final atomic.Pointer[figures]
	start atomic.Int64 // unix nanos when publishing began
}

// Snapshot is a moment of a run.
type Snapshot struct {
	Phase                  string
	Elapsed                time.Duration // since publishing began
	Sent, Received, Errors int64         // in the measured window so far
}

// Snapshot returns the current progress.
func (m *Monitor) Snapshot() Snapshot {
	s := Snapshot{Phase: m.phaseNow()}
	if st := m.start.Load(); st > 0 {
		s.Elapsed = time.Since(time.Unix(0, st))
	}
	if r := m.rec.Load(); r != nil {
		t := r.counts()
		s.Sent, s.Received, s.Errors = t.sent, t.received, t.errors
	}
	return s
}

func (m *Monitor) phaseNow() string {
	if p := m.phase.Load(); p != nil {
		return *p
	}
	return PhaseConnecting
}

func (m *Monitor) setPhase(p string) {
	if m != nil {
		m.phase.Store(&p)
	}
}

// run is one worker's state.
type run struct {
	o   Options
	ctx context.Context // the run's, for goroutines of its clients (requests.go)
	// answered counts the answers requesters got, warm-up ones too (requests.go)
	answered atomic.Int64
	// compiled is the run's plan; share is this worker's share of its clients.
	compiled *plan.Plan
	// groups are the plan's groups in this worker; share and drv are the first's, for what
	// only a flat spec's one group does (duty cycles, reconnect storms: churn.go).
	groups []*groupRun
	share  plan.Share
	drv    drivers.Driver
	// fleet tracks deliveries across groups in a run with spec.groups; nil otherwise.
	fleet *fleet
	// split is set when other workers run some of the plan's groups (Options.Groups): the
	// counts of this worker are its share, results.Merge adds them up.
	split bool
	// radio are the energy sections this worker accounts from its sockets (Options.AccountRadio).
	radio  []*radioAccount
	clocks atomic.Pointer[clocks] // the workers' clock offsets, when split
	// wallBase is added to the send times in message headers, and taken off again where they
	// are read: 0 in one worker, whose engine time they are; the wall-clock time of the epoch
	// when split, so that a header's time is on the publisher's wall clock and means the same
	// in every worker (up to the workers' clock offsets, which clockOf corrects).
	wallBase int64
	rec      *recorder
	epoch    time.Time
	window   atomic.Int64 // engine time the measured window starts (read by client goroutines)
	end      int64        // engine time publishing ends (0: run until quotas are sent)
	// windowEnd is end for the subscribers' goroutines, which run before it is set.
	windowEnd atomic.Int64
	// publishers of this worker by the id their messages carry (their group's base + index)
	pubByIndex map[int]*publisher
	subs       []*subscriber
	pubs       []*publisher
	churn      *churn // device churn's counters (dutyCycle, reconnectStorm; churn.go)
	ramp       *ramp  // the first connections' ramp (connect.go)
	// baseMem is the Go memory the process held before its first client connected, and
	// heldMem what it held at the end with every client still connected, both after a garbage
	// collection (memory.go): resources.loadgenBytesPerConnection is their difference per client.
	baseMem, heldMem int64
	// publishingEnded is the engine time every publisher had stopped: the measured window
	// cannot have lasted longer than that.
	publishingEnded int64
	// stallMicros is the longest the process woke up late in the window (probeStalls).
	stallMicros int64
}

func (r *run) now() int64 { return int64(time.Since(r.epoch)) }

func (r *run) logf(format string, args ...any) {
	if r.o.Logf != nil {
		r.o.Logf(format, args...)
	}
}

// Run executes one worker's share of the workload and returns its result.
func Run(ctx context.Context, o Options) (*results.Result, error) {
	if err := o.Resolve(); err != nil {
		return nil, err
	}
	compiled := o.Plan
	if o.Workers == 0 {
		o.Workers = compiled.Workers
	}
	if o.Workers < 1 || o.Worker < 0 || o.Worker >= o.Workers {
		return nil, fmt.Errorf("loadgen: worker %d of %d", o.Worker, o.Workers)
	}
	if o.RunID == "" {
		o.RunID = fmt.Sprintf("%06x", rand.Uint32()&0xffffff)
	}
	timing := compiled.Timing
	r := &run{o: o, ctx: ctx, compiled: compiled, epoch: time.Now(), pubByIndex: map[int]*publisher{}}
	interval := timing.TimelineInterval
	r.rec = newRecorder(int64(interval), len(compiled.Groups))
	if compiled.Groups[0].Fleet != nil {
		r.fleet = &fleet{pairs: map[[2]int]*pairStats{}}
	}
	r.churn = newChurn()
	if r.group().Load.ReconnectStorm != nil {
		r.churn.storm = &storm{}
	}
	r.window.Store(1 << 62) // nothing is measured before the start
	if o.Monitor != nil {
		o.Monitor.rec.Store(r.rec)
	}
	o.Monitor.setPhase(PhaseConnecting)
	defer r.closeAll()
	held, herr := heldGroups(compiled, o.Groups)
	if herr != nil {
		return nil, herr
	}
	for i := range compiled.Groups {
		g := &compiled.Groups[i]
		if !held[i] {
			// Another worker runs it: its clients are not here, but its subscriptions and
			// publishers are still the plan's, for the messages its publishers send here and
			// those this worker's publishers send it.
			gr := &groupRun{index: i, g: g, remote: true, base: g.Fleet.PublisherBase}
			r.split = true
			r.groups = append(r.groups, gr)
			continue
		}
		address := o.Address
		if a := o.Endpoints[g.Name]; a != "" {
			address = a
		}
		dial := o.Dial
		if d := o.Dials[g.Name]; d != nil {
			dial = d
		}
		dial = r.radioDial(g, dial)
		// The run's client TLS is for the groups whose connections are encrypted: an MQTT
		// backend beside HTTP/3 devices (whose gateway serves TLS) talks plain MQTT to a plain
		// broker.
		clientTLS := o.TLS
		if !g.DialsTLS(compiled.Broker) {
			clientTLS = nil
		}
		if err := r.checkCredentials(g); err != nil {
			return nil, err
		}
		drv, err := drivers.New(string(g.Protocol), drivers.Config{Group: g, Address: address, TLS: clientTLS, ClientCerts: o.ClientCerts, Dial: dial, Now: r.now})
		if err != nil {
			return nil, err
		}
		gr := &groupRun{index: i, g: g, share: g.Share(o.Worker, o.Workers), drv: drv, address: address}
		if g.Fleet != nil {
			gr.base = g.Fleet.PublisherBase
			if g.Fleet.ReplyTo != nil {
				gr.requests = &requests{roundTrip: results.NewHistogram()}
			}
		}
		r.groups = append(r.groups, gr)
	}
	r.share, r.drv = r.groups[0].share, r.groups[0].drv
	if err := r.checkSplit(); err != nil {
		return nil, err
	}
	if r.split {
		r.wallBase = r.epoch.UnixNano() + int64(o.wallSkew)
	}

	// Publishers exist (unconnected) before any subscriber can receive: subscribers look them
	// up by id, and the table is read-only from here on.
	for _, gr := range r.groups {
		for _, cp := range gr.share.Publishers {
			p := &publisher{r: r, gr: gr, plan: cp, shard: r.rec.shard(gr.index, cp.Index), phase: float64(cp.Index) / float64(max(1, gr.share.TotalPublishers))}
			p.next.Store(-1)
			p.tracked = r.fleet != nil
			p.countAcks = gr.g.Fleet != nil && gr.g.Fleet.Retain
			p.topics = gr.publisherTopics(r, cp.Index)
			if f := gr.g.Fleet; f != nil && f.ReplyTo != nil {
				p.reply = r.compiled.TopicName(f.ReplyTo, cp.Index, r.o.RunID)
			}
			if r.churn.storm != nil {
				p.rj.rejoined = make(chan drivers.Session, 1)
				p.rj.intended = make([]int64, gr.g.Inflight+1)
			}
			gr.pubs = append(gr.pubs, p)
			r.pubs = append(r.pubs, p)
			r.pubByIndex[gr.base+cp.Index] = p
		}
	}
	for _, gr := range r.groups {
		for _, cp := range gr.share.Subscribers {
			s := &subscriber{r: r, gr: gr, plan: cp, shard: r.rec.shard(gr.index, cp.Index)}
			if f := gr.g.Fleet; f != nil && f.Respond {
				s.queue = &answerQueue{wake: make(chan struct{}, 1), topics: map[string]string{}}
			}
			if r.fleet != nil {
				s.sources = map[uint32]*source{}
			} else {
				s.trackers = make([]tracker, gr.share.PublishersOn(cp.Topic))
			}
			gr.subs = append(gr.subs, s)
			r.subs = append(r.subs, s)
		}
	}
	if o.Monitor != nil {
		o.Monitor.run.Store(r)
	}

	r.baseMem = goMemoryHeld()
	if o.Connect != nil {
		if err := o.Connect(ctx); err != nil {
			return nil, fmt.Errorf("waiting for the signal to connect: %w", err)
		}
	}

	// 1. Subscribers connect and subscribe before anyone publishes.
	for _, gr := range r.groups {
		if !gr.remote {
			r.logf("worker %d/%d: group %s: %d topics, %d publishers, %d subscribers", o.Worker, o.Workers, gr.g.Name, len(gr.share.Topics), len(gr.pubs), len(gr.subs))
		}
	}
	ramp := r.newRamp()
	if err := r.connectSubscribers(ctx, ramp); err != nil {
		return nil, err
	}
	// Then the publishers, still before the start: the window offers the whole load from its
	// first instant. Duty-cycled devices connect at their wakes instead.
	dc := r.group().Load.DutyCycle
	if dc == nil {
		ramp.restart()
		if err := r.connectPublishers(ctx, ramp); err != nil {
			return nil, err
		}
	}
	o.Monitor.setPhase(PhaseReady)
	if o.Ready != nil {
		o.Ready()
	}

	// 2. Synchronized start.
	startWall := time.Now()
	var err error
	if o.Start != nil {
		if startWall, err = o.Start(ctx); err != nil {
			return nil, fmt.Errorf("waiting for the start signal: %w", err)
		}
		r.readClocks()
		if r.split {
			// The window is the agreed one on this worker's clock, not from when it woke, and
			// set now, before any worker starts: a message is measured when its header's
			// wall-clock time is in it, which the subscribers of every worker read alike (a
			// worker that woke a little later would otherwise count a message its publisher
			// counted as the warm-up's).
			r.window.Store(startWall.UnixNano() - r.wallBase + int64(timing.Warmup))
		}
		startWall = startWall.Add(-o.wallSkew) // a clock that reads ahead gets there sooner
		if err := sleepUntil(ctx, startWall); err != nil {
			return nil, err
		}
	}
	skew := time.Since(startWall)
	t0 := r.now()
	r.churn.t0 = t0
	if !r.split || o.Start == nil {
		r.window.Store(t0 + int64(timing.Warmup))
	}
	if timing.Duration > 0 {
		r.end = r.window.Load() + int64(timing.Duration)
		r.windowEnd.Store(r.end)
	}
	if o.Monitor != nil {
		o.Monitor.start.Store(time.Now().UnixNano())
	}
	o.Monitor.setPhase(PhaseWarmup)
	windowUsage := r.snapshotAtWindow(ctx)
	stopProbe := r.probeStalls()
	defer stopProbe() // whatever ends the run early

	// 3. Publishers publish.
	var wg sync.WaitGroup
	pubErrs := make(chan error, len(r.pubs)+len(r.subs))
	for _, p := range r.pubs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			switch {
			case dc != nil: // devices connect at their wakes
				err = p.runDutyCycle(ctx)
			case p.gr.start() > 0: // a group that joins late connects then
				if err = sleepUntil(ctx, r.epoch.Add(time.Duration(t0)+p.gr.start())); err == nil {
					p.connect(ctx, func() {})
					err = p.run(ctx)
				}
			default:
				err = p.run(ctx)
			}
			if err != nil {
				pubErrs <- err
			}
		}()
	}
	if r.end > 0 {
		go func() {
			if sleepUntil(ctx, r.epoch.Add(time.Duration(r.window.Load()))) == nil {
				o.Monitor.setPhase(PhaseMeasuring)
			}
		}()
	}
	// Sleeping subscribers, groups that join late and a reconnect storm run beside the
	// publishers.
	var side sync.WaitGroup
	for _, gr := range r.groups {
		if gr.start() > 0 && len(gr.subs) > 0 {
			side.Add(1)
			go func() {
				defer side.Done()
				if err := r.joinLate(ctx, gr, t0); err != nil {
					pubErrs <- err
				}
			}()
		}
	}
	if dc != nil && dc.Subscribers {
		for _, s := range r.subs {
			side.Add(1)
			go func() {
				defer side.Done()
				if err := s.runSleeping(ctx); err != nil {
					pubErrs <- err
				}
			}()
		}
	}
	if r.churn.storm != nil {
		side.Add(1)
		go func() {
			defer side.Done()
			r.runStorm(ctx)
			r.churn.storm.wg.Wait()
		}()
	}
	wg.Wait()
	side.Wait()
	if r.end > 0 && r.anyWentTheWholeWay() {
		// An open-loop publisher's last slot falls just before the end, a duty-cycled device may
		// have slept through the rest: the window still lasts until its end, which is what the
		// rates divide by. (Publishers that all failed end it early, and it says so.)
		if err := sleepUntil(ctx, r.epoch.Add(time.Duration(r.end))); err != nil {
			return nil, err
		}
	}
	r.publishingEnded = r.now()
	r.stallMicros = stopProbe()
	// Usage over the measured window: from its start until publishing ended (the drain that
	// follows only waits). A window that never opened has no usage.
	usage := usageWindow{end: r.usageNow()}
	usage.start, usage.ok = windowUsage()
	close(pubErrs)
	var failures []error
	for err := range pubErrs {
		failures = append(failures, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	// 4. Drain: acknowledgements, then deliveries still on their way.
	o.Monitor.setPhase(PhaseDraining)
	drainErrs := r.drain(ctx)
	r.heldMem = goMemoryHeld()                                              // every client still connected (closeAll comes after)
	res := r.result(startWall, skew, usage, append(failures, drainErrs...)) // one message, causes first
	if len(failures) > 0 {
		// A publisher that could not connect or publish makes the numbers incomplete.
		res.Phase = string(v1alpha1.PhaseFailed)
		res.Workers[0].Phase = res.Phase
	}
	o.Monitor.finish(res)
	o.Monitor.setPhase(PhaseDone)
	return res, nil
}

// connectSubscribers connects and subscribes every subscriber, ramped by connectRate.
func (r *run) connectSubscribers(ctx context.Context, ramp *ramp) error {
	errs := make(chan error, len(r.subs))
	var wg sync.WaitGroup
	for i, s := range early(r.subs) {
		if err := ramp.wait(ctx, i); err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer ramp.done()
			if err := s.connect(ctx); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return joinSummarized(all, len(r.subs))
}

// anyWentTheWholeWay reports whether some publisher published until the window's end (and did
// not fail before it).
func (r *run) anyWentTheWholeWay() bool {
	for _, p := range r.pubs {
		if p.endedAt >= r.end {
			return true
		}
	}
	return false
}

// stallProbeInterval is how often probeStalls wakes up.
const stallProbeInterval = 10 * time.Millisecond

// probeStalls measures, until the returned stop is called, the longest the load generator's own
// process woke up late during the measured window: a goroutine sleeping stallProbeInterval at a
// time sees the machine's scheduling delays and Go's GC pauses that also hold up the publishers,
// but nothing of a stalled broker or link. stop returns it in microseconds.
func (r *run) probeStalls() (stop func() int64) {
	quit, done := make(chan struct{}), make(chan struct{})
	var worst int64
	go func() {
		defer close(done)
		t := time.NewTimer(stallProbeInterval)
		defer t.Stop()
		for {
			due := r.now() + int64(stallProbeInterval)
			select {
			case <-quit:
				return
			case <-t.C:
			}
			if now := r.now(); now >= r.window.Load() {
				worst = max(worst, now-due)
			}
			t.Reset(stallProbeInterval)
		}
	}()
	var once sync.Once
	return func() int64 {
		once.Do(func() { close(quit) })
		<-done
		return worst / 1000
	}
}

// connectPublishers connects every publisher, ramped by connectRate. A publisher that cannot
// connect does not stop the others: the run goes on without it, its schedule counted unsent,
// and ends Failed saying why. Only a cancelled run returns an error.
func (r *run) connectPublishers(ctx context.Context, ramp *ramp) error {
	var wg sync.WaitGroup
	for i, p := range early(r.pubs) {
		if err := ramp.wait(ctx, i); err != nil {
			wg.Wait()
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.connect(ctx, ramp.done)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	// Not one client connected: the broker is not reachable (yet), which the caller may retry
	// (a worker pod started before the broker's Service answers), as when subscribers fail.
	if len(r.subs) == 0 {
		var all []error
		for _, p := range r.pubs {
			if p.connectErr == nil {
				return nil
			}
			all = append(all, p.gr.clientErr(drivers.Publisher, p.plan.Index, p.connectErr))
		}
		return joinSummarized(all, len(r.pubs))
	}
	return nil
}

// snapshotAtWindow records the process's (and broker's) usage when the measured window opens.
// The returned function gives that snapshot, or false when the window has not opened (then it
// stops waiting for it).
func (r *run) snapshotAtWindow(ctx context.Context) func() (usagePair, bool) {
	ch := make(chan usagePair, 1)
	stop := make(chan struct{})
	go func() {
		t := time.NewTimer(time.Until(r.epoch.Add(time.Duration(r.window.Load()))))
		defer t.Stop()
		select {
		case <-t.C:
			ch <- r.usageNow()
		case <-stop:
		case <-ctx.Done():
		}
		close(ch)
	}()
	return func() (usagePair, bool) {
		if r.now() < r.window.Load() {
			close(stop)
		}
		u, ok := <-ch
		return u, ok
	}
}

// usageWindow is the usage at the measured window's start and end.
type usageWindow struct {
	start, end usagePair
	ok         bool // the window opened
}

type usagePair struct {
	// wireBytes is what every client's sockets carried so far, both ways.
	wireBytes             int64
	self, broker, gateway proc.Usage
	brokerOK, gatewayOK   bool
	// the machine's CPU time over all CPUs, and its stolen part
	sysTotal, sysSteal time.Duration
}

func (r *run) usageNow() usagePair {
	u := usagePair{self: proc.Self(), wireBytes: r.wireBytes()}
	u.sysTotal, u.sysSteal = proc.System()
	if r.o.BrokerUsage != nil {
		if b, err := r.o.BrokerUsage(); err == nil {
			u.broker, u.brokerOK = b, true
		}
	}
	if r.o.GatewayUsage != nil {
		if g, err := r.o.GatewayUsage(); err == nil {
			u.gateway, u.gatewayOK = g, true
		}
	}
	return u
}

// cpuSpent is the CPU a process used between two readings, nil when a coarse counter (10 ms
// ticks, where no finer clock answered) saw no change: that is "less than a tick", not a measured
// zero.
func cpuSpent(start, end proc.Usage) *float64 {
	d := max(0, end.CPU-start.CPU)
	if d == 0 && max(start.CPUResolution, end.CPUResolution) >= time.Millisecond {
		return nil
	}
	return results.Float64(d.Seconds())
}

// wireBytes is what every client's sockets carried so far, both ways: retired sessions' and the
// live ones'. A session retiring while it is read may be missed or counted twice: a duty-cycled
// device at the window's very edge.
func (r *run) wireBytes() (n int64) {
	add := func(t *retired, live *atomic.Pointer[drivers.Session]) {
		n += t.bytes()
		if s := live.Load(); s != nil {
			c := (*s).Counters()
			n += c.BytesSent + c.BytesReceived
		}
	}
	for _, p := range r.pubs {
		add(&p.retired, &p.live)
	}
	for _, s := range r.subs {
		add(&s.retired, &s.live)
	}
	return n
}

// ackWait is how long acknowledgements still due may take: Options.AckWait (60 s), plus twice
// the slowest one seen, since on a slow link (NB-IoT's 30 kbit/s downlink carrying 10 KB
// deliveries) one takes longer than a minute. spec.timeout (ctx) still bounds the run.
func (r *run) ackWait() time.Duration {
	return cmp.Or(r.o.AckWait, 60*time.Second) + 2*time.Duration(r.rec.maxAck())*time.Microsecond
}

// splitQuiet is the shortest quiet that ends the drain of a worker running some of a run's
// groups: 2 s missed one late delivery from another pod on a machine at load 13 (envtest).
const splitQuiet = 5 * time.Second

// drain waits for outstanding acknowledgements, then for deliveries until every expected
// message has arrived or none has arrived for a while.
func (r *run) drain(ctx context.Context) []error {
	var errs []error
	// Acknowledgements are waited for until ackWait after the window's end (a publisher held
	// past the end by a full window already used part of it), so the drain stays bounded.
	ackDeadline := time.Now().Add(r.ackWait())
	if r.end > 0 {
		ackDeadline = r.epoch.Add(time.Duration(r.end) + r.ackWait())
	}
	ackCtx, cancel := context.WithDeadline(ctx, ackDeadline)
	for _, p := range r.pubs {
		if p.sess == nil {
			continue
		}
		if p.rj.dropped.Load() && p.rj.payload != nil { // a reconnect storm after its last publish
			if _, err := p.rejoin(ackCtx, p.sess, p.rj.next, false, false, p.rj.payload); err != nil {
				errs = append(errs, p.gr.clientErr(drivers.Publisher, p.plan.Index, err))
				continue
			}
		}
		if err := p.sess.Drain(ackCtx); err != nil {
			errs = append(errs, p.gr.clientErr(drivers.Publisher, p.plan.Index, err))
		} else if p.win.measuring && !p.rj.rejoinedOnce {
			p.win.recount(p.sess.Counters().BytesSent)
			p.win.done = true
		}
	}
	cancel()
	expected, withHeader := r.expected()
	if r.split {
		// This worker's subscribers also wait for other workers' publishers, whose counts it
		// does not know: only the quiet period ends the drain (at least splitQuiet).
		expected = math.MaxInt64
	}
	// Quiet period: a lossy QoS 0 run never reaches expected, so stop when nothing arrived for
	// twice the worst latency seen (at least 2 s, at most 60 s). Any of the run's messages counts
	// as arriving, warm-up ones too: a closed loop at QoS 0 fills every buffer on the way, and with
	// many publishers the warm-up's backlog can take longer to come through than the window
	// lasted; the window's messages come after it (64 publishers: all of them, counted lost, when
	// only measured arrivals counted).
	// A subscriber asleep in PSM hears its messages only when it next wakes (its keep-alive at
	// the latest): a quiet spell is no sign of loss until that long has passed — within half of
	// what the run's timeout leaves, so that a drain never fails the run.
	// Likewise an MQTT-SN publisher's lost datagram arrives only with its retransmission.
	sleepHold := max(r.compiled.SleepHold(), r.compiled.RetransmitHold())
	if dl, ok := ctx.Deadline(); ok {
		sleepHold = min(sleepHold, time.Until(dl)/2)
	}
	var last int64 = -1
	lastChange := time.Now()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		t := r.rec.counts()
		got := t.received
		if withHeader {
			got = t.unique
		}
		if got >= expected && r.answersIn() {
			break
		}
		quiet := min(2*time.Second+2*time.Duration(r.rec.maxEndToEnd())*time.Microsecond, 60*time.Second)
		quiet = max(quiet, sleepHold)
		if r.split {
			// Only the quiet ends a split worker's drain (above), and another pod's publishers
			// may still be retrying a message its broker was slow to acknowledge.
			quiet = max(quiet, splitQuiet)
		}
		if arrived := r.arrived(); arrived != last {
			last, lastChange = arrived, time.Now()
		} else if time.Since(lastChange) > quiet {
			break
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return append(errs, ctx.Err())
		}
	}
	return errs
}

// arrived is how many of the run's messages the subscribers got so far, warm-up included.
func (r *run) arrived() (n int64) {
	for _, s := range r.subs {
		n += s.arrived.Load()
	}
	return n + r.answered.Load()
}

// expected is how many deliveries the subscriptions call for: every subscriber of a topic
// expects every measured message published to it.
func (r *run) expected() (n int64, withHeader bool) {
	if r.fleet != nil { // every publishing group's payload carries the header (plan)
		n, _, _ = r.fleetExpected()
		return n, true
	}
	perTopic := map[int]int64{}
	for _, p := range r.pubs {
		perTopic[p.plan.Topic] += p.win.sent.Load()
	}
	for _, s := range r.subs {
		n += perTopic[s.plan.Topic]
	}
	return n, r.group().PayloadBytes >= HeaderSize
}

// closeAll closes every session, the subscribers' first (a publisher's last act, clearing its
// retained messages, must reach none of them), many at a time: a session's close may wait for
// its peer's answer (MQTT-SN's DISCONNECT), which over NB-IoT's round trip made 200 devices
// take two minutes one after another.
func (r *run) closeAll() {
	const parallel = 256
	slots := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	each := func(f func()) {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			f()
		}()
	}
	for _, s := range r.subs {
		if s.sess != nil {
			each(func() { _ = s.sess.Close() })
		}
	}
	wg.Wait()
	for _, p := range r.pubs {
		if p.sess != nil {
			each(func() {
				p.clearRetained()
				_ = p.sess.Close()
			})
		}
	}
	wg.Wait()
}

func (r *run) result(startWall time.Time, skew time.Duration, usage usageWindow, drainErrs []error) *results.Result {
	start, end := usage.start, usage.end
	hists, timeline, tot := r.rec.merged()
	expected, withHeader := r.expected()
	res := &results.Result{
		Name:        r.o.Name,
		Spec:        r.compiled.Source,
		Environment: r.o.Environment,
		Network:     r.o.Network,
		Phase:       string(v1alpha1.PhaseSucceeded),
		StartTime:   startWall.UTC(),
		EndTime:     time.Now().UTC(),
		Sent:        tot.sent,
		Acked:       tot.acked,
		Received:    tot.received,
		// Deliveries by arrival: in the window (the received rate's), and of the window's
		// messages after it.
		ReceivedInWindow:    tot.inWindow,
		ReceivedAfterWindow: tot.drained,
		Expected:            expected,
		Errors:              tot.errors,
		ConnectRamp:         r.ramp.summary(),
	}
	if r.end > 0 {
		// The window actually measured: until the last publisher stopped, which is the
		// window's end unless every publisher failed before it.
		var ended int64
		for _, p := range r.pubs {
			res.Unsent += p.unsent
			ended = max(ended, p.endedAt)
		}
		// Never longer than observed: publishing cannot have lasted past the moment it ended.
		ended = min(ended, r.end, r.publishingEnded)
		res.MeasuredSeconds = max(0, time.Duration(ended-r.window.Load()).Seconds())
	} else {
		last := tot.lastReceive
		for _, p := range r.pubs {
			last = max(last, p.lastSend)
		}
		res.MeasuredSeconds = max(0, time.Duration(last-r.window.Load()).Seconds())
	}
	if withHeader {
		res.Lost = results.Int64(max(0, expected-tot.unique))
		res.Duplicates = results.Int64(tot.dups)
		res.OutOfOrder = results.Int64(tot.ooo)
	} else {
		res.Lost = results.Int64(max(0, expected-tot.received))
	}
	// Wire figures from every session, read before the sessions close.
	var sum wire.Counters
	var dropped []error
	for _, p := range r.pubs {
		sum.Add(p.retired.counters)
		res.Wire.Connections += p.retired.conns
		res.Wire.ConnectBytesTotal += p.retired.connectBytes
		if p.sess == nil {
			continue
		}
		sum.Add(p.sess.Counters())
		res.Wire.Connections++
		res.Wire.ConnectBytesTotal += p.sess.ConnectBytes()
		if p.win.done { // a publisher whose acknowledgements never all came has no complete figure
			res.Wire.PublishBytesTotal += p.win.bytes
			res.Wire.PublishMessageCount += p.win.sent.Load()
		}
		if err := p.sess.Err(); err != nil {
			dropped = append(dropped, p.gr.clientErr(drivers.Publisher, p.plan.Index, err))
		}
	}
	for _, s := range r.subs {
		sum.Add(s.retired.counters)
		res.Wire.Connections += s.retired.conns
		res.Wire.ConnectBytesTotal += s.retired.connectBytes
		if s.sess == nil { // a sleeping or dropped subscriber that did not come back
			continue
		}
		sum.Add(s.sess.Counters())
		res.Wire.Connections++
		res.Wire.ConnectBytesTotal += s.sess.ConnectBytes()
		if err := s.sess.Err(); err != nil {
			dropped = append(dropped, s.gr.clientErr(drivers.Subscriber, s.plan.Index, err))
		}
	}
	res.Wire.BytesSent, res.Wire.BytesReceived = sum.BytesSent, sum.BytesReceived
	if usage.ok {
		// From the window's start to the end of the drain: the bytes that moved the window's
		// messages, the denominator's (Received) window.
		res.Wire.WindowBytes = max(0, sum.BytesSent+sum.BytesReceived-usage.start.wireBytes)
		res.Wire.BytesDuringWindow = max(0, usage.end.wireBytes-usage.start.wireBytes)
	}
	if sum.SegmentsSent > 0 {
		res.Wire.SegmentsSent, res.Wire.SegmentsReceived, res.Wire.Retransmits = results.Int64(sum.SegmentsSent), results.Int64(sum.SegmentsReceived), results.Int64(sum.Retransmits)
	}
	if sum.DatagramsSent > 0 {
		res.Wire.DatagramsSent, res.Wire.DatagramsReceived = results.Int64(sum.DatagramsSent), results.Int64(sum.DatagramsReceived)
	}
	res.Errors += int64(len(dropped))
	if problems := summarizeErrors(append(drainErrs, dropped...), len(r.pubs)+len(r.subs)); problems != "" {
		res.Message = problems
	}
	res.Resources.LoadgenMaxRSSBytes = end.self.PeakRSS
	res.Resources.LoadgenStallMicros = r.stallMicros
	if held := int64(len(r.pubs) + len(r.subs)); held > 0 && r.group().Load.DutyCycle == nil && r.heldMem > r.baseMem {
		// Duty-cycled devices are not all held at once, so they have no such figure.
		res.Resources.LoadgenBytesPerConnection = results.Int64((r.heldMem - r.baseMem) / held)
	}
	if usage.ok { // CPU and the machine's conditions over the window; none when it never opened
		res.Resources.LoadgenCPUSeconds = max(0, end.self.CPU-start.self.CPU).Seconds()
		if end.brokerOK && start.brokerOK {
			res.Resources.BrokerCPUSeconds = cpuSpent(start.broker, end.broker)
			res.Resources.BrokerMaxRSSBytes = results.Int64(end.broker.PeakRSS)
		}
		if end.gatewayOK && start.gatewayOK {
			res.Resources.GatewayCPUSeconds = cpuSpent(start.gateway, end.gateway)
			res.Resources.GatewayMaxRSSBytes = results.Int64(end.gateway.PeakRSS)
		}
		// A saturated load generator (alone, or with a broker on the same machine) and CPU steal.
		for _, c := range []*results.Caveat{
			results.SaturationCaveat(res.Resources.LoadgenCPUSeconds, res.Resources.BrokerCPUSeconds, res.MeasuredSeconds,
				runtime.GOMAXPROCS(0), r.o.BrokerUsage != nil && r.o.Environment.Mode == "local"),
			results.StealCaveat(end.sysSteal-start.sysSteal, end.sysTotal-start.sysTotal),
		} {
			if c != nil {
				c.Worker = &r.o.Worker
				res.AddCaveat(*c)
			}
		}
	}
	step := time.Duration(r.rec.interval).Seconds()
	for i, b := range timeline {
		tp := results.TimelinePoint{T: float64(i+1) * step, Sent: b.sent, Received: b.received, Errors: b.errors}
		if b.e2eN > 0 {
			tp.EndToEndCount, tp.EndToEndMeanMicros = b.e2eN, float64(b.e2eSum)/float64(b.e2eN)
		}
		res.Timeline = append(res.Timeline, tp)
	}
	if r.fleet != nil {
		_, perGroup, perPair := r.fleetExpected()
		r.groupResults(res, perGroup, perPair)
	}
	res.Workers = []results.WorkerSummary{{Index: r.o.Worker, Sent: tot.sent, Received: tot.received, StartSkewMicros: skew.Microseconds(), Phase: res.Phase}}
	if r.split {
		for _, gr := range r.groups {
			if !gr.remote {
				res.Workers[0].Groups = append(res.Workers[0].Groups, gr.g.Name)
			}
		}
	}
	r.radioEnergy(res)
	r.environment(&res.Environment)
	r.tlsCounts(&res.Wire)
	res.Churn = r.churnResult(hists, res.Lost)
	_ = res.Finalize(hists)
	if r.o.Workers == 1 && !r.split { // a run's only worker judges it; several are judged once merged
		results.Judge(res).Apply(res)
	}
	return res
}

// sleepUntil sleeps until wall-clock time t or ctx ends.
func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
