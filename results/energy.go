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
	e := &Energy{Model: model.Name, Parameters: params, Devices: len(accounts), Seconds: window.Seconds(), Messages: messages,
		BatteryMilliampHours: battery}
	var sum energy.Account
	currents := make([]float64, 0, len(accounts))
	for _, a := range accounts {
		sum.Add(a)
		currents = append(currents, a.MeanMilliamps(model))
	}
	e.Millijoules, e.Promotions = sum.TotalMJ(), sum.Promotions
	if messages > 0 {
		e.PerMessageMillijoules = Float64(e.Millijoules / messages)
	}
	if n := len(currents); n > 0 {
		slices.Sort(currents)
		var total float64
		for _, c := range currents {
			total += c
		}
		e.MeanMilliamps = total / float64(n)
		rank := func(p float64) float64 { return currents[max(0, int(math.Ceil(p*float64(n)))-1)] }
		e.DeviceMilliampsP50, e.DeviceMilliampsP99 = rank(0.50), rank(0.99)
	}
	seconds := sum.Seconds()
	for s, name := range energy.StateNames() {
		st := EnergyState{State: name, Seconds: sum.Time[s].Seconds(), Millijoules: sum.EnergyMJ[s], MilliwattsSet: model.Power(energy.State(s))}
		if e.Millijoules > 0 {
			st.SharePercent = 100 * st.Millijoules / e.Millijoules
		}
		if seconds > 0 {
			st.TimePercent = 100 * st.Seconds / seconds
		}
		e.States = append(e.States, st)
	}
	if battery != nil && e.MeanMilliamps > 0 {
		e.BatteryDays = Float64(float64(*battery) / e.MeanMilliamps / 24)
		e.BatteryDaysP99 = Float64(float64(*battery) / e.DeviceMilliampsP99 / 24)
	}
	return e
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
