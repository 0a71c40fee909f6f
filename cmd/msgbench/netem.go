package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/netem"
	"github.com/msgbench/msgbench/netem/emulator"
	"github.com/msgbench/msgbench/plan"
)

// netemFlags are the options of msgbench netem run. The link flags mirror spec.network of a
// MessagingBenchmark, so a link tried here behaves the same in a manifest.
type netemFlags struct {
	profile, direction   string
	link, up, down       linkFlags
	radio                radioFlags
	mtu                  int32
	seed                 uint64
	queue                int
	serverCommand        string
	serverPort           int
	serverWait, killWait time.Duration
}

// radioFlags turn on spec.network.radio: on with the profile's numbers, or any number set.
type radioFlags struct {
	on                                   bool
	inactivity, promotion, paging, sleep string
}

// linkFlags are the impairment flags of one scope: both directions, up or down.
type linkFlags struct {
	delay, jitter, loss, duplicate, corrupt, reorder, rate string
	gemodel, correlation                                   string
}

func newNetemCommand() *cobra.Command {
	netemCmd := &cobra.Command{
		Use:   "netem",
		Short: "Emulate a network link in user space (no tc netem needed)",
	}
	var f netemFlags
	run := &cobra.Command{
		Use:   "run [flags] -- COMMAND [ARG...]",
		Short: "Run COMMAND on the device side of an emulated link, optionally with a server on the other side",
		Long: `Creates two network namespaces, device and server, joined by an emulated link, and runs
COMMAND in the device namespace with MSGBENCH_SERVER_ADDR (and MSGBENCH_SERVER_ADDR6 when the MTU
allows IPv6) set to the server side's address. --server-command runs a shell command in the server
namespace first (with MSGBENCH_DEVICE_ADDR set). At the end msgbench prints the link's packet
counters and exits with COMMAND's exit code; nothing it created outlives it, Ctrl-C included.

The link flags work like spec.network of a MessagingBenchmark: --profile picks a preset, every
other flag overrides it for both directions, --up-* and --down-* for one. Needs root (or the
capabilities CAP_NET_ADMIN and CAP_SYS_ADMIN). See docs/netem.md.`,
		Example: `  sudo msgbench netem run --profile lte -- sh -c 'ping -c 5 $MSGBENCH_SERVER_ADDR'
  sudo msgbench netem run --delay 50ms --loss 1 --rate 10mbit --server-command 'iperf3 -s -1' --server-port 5201 \
      -- sh -c 'iperf3 -c $MSGBENCH_SERVER_ADDR -t 5'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			code, err := runNetem(cmd.Context(), f, args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if code != 0 {
				// Everything is torn down by now; only the exit code is left to pass on.
				os.Exit(code)
			}
			return nil
		},
	}
	fl := run.Flags()
	fl.StringVar(&f.profile, "profile", "", "network profile: nb-iot, lte-m, lte, 5g-sa, 5g-urban, cell-edge, congested, 3g, wifi, satellite, none (default: custom, only the flags given)")
	f.link.register(run, "", "both directions")
	f.up.register(run, "up-", "device → server only")
	f.down.register(run, "down-", "server → device only")
	fl.BoolVar(&f.radio.on, "radio", false, "per-device radio states (idle, paging, power saving) with the profile's numbers (nb-iot, lte-m, lte, 5g-sa); see docs/network-profiles.md#radio-states")
	fl.StringVar(&f.radio.inactivity, "radio-inactivity", "", "radio states: connected → idle after this long without a packet (implies --radio)")
	fl.StringVar(&f.radio.promotion, "radio-promotion", "", "radio states: idle → connected takes this long (implies --radio)")
	fl.StringVar(&f.radio.paging, "radio-paging", "", "radio states: an idle device hears paging once per this cycle; 0s: at once (implies --radio)")
	fl.StringVar(&f.radio.sleep, "radio-psm", "", "radio states: power saving mode after this long idle; downlink then waits for an uplink (implies --radio)")
	fl.StringVar(&f.direction, "direction", "both", "impair only to (device → server), from (server → device) or both")
	fl.Int32Var(&f.mtu, "mtu", 0, "link MTU in bytes (default: the profile's, else 1500)")
	fl.Uint64Var(&f.seed, "seed", 0, "seed of the random impairments, for repeatable runs (default: random)")
	fl.IntVar(&f.queue, "queue", emulator.DefaultQueuePackets, "packets each direction holds at most (rate queue and delay line); more are dropped")
	fl.StringVar(&f.serverCommand, "server-command", "", "shell command to run in the server namespace before COMMAND (stopped after it)")
	fl.IntVar(&f.serverPort, "server-port", 0, "wait until the server command accepts TCP connections on this port before starting COMMAND")
	fl.DurationVar(&f.serverWait, "server-wait", 10*time.Second, "how long to wait for --server-port")
	fl.DurationVar(&f.killWait, "kill-wait", 2*time.Second, "how long a command gets to exit after SIGINT or SIGTERM before SIGKILL")
	netemCmd.AddCommand(run)
	return netemCmd
}

func (l *linkFlags) register(cmd *cobra.Command, prefix, scope string) {
	fl := cmd.Flags()
	fl.StringVar(&l.delay, prefix+"delay", "", "one-way delay, "+scope+" (e.g. 200ms)")
	fl.StringVar(&l.jitter, prefix+"jitter", "", "standard deviation of the delay, "+scope+"; packets keep their order")
	fl.StringVar(&l.loss, prefix+"loss", "", "percent of packets lost, "+scope+" (e.g. 0.5)")
	fl.StringVar(&l.duplicate, prefix+"duplicate", "", "percent of packets sent twice, "+scope)
	fl.StringVar(&l.corrupt, prefix+"corrupt", "", "percent of packets with one bit flipped, "+scope)
	fl.StringVar(&l.reorder, prefix+"reorder", "", "percent of packets sent at once, ahead of delayed ones, "+scope)
	fl.StringVar(&l.rate, prefix+"rate", "", "link rate in bit units, "+scope+" (e.g. 250kbit, 15mbit; 0bit lifts a profile's limit)")
	fl.StringVar(&l.gemodel, prefix+"gemodel", "", "Gilbert-Elliott burst loss instead of --"+prefix+"loss, "+scope+": P,R[,1-H[,1-K]] in percent, as tc's \"loss gemodel\" (e.g. 1,25)")
	fl.StringVar(&l.correlation, prefix+"correlation", "", "netem's correlation with the previous packet, "+scope+": KIND=PERCENT,… with KIND delay, loss, duplicate, corrupt or reorder (e.g. loss=25,delay=50)")
}

// geSpec parses --gemodel's P,R[,1-H[,1-K]].
func geSpec(v string) (*v1alpha1.GilbertElliottSpec, error) {
	f := strings.Split(v, ",")
	if len(f) < 2 || len(f) > 4 {
		return nil, fmt.Errorf("%q: want P,R[,1-H[,1-K]] (percent), e.g. 1,25", v)
	}
	for i, x := range f {
		if _, err := netem.ParsePercent(strings.TrimSpace(x)); err != nil {
			return nil, fmt.Errorf("%q: value %d: %w", v, i+1, err)
		}
		f[i] = strings.TrimSpace(x)
	}
	g := &v1alpha1.GilbertElliottSpec{GoodToBadPercent: f[0], BadToGoodPercent: f[1]}
	if len(f) > 2 {
		g.LossInBadPercent = &f[2]
	}
	if len(f) > 3 {
		g.LossInGoodPercent = &f[3]
	}
	return g, nil
}

// correlationSpec parses --correlation's KIND=PERCENT,….
func correlationSpec(v string) (*v1alpha1.CorrelationSpec, error) {
	c := &v1alpha1.CorrelationSpec{}
	for _, kv := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return nil, fmt.Errorf("%q: want KIND=PERCENT, e.g. loss=25", kv)
		}
		if _, err := netem.ParsePercent(val); err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		into := map[string]**string{"delay": &c.DelayPercent, "loss": &c.LossPercent, "duplicate": &c.DuplicatePercent, "corrupt": &c.CorruptPercent, "reorder": &c.ReorderPercent}[k]
		if into == nil {
			return nil, fmt.Errorf("%q: KIND is one of delay, loss, duplicate, corrupt, reorder", k)
		}
		*into = &val
	}
	return c, nil
}

// spec turns the flags of one scope into a LinkSpec; flag names it uses in errors carry prefix.
func (l *linkFlags) spec(prefix string) (v1alpha1.LinkSpec, bool, error) {
	var s v1alpha1.LinkSpec
	set := false
	for _, d := range []struct {
		value, name string
		into        **metav1.Duration
	}{{l.delay, "delay", &s.Delay}, {l.jitter, "jitter", &s.Jitter}} {
		if d.value == "" {
			continue
		}
		v, err := netem.ParseDuration(d.value)
		if err != nil {
			return s, false, fmt.Errorf("--%s%s: %w", prefix, d.name, err)
		}
		*d.into, set = &metav1.Duration{Duration: v}, true
	}
	for _, p := range []struct {
		value string
		into  **string
	}{{l.loss, &s.LossPercent}, {l.duplicate, &s.DuplicatePercent}, {l.corrupt, &s.CorruptPercent}, {l.reorder, &s.ReorderPercent}, {l.rate, &s.Bandwidth}} {
		if p.value != "" {
			v := p.value
			*p.into, set = &v, true
		}
	}
	if l.gemodel != "" {
		if l.loss != "" {
			return s, false, fmt.Errorf("--%sgemodel: set either --%sloss or --%sgemodel, not both", prefix, prefix, prefix)
		}
		g, err := geSpec(l.gemodel)
		if err != nil {
			return s, false, fmt.Errorf("--%sgemodel: %w", prefix, err)
		}
		s.GilbertElliott, set = g, true
	}
	if l.correlation != "" {
		c, err := correlationSpec(l.correlation)
		if err != nil {
			return s, false, fmt.Errorf("--%scorrelation: %w", prefix, err)
		}
		s.Correlation, set = c, true
	}
	return s, set, nil
}

// networkSpec builds the spec.network the flags describe.
func (f netemFlags) networkSpec() (v1alpha1.NetworkSpec, error) {
	spec := v1alpha1.NetworkSpec{Profile: v1alpha1.NetworkProfile(f.profile), Direction: v1alpha1.NetworkDirection(f.direction)}
	both, bothSet, err := f.link.spec("")
	if err != nil {
		return spec, err
	}
	spec.LinkSpec = both
	up, upSet, err := f.up.spec("up-")
	if err != nil {
		return spec, err
	}
	down, downSet, err := f.down.spec("down-")
	if err != nil {
		return spec, err
	}
	if upSet {
		spec.Up = &up
	}
	if downSet {
		spec.Down = &down
	}
	if f.mtu != 0 {
		spec.MTUBytes = &f.mtu
	}
	if spec.Radio, err = f.radio.spec(); err != nil {
		return spec, err
	}
	if spec.Profile == "" {
		spec.Profile = v1alpha1.ProfileCustom
		if !bothSet && !upSet && !downSet && f.mtu == 0 {
			spec.Profile = v1alpha1.ProfileNone
		}
	}
	return spec, nil
}

// flagNames turns the spec fields Resolve names in its errors into this command's flags.
var flagNames = strings.NewReplacer(
	"spec.network.up.", "--up-", "spec.network.down.", "--down-", "spec.network.", "--",
	"lossPercent", "loss", "duplicatePercent", "duplicate", "corruptPercent", "corrupt",
	"reorderPercent", "reorder", "bandwidth", "rate", "mtuBytes", "mtu",
	"radio.inactivityTimer", "radio-inactivity", "radio.promotionDelay", "radio-promotion",
	"radio.pagingCycle", "radio-paging", "radio.psmAfter", "radio-psm",
)

// spec is spec.network.radio as the flags give it; nil without radio flags.
func (r radioFlags) spec() (*v1alpha1.RadioSpec, error) {
	var s v1alpha1.RadioSpec
	on := r.on
	for _, d := range []struct {
		value, name string
		into        **metav1.Duration
	}{{r.inactivity, "radio-inactivity", &s.InactivityTimer}, {r.promotion, "radio-promotion", &s.PromotionDelay},
		{r.paging, "radio-paging", &s.PagingCycle}, {r.sleep, "radio-psm", &s.PSMAfter}} {
		if d.value == "" {
			continue
		}
		// Not netem.ParseDuration, which stops at a delay's 1 h: paging cycles and PSM go
		// further; netem.ResolveRadio checks the bounds.
		v, err := time.ParseDuration(d.value)
		if err != nil {
			return nil, fmt.Errorf("--%s: %q is not a duration (e.g. 20s, 2.56s)", d.name, d.value)
		}
		*d.into, on = &metav1.Duration{Duration: v}, true
	}
	if !on {
		return nil, nil
	}
	return &s, nil
}

// runNetem runs args on the device side of the link the flags describe and returns its exit
// code. The link and every process it started are gone when it returns.
func runNetem(ctx context.Context, f netemFlags, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int, err error) {
	spec, err := f.networkSpec()
	if err != nil {
		return 0, err
	}
	// The server, COMMAND and msgbench share stderr; a writer that is no file gets written by
	// os/exec's copying goroutines at the same time.
	stderr = lockWriter(stderr)
	resolved, err := plan.ResolveNetwork(spec)
	if err != nil {
		return 0, errors.New(flagNames.Replace(err.Error()))
	}
	config := resolved.Link
	link, err := emulator.Start(config, emulator.Options{Seed: f.seed, QueuePackets: f.queue, Radio: resolved.Radio})
	if err != nil {
		return 0, err
	}
	defer func() {
		if cerr := link.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	fmt.Fprintf(stderr, "msgbench netem: link %s %s\n", link.Name(), config.String())
	fmt.Fprintf(stderr, "msgbench netem: device %s (nsenter --net=%s), server %s (nsenter --net=%s)\n",
		addrList(link.Device()), link.Device().Path(), addrList(link.Server()), link.Server().Path())
	env := append(os.Environ(), link.Env()...)

	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(signals)

	if f.serverCommand != "" {
		server := exec.Command("sh", "-c", f.serverCommand)
		server.Env, server.Stdout, server.Stderr = env, stderr, stderr
		// Its own process group: Ctrl-C in the terminal stops COMMAND, and msgbench then stops the
		// server and whatever the shell started, together.
		server.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := link.Server().Start(server); err != nil {
			return 0, fmt.Errorf("--server-command: %w", err)
		}
		exited := make(chan struct{})
		go func() { _ = server.Wait(); close(exited) }()
		defer stopGroup(server, exited, f.killWait)
		if f.serverPort > 0 {
			if err := waitForPort(link, f.serverPort, f.serverWait, server, exited, signals); err != nil {
				return 0, err
			}
		}
	}

	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = env, stdin, stdout, stderr
	if err := link.Device().Start(cmd); err != nil {
		return 0, err
	}
	code = waitForward(ctx, cmd, signals, f.killWait)
	printStats(stderr, link)
	return code, nil
}

// waitForward waits for cmd and relays signals: SIGTERM at once; SIGINT only if cmd has not
// exited killWait later (from a terminal it got the Ctrl-C itself, being in the foreground
// process group); a second signal kills it. A cancelled ctx counts as SIGTERM.
func waitForward(ctx context.Context, cmd *exec.Cmd, osSignals <-chan os.Signal, killWait time.Duration) int {
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	signals := make(chan os.Signal, 1)
	go func() {
		cancelled := ctx.Done()
		for {
			var sig os.Signal
			select {
			case sig = <-osSignals:
			case <-cancelled:
				sig, cancelled = syscall.SIGTERM, nil
			case <-done:
				return
			}
			select {
			case signals <- sig:
			case <-done:
				return
			}
		}
	}()
	received := 0
	var grace <-chan time.Time
	var pending os.Signal
	for {
		select {
		case <-done:
			return exitCode(cmd.ProcessState)
		case sig := <-signals:
			received++
			switch {
			case received > 1:
				_ = cmd.Process.Kill()
			case sig == syscall.SIGTERM:
				_ = cmd.Process.Signal(sig)
				grace = time.After(killWait)
			default:
				pending = sig
				grace = time.After(killWait)
			}
		case <-grace:
			if pending != nil {
				_ = cmd.Process.Signal(pending)
				pending, grace = nil, time.After(killWait)
				continue
			}
			_ = cmd.Process.Kill()
		}
	}
}

// exitCode is the shell's convention: the exit status, or 128 + the signal that ended it.
func exitCode(s *os.ProcessState) int {
	if ws, ok := s.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return s.ExitCode()
}

// stopGroup stops a process group started with Setpgid: SIGTERM, then SIGKILL after wait.
// exited closes when its leader has been waited for.
func stopGroup(cmd *exec.Cmd, exited <-chan struct{}, wait time.Duration) {
	pgid := cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(wait):
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-exited
}

// waitForPort waits until something listens on TCP port in the server namespace. It reads the
// socket table rather than connecting, so no packet crosses the link and a one-client server
// (iperf3 -1) keeps its client.
func waitForPort(link *emulator.Link, port int, wait time.Duration, server *exec.Cmd, exited <-chan struct{}, signals <-chan os.Signal) error {
	deadline := time.Now().Add(wait)
	for {
		ok, err := link.Server().TCPListening(port)
		if err != nil {
			return fmt.Errorf("--server-port: %w", err)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("--server-port: nothing listens on port %d after %v (is --server-command right?)", port, wait)
		}
		select {
		case sig := <-signals:
			return fmt.Errorf("interrupted (%v) while waiting for the server", sig)
		case <-exited:
			return fmt.Errorf("--server-command %q exited before listening on port %d", server.Args[len(server.Args)-1], port)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func addrList(ns *emulator.Namespace) string {
	var s []string
	for _, a := range ns.Addrs() {
		s = append(s, a.String())
	}
	return strings.Join(s, " ")
}

// printStats prints the forwarder's counters, one row per direction.
func printStats(w io.Writer, link *emulator.Link) {
	st := link.Stats()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "direction\tpackets\tbytes\tdelivered\tlost\tqueue drops\tduplicated\tcorrupted\treordered\tlate ≥1ms\tmax late\t\n")
	for _, d := range []struct {
		name string
		s    emulator.DirectionStats
	}{{"up", st.Up}, {"down", st.Down}} {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%v\t\n", d.name, d.s.Packets, d.s.Bytes, d.s.Delivered,
			d.s.Lost, d.s.QueueDrops, d.s.Duplicated, d.s.Corrupted, d.s.Reordered, d.s.Late, d.s.MaxLate.Round(time.Microsecond))
	}
	_ = tw.Flush()
	if r := st.Radio; r.Devices > 0 {
		fmt.Fprintf(w, "radio: %d devices, %d promotions (%d pagings, %d PSM wake-ups), %d packets held %v in all (at most %v)\n",
			r.Devices, r.Promotions, r.Pagings, r.PSMWakeups, r.HeldPackets, r.HoldTime.Round(time.Millisecond), r.MaxHold.Round(time.Millisecond))
	}
}

// lockedWriter serialises writes to a writer several goroutines share.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// lockWriter wraps w unless it is a file, which child processes write to directly.
func lockWriter(w io.Writer) io.Writer {
	if _, ok := w.(*os.File); ok {
		return w
	}
	return &lockedWriter{w: w}
}
