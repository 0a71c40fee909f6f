package netem

import (
	"fmt"
	"strconv"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/energy"
)

// Energy is spec.network.radio.energy resolved: the power model with its overrides, the link
// as the model sees it (the rates that set each packet's airtime, the radio's timers), and the
// battery.
type Energy struct {
	Model   energy.Model
	Link    energy.Link
	Battery *int32
}

// ResolveEnergy is spec.network.radio.energy on top of the named model (default: the profile's),
// for a link and radio already resolved; nil without it. Errors name the field.
func ResolveEnergy(spec v1alpha1.NetworkSpec, link Link, radio Radio) (*Energy, error) {
	if spec.Radio == nil || spec.Radio.Energy == nil {
		return nil, nil
	}
	s := spec.Radio.Energy
	name := s.Model
	if name == "" {
		name = string(spec.Profile)
	}
	m, ok := energy.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("spec.network.radio.energy.model: profile %q has no power model; name one: %v", spec.Profile, energy.ModelNames())
	}
	e := &Energy{Model: m, Battery: s.BatteryMilliampHours, Link: energy.Link{
		UpBitsPerSecond: float64(link.Up.RateBitsPerSecond), DownBitsPerSecond: float64(link.Down.RateBitsPerSecond),
		InactivityTimer: radio.InactivityTimer, PromotionDelay: radio.PromotionDelay, PagingCycle: radio.PagingCycle, PSMAfter: radio.PSMAfter,
		DownlinkDelay: link.Down.Delay}}
	e.Model = e.Model.AtRates(e.Link) // an override below is the power itself
	set := func(field string, v *string, into *float64) error {
		if v == nil {
			return nil
		}
		x, err := strconv.ParseFloat(*v, 64)
		if err != nil || x < 0 {
			return fmt.Errorf("spec.network.radio.energy.%s: %q is not a non-negative number", field, *v)
		}
		*into = x
		return nil
	}
	if err := set("voltage", s.Voltage, &e.Model.VoltageV); err != nil {
		return nil, err
	}
	if w := s.Milliwatts; w != nil {
		for _, f := range []struct {
			name string
			v    *string
			into *float64
		}{
			{"transmit", w.Transmit, &e.Model.TxMW}, {"receive", w.Receive, &e.Model.RxMW}, {"connected", w.Connected, &e.Model.ConnectedMW},
			{"promotion", w.Promotion, &e.Model.PromotionMW}, {"idle", w.Idle, &e.Model.IdleMW}, {"paging", w.Paging, &e.Model.PagingMW},
			{"psm", w.PSM, &e.Model.PSMMW},
		} {
			if err := set("milliwatts."+f.name, f.v, f.into); err != nil {
				return nil, err
			}
		}
	}
	if s.PagingOnDuration != nil {
		e.Model.PagingOnDuration = s.PagingOnDuration.Duration
	}
	if err := e.Model.Validate(e.Link); err != nil {
		return nil, fmt.Errorf("spec.network.radio.energy: %w", err)
	}
	return e, nil
}

// Parameters are the numbers the energy is computed with, as a result records them.
func (e *Energy) Parameters() map[string]any {
	m := e.Model
	return map[string]any{
		"voltage": m.VoltageV, "milliwatts": map[string]float64{
			"transmit": m.TxMW, "receive": m.RxMW, "connected": m.ConnectedMW, "promotion": m.PromotionMW,
			"idle": m.IdleMW, "paging": m.PagingMW, "psm": m.PSMMW,
		},
		"pagingOnDuration": m.PagingOnDuration.String(),
		"upBitsPerSecond":  e.Link.UpBitsPerSecond, "downBitsPerSecond": e.Link.DownBitsPerSecond,
		"inactivityTimer": e.Link.InactivityTimer.String(), "promotionDelay": e.Link.PromotionDelay.String(),
		"pagingCycle": e.Link.PagingCycle.String(), "psmAfter": e.Link.PSMAfter.String(),
		"downlinkDelay": e.Link.DownlinkDelay.String(),
		"source":        m.Source,
	}
}
