package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/msgbench/msgbench/results"
)

// A run with a radio power model (spec.network.radio.energy, docs/energy.md) adds to its report
// an Energy section — the model and its source, the devices, energy per message, mean current,
// battery life and a table of the radio states — for the run's devices (Result.Energy) and for
// each group behind a link of its own (GroupResult.Energy), and a figure of each state's share
// of the energy (energyFigure).

// EnergySection is one set of devices' energy as the report shows it: the run's, or a group's.
type EnergySection struct {
	// Group is the group's name; empty for the run's devices.
	Group string
	// Model names the power model; Source is where its numbers come from (parameters'
	// "source"); Radio the timers and voltage applied.
	Model, Source, Radio string
	// Devices says how many radios were accounted and over what window; PerMessage, Current and
	// Battery the energy per message delivered, the mean current and its spread, and the
	// battery's life ("" without a battery).
	Devices, PerMessage, Current, Battery string
	States                                []EnergyStateRow
}

// EnergyStateRow is one radio state's time and energy, written as the table shows them.
type EnergyStateRow struct {
	State, Seconds, TimePercent, Millijoules, SharePercent, Milliwatts string
}

// energySections are a run's energy sections: the run's devices' first, then each group's that
// has its own; nil without energy.
func energySections(r *results.Result) []EnergySection {
	var out []EnergySection
	if r.Energy != nil {
		out = append(out, energySection("", r.Energy))
	}
	for i := range r.Groups {
		if g := &r.Groups[i]; g.Energy != nil {
			out = append(out, energySection(g.Name, g.Energy))
		}
	}
	return out
}

func energySection(group string, e *results.Energy) EnergySection {
	s := EnergySection{Group: group, Model: e.Model, Source: parameter(e, "source"), Radio: radioParameters(e),
		Devices: fmt.Sprintf("%d radios (one per client connection), each accounted over %s s; %d promotions (connection set-ups)",
			e.Devices, plain(e.Seconds), e.Promotions)}
	delivered := fmt.Sprintf("%s mJ in all over %s messages delivered", plain(e.Millijoules), plain(e.Messages))
	if e.PerMessageMillijoules != nil {
		s.PerMessage = fmt.Sprintf("%s mJ (%s)", plain(*e.PerMessageMillijoules), delivered)
	} else {
		s.PerMessage = fmt.Sprintf("no message delivered (%s mJ in all)", plain(e.Millijoules))
	}
	s.Current = fmt.Sprintf("%s mA per device (mean over the devices); p50 %s mA, p99 %s mA",
		plain(e.MeanMilliamps), plain(e.DeviceMilliampsP50), plain(e.DeviceMilliampsP99))
	if e.BatteryDays != nil && e.BatteryMilliampHours != nil {
		s.Battery = fmt.Sprintf("%s days on %d mAh at the mean current", plain(*e.BatteryDays), *e.BatteryMilliampHours)
		if e.BatteryDaysP99 != nil {
			s.Battery += fmt.Sprintf("; %s days at the p99 device's", plain(*e.BatteryDaysP99))
		}
	}
	for _, st := range e.States {
		s.States = append(s.States, EnergyStateRow{State: st.State, Seconds: plain(st.Seconds), TimePercent: plain(st.TimePercent) + " %",
			Millijoules: plain(st.Millijoules), SharePercent: plain(st.SharePercent) + " %", Milliwatts: plain(st.MilliwattsSet)})
	}
	return s
}

// parameter is one of the energy's parameters as text, "" when it has none.
func parameter(e *results.Energy, key string) string {
	v, ok := e.Parameters[key]
	if !ok || v == nil {
		return ""
	}
	switch t := v.(type) {
	case string:
		return t
	case float64:
		return plain(t)
	}
	return fmt.Sprint(v)
}

// radioParameters are the timers and the voltage the energy was computed with: "inactivity
// tail 20s, promotion 200ms, paging cycle 2.56s, PSM after 10s; 3.6 V".
func radioParameters(e *results.Energy) string {
	var parts []string
	for _, p := range []struct{ key, what string }{{"inactivityTimer", "inactivity tail"}, {"promotionDelay", "promotion"},
		{"pagingCycle", "paging cycle"}, {"psmAfter", "PSM after"}} {
		if v := parameter(e, p.key); v != "" && v != "0s" {
			parts = append(parts, p.what+" "+v)
		}
	}
	text := strings.Join(parts, ", ")
	if v := parameter(e, "voltage"); v != "" {
		text = strings.TrimPrefix(text+"; "+v+" V", "; ")
	}
	return text
}

// plain writes v to 4 significant digits without SI prefixes: "437.2", "21600", "0.0108".
func plain(v float64) string { return strconv.FormatFloat(roundSig(v, 4), 'f', -1, 64) }

// energyFigure draws each radio state's share of the devices' energy: a bar per state, one per
// set of devices with energy (the run's, each group's); nil without energy.
func energyFigure(r *results.Result) *Figure {
	type account struct {
		label string
		e     *results.Energy
	}
	var accounts []account
	if r.Energy != nil {
		accounts = append(accounts, account{"all devices", r.Energy})
	}
	for i := range r.Groups {
		if g := &r.Groups[i]; g.Energy != nil {
			accounts = append(accounts, account{"group " + g.Name, g.Energy})
		}
	}
	if len(accounts) == 0 {
		return nil
	}
	// The states in the model's order, those no devices spent time or energy in left out.
	var states []string
	for _, a := range accounts {
		for _, st := range a.e.States {
			if (st.Seconds > 0 || st.Millijoules > 0) && !slices.Contains(states, st.State) {
				states = append(states, st.State)
			}
		}
	}
	if len(states) == 0 {
		return nil
	}
	f := &Figure{ID: "energy-states", Title: "Where the radio energy went", YLabel: "share of the radio energy (%)", Bars: true, Categories: states,
		Caption: "Each radio state's share of the devices' energy in the measured window, from every packet each device sent and received (docs/energy.md); the Energy section's table has each state's time, millijoules and power."}
	if len(accounts) > 1 {
		f.Caption += " A bar per set of devices with its own link: the run's and each group's."
	}
	for i, a := range accounts {
		s := Series{Label: a.label, Colour: i}
		for _, st := range a.e.States {
			if j := slices.Index(states, st.State); j >= 0 {
				s.Values = append(s.Values, Value{X: float64(j), Y: st.SharePercent, N: 1})
			}
		}
		f.Series = append(f.Series, s)
	}
	return f
}
