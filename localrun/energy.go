package localrun

import (
	"cmp"
	"slices"
	"time"

	"github.com/msgbench/msgbench/energy"
	"github.com/msgbench/msgbench/netem"
	"github.com/msgbench/msgbench/netem/emulator"
	"github.com/msgbench/msgbench/results"
)

// energyOf attaches to a result the energy of the devices behind link l (spec.network.radio
// energy): the run's when group is "", else the group's. Every device — a client, with all the
// connections ports saw it open — is accounted over the measured window from its timeline as the
// radio stage let its packets on the air, starting asleep when the link started.
func energyOf(l *emulator.Link, e *netem.Energy, ports *devicePorts, group string, warmup time.Duration) func(*results.Result) {
	return func(res *results.Result) {
		epoch, flows := l.Timelines()
		if epoch.IsZero() || res.MeasuredSeconds <= 0 {
			return
		}
		window := time.Duration(res.MeasuredSeconds * float64(time.Second))
		from := res.StartTime.Add(warmup).Sub(epoch)
		devices := byDevice(flows, ports.owner)
		accounts := make([]energy.Account, 0, len(devices))
		for _, packets := range devices {
			accounts = append(accounts, energy.Timeline(e.Model, e.Link, packets, 0, from, from+window))
		}
		section := results.NewEnergy(e.Model, e.Parameters(), accounts, window, res.EnergyMessages(group), e.Battery)
		if group == "" {
			res.Energy = section
		} else if g := res.Group(group); g != nil {
			g.Energy = section
		}
	}
}

// byDevice merges the flows' timelines by the device each belongs to (owner; a flow of no known
// client is a device of its own), each device's packets in time order.
func byDevice(flows []emulator.DeviceTimeline, owner func(flow string) string) [][]energy.Packet {
	index := map[string]int{}
	var out [][]energy.Packet
	for _, f := range flows {
		id := owner(f.Device)
		if id == "" {
			id = f.Device
		}
		i, ok := index[id]
		if !ok {
			i, index[id] = len(out), len(out)
			out = append(out, nil)
		}
		out[i] = append(out[i], f.Packets...)
	}
	for _, ps := range out {
		slices.SortStableFunc(ps, func(a, b energy.Packet) int { return cmp.Compare(a.At, b.At) })
	}
	return out
}
