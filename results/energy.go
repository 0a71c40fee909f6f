package results

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/msgbench/msgbench/energy"
)

// Energy is what the devices' radios spent in the measured window (spec.network.radio.energy,
// docs/energy.md), from every packet each device sent and received as its link's radio states
// let it on the air: the time and energy in each state, per message, as a mean current, and the
// battery life at the run's traffic.
type Energy struct {
	// Model names the power numbers (nb-iot, lte-m, lte, 5g-sa, wifi); Parameters are every number
	// applied (milliwatts, volts, durations), overrides included.
	Model      string         `json:"model"`
	Parameters map[string]any `json:"parameters"`
	// Devices counts the radios: one per client, with every connection it opened.
	Devices int `json:"devices"`
	// Seconds is the window each device is accounted over.
	Seconds float64 `json:"seconds"`
	// Millijoules is all the devices' energy in the window.
	Millijoules float64 `json:"millijoules"`
	// Messages is what the devices delivered: the messages they published in the window that
	// reached their subscribers (sent × the share of the deliveries they called for that
	// arrived) plus the messages they received in the window (localrun.delivered).
	Messages float64 `json:"messages"`
	// PerMessageMillijoules is Millijoules / Messages (nil without messages).
	PerMessageMillijoules *float64 `json:"perMessageMillijoules"`
	// MeanMilliamps is a device's mean current over the window, averaged over the devices;
	// DeviceMilliampsP50 and P99 its spread (nearest rank).
	MeanMilliamps      float64 `json:"meanMilliamps"`
	DeviceMilliampsP50 float64 `json:"deviceMilliampsP50"`
	DeviceMilliampsP99 float64 `json:"deviceMilliampsP99"`
	// States is every state's time (summed over the devices) and energy, and its share of it.
	States []EnergyState `json:"states"`
	// Promotions counts the connection set-ups in the window.
	Promotions int `json:"promotions"`
	// BatteryMilliampHours is spec's battery; BatteryDays its life at MeanMilliamps, and
	// BatteryDaysP99 at DeviceMilliampsP99 (the devices that empty theirs first).
	BatteryMilliampHours *int32   `json:"batteryMilliampHours,omitempty"`
	BatteryDays          *float64 `json:"batteryDays,omitempty"`
	BatteryDaysP99       *float64 `json:"batteryDaysP99,omitempty"`
	// DeviceMilliamps is every device's mean current, in a worker's part only: Merge takes the
	// spread over the workers' devices from them and leaves them out of the merged result.
	DeviceMilliamps []float64 `json:"deviceMilliamps,omitempty"`
}

// EnergyState is one radio state's part of the devices' time and energy.
type EnergyState struct {
	State         string  `json:"state"`
	Seconds       float64 `json:"seconds"`
	Millijoules   float64 `json:"millijoules"`
	SharePercent  float64 `json:"sharePercent"` // of the energy
	TimePercent   float64 `json:"timePercent"`  // of the devices' time
	MilliwattsSet float64 `json:"milliwatts"`   // the model's power in it
}

// NewEnergy sums the devices' accounts (one per device, over the same window) into the
// result's energy section. messages is what the devices delivered (Energy.Messages).
func NewEnergy(model energy.Model, params map[string]any, accounts []energy.Account, window time.Duration, messages float64, battery *int32) *Energy {
	var sum energy.Account
	currents := make([]float64, 0, len(accounts))
	for _, a := range accounts {
		sum.Add(a)
		currents = append(currents, a.MeanMilliamps(model))
	}
	states := make([]EnergyState, len(sum.Time))
	for s := range states {
		states[s] = EnergyState{State: energy.State(s).String(), Seconds: sum.Time[s].Seconds(), Millijoules: sum.EnergyMJ[s], MilliwattsSet: model.Power(energy.State(s))}
	}
	e := &Energy{Model: model.Name, Parameters: params, Seconds: window.Seconds(), Promotions: sum.Promotions, BatteryMilliampHours: battery}
	e.derive(states, currents, messages)
	return e
}

