package results

import (
	"math"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/energy"
)

// The energy of devices accounted in several workers merges to what one process accounting all
// of them gives: states and promotions summed, the spread over every device's current, the
// messages the merged counts', and no device currents left in the merged result.
func TestMergeEnergyIsOneProcesss(t *testing.T) {
	m, _ := energy.Lookup("nb-iot")
	account := func(connected, psm time.Duration, promotions int) energy.Account {
		var a energy.Account
		a.Time[energy.Connected], a.EnergyMJ[energy.Connected] = connected, m.ConnectedMW*connected.Seconds()
		a.Time[energy.PSM], a.EnergyMJ[energy.PSM] = psm, m.PSMMW*psm.Seconds()
		a.Promotions = promotions
		return a
	}
	devices := []energy.Account{account(2*time.Second, 8*time.Second, 1), account(5*time.Second, 5*time.Second, 2), account(0, 10*time.Second, 0)}
	battery := int32(1000)
	spec := &v1alpha1.MessagingBenchmarkSpec{Workload: v1alpha1.WorkloadSpec{PayloadBytes: 10}}
	part := func(accounts []energy.Account, sent int64) *Result {
		e := NewEnergy(m, nil, accounts, 10*time.Second, 0, &battery)
		for _, a := range accounts {
			e.DeviceMilliamps = append(e.DeviceMilliamps, a.MeanMilliamps(m))
		}
		return &Result{Name: "b", Spec: spec, Phase: "Succeeded", MeasuredSeconds: 10, Sent: sent, Lost: Int64(0), Energy: e}
	}
	merged, err := Merge([]*Result{part(devices[:1], 4), part(devices[1:], 6)})
	if err != nil {
		t.Fatal(err)
	}
	one := NewEnergy(m, nil, devices, 10*time.Second, 10, &battery)
	got := merged.Energy
	if got.DeviceMilliamps != nil {
		t.Errorf("merged device currents %v", got.DeviceMilliamps)
	}
	if got.Devices != 3 || got.Promotions != 3 || got.Messages != 10 || math.Abs(got.Millijoules-one.Millijoules) > 1e-9 ||
		math.Abs(got.MeanMilliamps-one.MeanMilliamps) > 1e-12 || got.DeviceMilliampsP50 != one.DeviceMilliampsP50 ||
		got.DeviceMilliampsP99 != one.DeviceMilliampsP99 || math.Abs(*got.BatteryDays-*one.BatteryDays) > 1e-9 ||
		math.Abs(*got.PerMessageMillijoules-*one.PerMessageMillijoules) > 1e-9 {
		t.Errorf("merged %+v\nwant %+v", got, one)
	}
	for i, st := range got.States {
		if w := one.States[i]; math.Abs(st.Seconds-w.Seconds) > 1e-9 || math.Abs(st.SharePercent-w.SharePercent) > 1e-9 || math.Abs(st.TimePercent-w.TimePercent) > 1e-9 {
			t.Errorf("state %s: %+v, want %+v", st.State, st, w)
		}
	}
}
