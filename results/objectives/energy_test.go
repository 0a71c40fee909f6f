package objectives

import (
	"strings"
	"testing"

	"github.com/msgbench/msgbench/results"
)

// Energy figures take their units (J, A with m, u, µ and k), days a number; a bare number for
// energy or current is refused, naming the unit to write.
func TestEnergyObjectives(t *testing.T) {
	r := &results.Result{Energy: &results.Energy{PerMessageMillijoules: results.Float64(4.2), MeanMilliamps: 0.015, BatteryDays: results.Float64(4000)}}
	for _, c := range []struct {
		expr     string
		met      bool
		measured string
	}{
		{"energy.perMessage <= 5mJ", true, "4.2mJ"},
		{"energy.perMessage <= 4000uJ", false, "4200uJ"},
		{"energy.perMessage < 0.005J", true, "0.0042J"},
		{"energy.meanCurrent <= 20uA", true, "15uA"},
		{"energy.meanCurrent <= 0.01mA", false, "0.015mA"},
		{"energy.batteryDays >= 3650", true, "4000"},
		{"energy.batteryDays >= 10k", false, "4k"},
	} {
		o, err := Parse(c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		out := JudgeResult([]Objective{o}, r)[0]
		if out.Met != c.met || o.Format(out.Measured) != c.measured {
			t.Errorf("%s: met %v, measured %s; want %v, %s", c.expr, out.Met, o.Format(out.Measured), c.met, c.measured)
		}
	}
	for _, c := range []struct{ expr, want string }{
		{"energy.perMessage <= 5", "write it with its unit, such as 5mJ"},
		{"energy.meanCurrent <= 5mJ", "a current: write it with its unit"},
	} {
		if _, err := Parse(c.expr); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.expr, err, c.want)
		}
	}
	// A run without a power model says so.
	o, _ := Parse("energy.perMessage <= 5mJ")
	if out := JudgeResult([]Objective{o}, &results.Result{})[0]; out.Met || !strings.Contains(out.Reason, "spec.network.radio.energy") {
		t.Errorf("no energy: %+v", out)
	}
}