// derive sets every figure that follows from the states' sums, the devices' currents and the
// messages: the totals, shares, spread and battery life (NewEnergy's and mergeEnergy's).
func (e *Energy) derive(states []EnergyState, currents []float64, messages float64) {
	e.Devices, e.Messages, e.Millijoules, e.PerMessageMillijoules = len(currents), messages, 0, nil
	var seconds float64
	for _, st := range states {
		e.Millijoules += st.Millijoules
		seconds += st.Seconds
	}
	if messages > 0 {
		e.PerMessageMillijoules = Float64(e.Millijoules / messages)
	}
	e.MeanMilliamps, e.DeviceMilliampsP50, e.DeviceMilliampsP99 = 0, 0, 0
	if n := len(currents); n > 0 {
		currents = slices.Clone(currents)
		slices.Sort(currents)
		var total float64
		for _, c := range currents {
			total += c
		}
		e.MeanMilliamps = total / float64(n)
		rank := func(p float64) float64 { return currents[max(0, int(math.Ceil(p*float64(n)))-1)] }
		e.DeviceMilliampsP50, e.DeviceMilliampsP99 = rank(0.50), rank(0.99)
	}
	e.States = make([]EnergyState, len(states))
	for i, st := range states {
		st.SharePercent, st.TimePercent = 0, 0
		if e.Millijoules > 0 {
			st.SharePercent = 100 * st.Millijoules / e.Millijoules
		}
		if seconds > 0 {
			st.TimePercent = 100 * st.Seconds / seconds
		}
		e.States[i] = st
	}
	e.BatteryDays, e.BatteryDaysP99 = nil, nil
	if e.BatteryMilliampHours != nil && e.MeanMilliamps > 0 {
		e.BatteryDays = Float64(float64(*e.BatteryMilliampHours) / e.MeanMilliamps / 24)
		e.BatteryDaysP99 = Float64(float64(*e.BatteryMilliampHours) / e.DeviceMilliampsP99 / 24)
	}
}

// mergeEnergy is the energy of the workers' devices together (parts from workers that account
// none are nil), with the merged result's messages: states and promotions add up, the spread is
// over every device's current (DeviceMilliamps), which the merged section leaves out.
func mergeEnergy(parts []*Energy, messages float64) *Energy {
	var m *Energy
	var states []EnergyState
	var currents []float64
	for _, p := range parts {
		if p == nil {
			continue
		}
		if m == nil {
			m = &Energy{Model: p.Model, Parameters: p.Parameters, BatteryMilliampHours: p.BatteryMilliampHours}
			states = make([]EnergyState, len(p.States))
			for i, st := range p.States {
				states[i] = EnergyState{State: st.State, MilliwattsSet: st.MilliwattsSet}
			}
		}
		m.Seconds = max(m.Seconds, p.Seconds)
		m.Promotions += p.Promotions
		for i := range min(len(states), len(p.States)) {
			states[i].Seconds += p.States[i].Seconds
			states[i].Millijoules += p.States[i].Millijoules
		}
		currents = append(currents, p.DeviceMilliamps...)
	}
	if m != nil {
		m.derive(states, currents, messages)
	}
	return m
}

// EnergyMessages is what the devices delivered (Energy.Messages), of the run (group "") or of
// one of its groups: the messages they sent in the window, times the share of the deliveries
// those called for that arrived (all of them with no subscriber to expect any), plus the
// messages they received in the window — the window the energy is counted over.
func (r *Result) EnergyMessages(group string) float64 {
	if group == "" {
		return delivered(r.Sent, r.Expected, r.Lost, r.ReceivedInWindow)
	}
	g := r.Group(group)
	if g == nil {
		return 0
	}
	var expected, lost int64
	for _, p := range r.Pairs {
		if p.From == group {
			expected, lost = expected+p.Expected, lost+p.Lost
		}
	}
	return delivered(g.Sent, expected, &lost, g.ReceivedInWindow)
}

func delivered(sent, expected int64, lost *int64, received int64) float64 {
	share := 1.0
	if expected > 0 && lost != nil {
		share = float64(expected-*lost) / float64(expected)
	}
	return float64(sent)*share + float64(received)
}

// Summary is the energy in a line: per message, the mean current and its spread, the battery's
// life, and the states that took most of the energy.
func (e *Energy) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %d devices: ", e.Model, e.Devices)
	if e.PerMessageMillijoules != nil {
		fmt.Fprintf(&b, "%.3g mJ per message, ", *e.PerMessageMillijoules)
	}
	fmt.Fprintf(&b, "mean %.3g mA per device (p99 %.3g mA)", e.MeanMilliamps, e.DeviceMilliampsP99)
	if e.BatteryDays != nil {
		fmt.Fprintf(&b, ", %.3g days on %d mAh (p99 %.3g)", *e.BatteryDays, *e.BatteryMilliampHours, *e.BatteryDaysP99)
	}
	states := slices.Clone(e.States)
	sort.SliceStable(states, func(i, j int) bool { return states[i].SharePercent > states[j].SharePercent })
	var parts []string
	for _, st := range states {
		if st.SharePercent >= 1 && len(parts) < 3 {
			parts = append(parts, fmt.Sprintf("%s %.0f %%", st.State, st.SharePercent))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(&b, "; %s of the energy", strings.Join(parts, ", "))
	}
	return b.String()
}
