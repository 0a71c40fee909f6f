//go:build linux

package emulator

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msgbench/msgbench/energy"
	"github.com/msgbench/msgbench/internal/spawn"
	"github.com/msgbench/msgbench/netem"
)

// The link's addresses come from the benchmarking ranges (RFC 2544 for IPv4, RFC 5180 for
// IPv6), which no real network routes. Every link uses the same ones: each lives in namespaces
// of its own.
var (
	devicePrefix4 = netip.MustParsePrefix("198.18.0.1/30")
	serverPrefix4 = netip.MustParsePrefix("198.18.0.2/30")
	devicePrefix6 = netip.MustParsePrefix("2001:2::1/64")
	serverPrefix6 = netip.MustParsePrefix("2001:2::2/64")
)

// Interface names of the TUN devices, each in its own namespace.
const (
	deviceInterface = "msgb-dev"
	serverInterface = "msgb-srv"
)

// Link is a running emulated link between a device namespace and a server namespace.
type Link struct {
	name           string
	configMu       sync.Mutex // guards config, which SetConfig changes
	config         netem.Link
	device, server *Namespace
	tuns           []*os.File
	up, down       *pipe
	radio          *radio         // nil without Options.Radio
	spawner        *spawn.Spawner // its thread forks the link's children; Close stops it
	wg             sync.WaitGroup

	closeOnce sync.Once
	closeErr  error
}

var (
	linkCounter atomic.Uint64
	reapOnce    sync.Once
)

// Start creates a link applying config: a device and a server namespace joined by the
// forwarder. It first kills processes that a dead msgbench left running in its links. Close the
// link when done; if msgbench dies instead, the kernel removes the namespaces and TUN devices
// with it and its children get SIGKILL.
func Start(config netem.Link, opts Options) (_ *Link, err error) {
	if err := CheckPrivileges(); err != nil {
		return nil, err
	}
	reapOnce.Do(reapStale)
	if opts.QueuePackets <= 0 {
		opts.QueuePackets = DefaultQueuePackets
	}
	if opts.Seed == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		opts.Seed = binary.LittleEndian.Uint64(b[:]) | 1
	}
	name := fmt.Sprintf("msgb-%d-%d", os.Getpid(), linkCounter.Add(1)-1)
	tag := tagVar + "=" + name
	l := &Link{name: name, config: config, spawner: spawn.New()}
	defer func() {
		// l, not the result: "return nil, err" has set that to nil already.
		if err != nil {
			err = errors.Join(fmt.Errorf("link %s: %w", name, err), l.Close())
		}
	}()

	mtu := config.EffectiveMTU()
	sides := []struct {
		ns       **Namespace
		suffix   string
		ifname   string
		prefixes []netip.Prefix
	}{
		{&l.device, "device", deviceInterface, []netip.Prefix{devicePrefix4, devicePrefix6}},
		{&l.server, "server", serverInterface, []netip.Prefix{serverPrefix4, serverPrefix6}},
	}
	for _, side := range sides {
		ns, err := newNamespace(name+"-"+side.suffix, tag, l.spawner)
		if err != nil {
			return nil, err
		}
		*side.ns = ns
		ns.ifname = side.ifname
		prefixes := side.prefixes
		if mtu < ipv6MinMTU {
			prefixes = prefixes[:1]
		}
		for _, p := range prefixes {
			ns.addrs = append(ns.addrs, p.Addr())
		}
		var tun *os.File
		if err := ns.Do(func() error {
			var err error
			tun, err = openTUN(side.ifname, mtu, prefixes)
			return err
		}); err != nil {
			return nil, err
		}
		l.tuns = append(l.tuns, tun)
	}

	clk := newClock()
	if l.up, err = newPipe(l.tuns[0], l.tuns[1], config.Up, mtu, opts.QueuePackets, clk, opts.Seed); err != nil {
		return nil, err
	}
	if l.down, err = newPipe(l.tuns[1], l.tuns[0], config.Down, mtu, opts.QueuePackets, clk, opts.Seed+1); err != nil {
		return nil, err
	}
	if opts.Radio != nil {
		l.radio = newRadio(*opts.Radio, opts.Seed+2, clk, l.up, l.down)
		if opts.Timelines {
			l.radio.timelines = map[deviceKey][]energy.Packet{}
		}
	}
	for _, p := range []*pipe{l.up, l.down} {
		l.wg.Add(2)
		go func() { defer l.wg.Done(); p.readLoop() }()
		go func() { defer l.wg.Done(); p.writeLoop() }()
	}
	return l, nil
}

