package loadgen

import (
	"fmt"
	"time"

	"github.com/msgbench/msgbench/energy"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/loadgen/radiolog"
	"github.com/msgbench/msgbench/plan"
	"github.com/msgbench/msgbench/results"
)

// radioAccount is one energy section this worker accounts from its sockets
// (Options.AccountRadio): the run's, or a group's behind a link of its own.
type radioAccount struct {
	group string // "": the run's
	net   *plan.Network
	log   *radiolog.Log
}

// radioDial is dial with the reads and writes of group g's clients recorded, when g's devices
// have a radio energy model and this worker accounts it from its sockets.
func (r *run) radioDial(g *plan.Group, dial drivers.DialFunc) drivers.DialFunc {
	if !r.o.AccountRadio {
		return dial
	}
	n, group := r.compiled.RadioOf(g)
	if n == nil {
		return dial
	}
	var acc *radioAccount
	for _, a := range r.radio {
		if a.group == group {
			acc = a
		}
	}
	if acc == nil {
		acc = &radioAccount{group: group, net: n, log: radiolog.New(func() time.Duration { return time.Duration(r.now()) })}
		r.radio = append(r.radio, acc)
	}
	if dial == nil {
		dial = (&drivers.Config{}).Dialer()
	}
	return acc.log.Wrap(dial)
}

// radioEnergy adds the energy of the devices this worker accounted from its sockets to res,
// over the measured window: every device asleep when the worker started, its packets as the
// socket log's rules make them (radiolog.Packets), reaching the device when it read them.
func (r *run) radioEnergy(res *results.Result) {
	if len(r.radio) == 0 || res.MeasuredSeconds <= 0 {
		return
	}
	from := time.Duration(r.window.Load())
	window := time.Duration(res.MeasuredSeconds * float64(time.Second))
	for _, a := range r.radio {
		e := a.net.Energy
		link := e.Link
		link.DownlinkDelay = 0 // a read is when the packet reached the device
		timelines := a.log.Timelines(radiolog.DefaultRules(a.net.Link.RTT()))
		accounts := make([]energy.Account, len(timelines))
		currents := make([]float64, len(timelines))
		for i, packets := range timelines {
			accounts[i] = energy.Timeline(e.Model, link, packets, 0, from, from+window)
			currents[i] = accounts[i].MeanMilliamps(e.Model)
		}
		section := results.NewEnergy(e.Model, e.Parameters(), accounts, window, res.EnergyMessages(a.group), e.Battery)
		section.DeviceMilliamps = currents
		where := "the devices'"
		if a.group == "" {
			res.Energy = section
		} else if g := res.Group(a.group); g != nil {
			g.Energy = section
			where = fmt.Sprintf("group %s's devices'", a.group)
		}
		c := results.Caveat{Type: results.CaveatRadioAccountedOnly, Worker: &r.o.Worker, Message: fmt.Sprintf(
			"%s radio (%s) was accounted from what their sockets wrote and read, not emulated: no packet waited for a promotion or a paging occasion, so latencies leave those out, "+
				"and the energy counts IP headers and TCP's handshakes and ACKs by rule, not as sent (docs/energy.md, \"Energy on Kubernetes\")", where, e.Model.Name)}
		res.AddCaveat(c)
	}
}
