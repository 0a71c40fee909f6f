package plan_test

import (
	"reflect"
	"testing"

	"github.com/msgbench/msgbench/plan"
)

// setsOf is each set as name: groups (replicas), for comparing placements.
func setsOf(sets []plan.WorkerSet) []string {
	var out []string
	for _, s := range sets {
		d := s.Name + ":"
		for _, g := range s.Groups {
			d += " " + g
		}
		if s.Own() && s.Network == nil {
			d += " (placed)" // a set of its own for a group's placement
		}
		if !s.Own() && s.Network != nil {
			d += " (a shared set with a link)"
		}
		out = append(out, d+" x"+string(rune('0'+s.Replicas)))
	}
	return out
}

func TestPlacement(t *testing.T) {
	for _, c := range []struct {
		sample string
		set    []string
		want   []string
	}{
		// A flat run: one set, every worker runs everything.
		{"mqtt-qos1.yaml", []string{"workers.replicas=3"}, []string{": x3"}},
		// A fleet on the run's link: one set, every group in it (no --groups).
		{"fleets/telemetry-fan-in.yaml", nil, []string{": x1"}},
		// The mixed fleet: the dashboards (no link of their own) share the first set; each
		// group behind its own link gets one worker of its own.
		{"fleets/mixed-fleet.yaml", nil, []string{": dashboards x1", "sensors: sensors x1", "site-gateways: site-gateways x1", "meters: meters x1"}},
		// A group network of profile none is no link: it stays in the shared set.
		{"fleets/mixed-fleet.yaml", []string{"groups[sensors].network.profile=none"},
			[]string{": sensors dashboards x1", "site-gateways: site-gateways x1", "meters: meters x1"}},
		// A placement of its own: the group gets pods of its own, without a link.
		{"fleets/mixed-fleet.yaml", []string{"groups[sensors].network.profile=none", "groups[dashboards].placement.nodeSelector.zone=lan"},
			[]string{": sensors x1", "site-gateways: site-gateways x1", "meters: meters x1", "dashboards: dashboards (placed) x1"}},
		// Every group on its own link: no shared set.
		{"fleets/mixed-fleet.yaml", []string{"groups[dashboards].network.profile=lte"},
			[]string{"sensors: sensors x1", "site-gateways: site-gateways x1", "meters: meters x1", "dashboards: dashboards x1"}},
	} {
		p, err := plan.Compile(read(t, c.sample, c.set...), plan.Kubernetes)
		if err != nil {
			t.Errorf("%s %v: %v", c.sample, c.set, err)
			continue
		}
		sets := p.Placement()
		if got := setsOf(sets); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %v: placement %q, want %q", c.sample, c.set, got, c.want)
		}
		// Every group runs in exactly one set.
		seen := map[string]int{}
		for _, s := range sets {
			for _, g := range p.SetGroups(s) {
				seen[g.Name]++
			}
		}
		for _, g := range p.Groups {
			if seen[g.Name] != 1 {
				t.Errorf("%s %v: group %s runs in %d sets", c.sample, c.set, g.Name, seen[g.Name])
			}
		}
	}
}
