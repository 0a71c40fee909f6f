package loadgen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/msgbench/msgbench/plan"
	"github.com/msgbench/msgbench/results"
)

// A run's device groups can be spread over several workers (Options.Groups): on Kubernetes, a
// group behind a link of its own runs in pods of its own, which the link's NetworkChaos selects.
// Each worker then counts what it can see, and results.Merge adds the workers' shares up:
//   - the messages its publishers sent, as the deliveries they call for at every subscribing
//     group (fleetExpected: the subscriptions are the plan's, so no worker needs another's
//     clients to know them);
//   - the deliveries its subscribers got, from any worker's publishers (the id in a message's
//     header is global), with the end-to-end latency put on one clock (below).
//
// A late group counts from its publishers' sequence numbers at its join, which only its own
// process sees: its publishers must run beside it (checkSplit; a Kubernetes-only rule of the
// CRD says the same up front).

// heldGroups is which of the plan's groups this worker runs, by index.
func heldGroups(p *plan.Plan, names []string) ([]bool, error) {
	held := make([]bool, len(p.Groups))
	if len(names) == 0 {
		for i := range held {
			held[i] = true
		}
		return held, nil
	}
	if p.Groups[0].Fleet == nil {
		return nil, fmt.Errorf("loadgen: --groups %s: the spec has no device groups (spec.groups)", strings.Join(names, ","))
	}
	for _, n := range names {
		i := slices.IndexFunc(p.Groups, func(g plan.Group) bool { return g.Name == n })
		if i < 0 {
			var all []string
			for _, g := range p.Groups {
				all = append(all, g.Name)
			}
			return nil, fmt.Errorf("loadgen: --groups: %q is not a device group of the spec (it has %s)", n, strings.Join(all, ", "))
		}
		held[i] = true
	}
	return held, nil
}

// checkSplit refuses a split that would count a late group wrong: a late group that receives
// from a publishing group another worker runs.
func (r *run) checkSplit() error {
	if !r.split {
		return nil
	}
	for _, sg := range r.groups {
		if sg.remote || sg.start() == 0 || sg.g.Fleet == nil || (sg.g.Fleet.Topics == nil && sg.g.Fleet.Filter == "") {
			continue
		}
		for _, pg := range r.groups {
			if pg.remote && pg.g.Publishers > 0 && r.reaches(pg, sg) {
				return fmt.Errorf("loadgen: device group %s joins late (start) and receives from group %s, which another worker runs: a late group counts from its publishers' sequence numbers at its join, so they must run in its worker", sg.g.Name, pg.g.Name)
			}
		}
	}
	return nil
}

// reaches reports whether a topic pg publishes to matches a subscription of sg.
func (r *run) reaches(pg, sg *groupRun) bool {
	for _, s := range sg.g.Share(0, 1).Subscribers {
		_, filter := r.compiled.Subscription(sg.g, s.Index, r.o.RunID)
		for i := range int(pg.g.Publishers) {
			first, step, _ := pg.g.PublisherTopics(i)
			for j := range pg.g.TopicsOf(i) {
				if plan.MatchTopic(filter, r.compiled.TopicName(pg.g.Fleet.Topics, first+j*step, r.o.RunID)) {
					return true
				}
			}
		}
	}
	return false
}

// publisherOf is the group of the publisher whose messages carry id, and its index in it.
func (r *run) publisherOf(id uint32) (*groupRun, int) {
	for _, gr := range r.groups {
		if gr.g.Fleet == nil {
			continue
		}
		if k := int(id) - gr.base; k >= 0 && k < int(gr.g.Publishers) {
			return gr, k
		}
	}
	return nil, 0
}

// clocks are the workers' clock offsets from the coordinator's (Options.Clocks), read once the
// start signal came.
type clocks struct {
	own    *PeerClock
	byName map[string]*PeerClock
}

func (r *run) readClocks() {
	if r.o.Clocks == nil || !r.split {
		return
	}
	c := &clocks{byName: map[string]*PeerClock{}}
	all := r.o.Clocks()
	for i := range all {
		for _, n := range all[i].Groups {
			c.byName[n] = &all[i]
		}
	}
	for _, gr := range r.groups {
		if !gr.remote && c.byName[gr.g.Name] != nil {
			c.own = c.byName[gr.g.Name]
		}
	}
	r.clocks.Store(c)
}

// clockOf says how a message from group pg, run by another worker, is put on this worker's
// clock: the nanoseconds to add to its send time, and what the pair's result says about it.
// Without both workers' offsets the time stays uncorrected, and the pair says so.
func (r *run) clockOf(pg *groupRun) (shiftNanos int64, pc *results.PairClock) {
	c := r.clocks.Load()
	if c == nil || c.own == nil || c.byName[pg.g.Name] == nil {
		return 0, &results.PairClock{Uncorrected: true}
	}
	theirs := c.byName[pg.g.Name]
	// Their clock reads t+theirs when the coordinator's reads t, ours t+own: a send time of
	// theirs is on ours once own-theirs is added.
	d := c.own.OffsetMicros - theirs.OffsetMicros
	return d * 1000, &results.PairClock{CorrectionMicros: d, UncertaintyMicros: (max(c.own.RTTMicros, 1) + max(theirs.RTTMicros, 1) + 1) / 2}
}