// Timelines returns each device's packets as they went on the air (Options.Timelines, with
// Radio), At counted from epoch (wall clock); none without.
func (l *Link) Timelines() (epoch time.Time, devices []DeviceTimeline) {
	if l.radio == nil || l.radio.timelines == nil {
		return time.Time{}, nil
	}
	return l.radio.clock.base, l.radio.deviceTimelines()
}

// Name is the link's name, msgb-<pid>-<n>, unique on this machine while the process lives.
func (l *Link) Name() string { return l.name }

// Config is the impairment the link applies.
func (l *Link) Config() netem.Link {
	l.configMu.Lock()
	defer l.configMu.Unlock()
	return l.config
}

// SetConfig changes both directions' impairment while packets flow: each direction applies c
// from the next packet its forwarder reads on; packets already queued keep the departure time
// the old impairment gave them, as with "tc qdisc change". An outage is Loss = netem.FractionOne
// both ways. The MTU cannot change (the TUN devices and the packet buffers are sized for it):
// a c with another effective MTU is refused and nothing changes. Safe for concurrent use.
func (l *Link) SetConfig(c netem.Link) error {
	l.configMu.Lock()
	defer l.configMu.Unlock()
	if c.EffectiveMTU() != l.config.EffectiveMTU() {
		return fmt.Errorf("link %s: the MTU cannot change while the link runs (%d → %d)", l.name, l.config.EffectiveMTU(), c.EffectiveMTU())
	}
	l.up.setImpairment(c.Up)
	l.down.setImpairment(c.Down)
	l.config = c
	return nil
}

// Device is the device side: where the load-generating clients run.
func (l *Link) Device() *Namespace { return l.device }

// Server is the server side: where the broker and gateway run.
func (l *Link) Server() *Namespace { return l.server }

// Stats returns the forwarder's counters so far.
func (l *Link) Stats() Stats {
	st := Stats{Up: l.up.snapshot(), Down: l.down.snapshot()}
	if l.radio != nil {
		st.Radio = l.radio.snapshot()
	}
	return st
}

// Env is the environment that tells a process where the other side is:
// MSGBENCH_SERVER_ADDR and MSGBENCH_DEVICE_ADDR (IPv4), and MSGBENCH_SERVER_ADDR6 and
// MSGBENCH_DEVICE_ADDR6 when the link carries IPv6.
func (l *Link) Env() []string {
	var env []string
	for _, side := range []struct {
		ns   *Namespace
		name string
	}{{l.server, "SERVER"}, {l.device, "DEVICE"}} {
		for _, a := range side.ns.addrs {
			key := "MSGBENCH_" + side.name + "_ADDR"
			if a.Is6() {
				key += "6"
			}
			env = append(env, key+"="+a.String())
		}
	}
	return env
}

// Close kills every process still running in the link's namespaces, stops the forwarder and
// releases the namespaces and TUN devices. It is safe to call more than once.
func (l *Link) Close() error {
	l.closeOnce.Do(func() {
		var errs []error
		for _, ns := range []*Namespace{l.device, l.server} {
			if ns != nil {
				errs = append(errs, ns.close())
			}
		}
		// TUN devices first: the readers stop, and with them every use of the alarms.
		for _, t := range l.tuns {
			errs = append(errs, t.Close())
		}
		for _, p := range []*pipe{l.up, l.down} {
			if p != nil {
				errs = append(errs, p.close())
			}
		}
		l.wg.Wait()
		for _, p := range []*pipe{l.up, l.down} {
			if p != nil && p.err != nil {
				errs = append(errs, fmt.Errorf("forwarder stopped early: %w", p.err))
			}
		}
		l.spawner.Stop()
		l.closeErr = errors.Join(errs...)
	})
	return l.closeErr
}
