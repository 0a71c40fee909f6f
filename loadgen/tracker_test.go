package loadgen

import (
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

func TestTracker(t *testing.T) {
	var tr tracker
	type obs struct {
		seq      uint32
		dup, ooo bool
	}
	for i, o := range []obs{{0, false, false}, {1, false, false}, {3, false, false}, {2, false, true}, {2, true, false},
		{1, true, false}, {4, false, false}, {10000, false, false}, {5, true, false}, {9999, false, true}, {10000, true, false}} {
		dup, ooo := tr.observe(o.seq)
		if dup != o.dup || ooo != o.ooo {
			t.Errorf("step %d seq %d: dup %t ooo %t, want %t %t", i, o.seq, dup, ooo, o.dup, o.ooo)
		}
	}
}

func TestPlanDealsTopicsWithTheirClients(t *testing.T) {
	w := &v1alpha1.WorkloadSpec{Publishers: 10, Subscribers: 7, Topics: 4, Messages: 1003}
	seenPub, seenSub := map[int]bool{}, map[int]bool{}
	var quota int64
	for worker := 0; worker < 3; worker++ {
		p := NewPlan(w, worker, 3)
		topics := map[int]bool{}
		for _, t := range p.Topics {
			topics[t] = true
		}
		for _, c := range p.Publishers {
			if !topics[c.Topic] || seenPub[c.Index] {
				t.Errorf("worker %d: publisher %+v not on its topics %v (or twice)", worker, c, p.Topics)
			}
			seenPub[c.Index] = true
			quota += c.Quota
		}
		for _, c := range p.Subscribers {
			if !topics[c.Topic] || seenSub[c.Index] {
				t.Errorf("worker %d: subscriber %+v not on its topics %v (or twice)", worker, c, p.Topics)
			}
			seenSub[c.Index] = true
		}
	}
	if len(seenPub) != 10 || len(seenSub) != 7 || quota != 1003 {
		t.Errorf("dealt %d publishers, %d subscribers, %d messages", len(seenPub), len(seenSub), quota)
	}
	p := NewPlan(w, 0, 1)
	if n := p.PublishersOn(0) + p.PublishersOn(1) + p.PublishersOn(2) + p.PublishersOn(3); n != 10 || p.PublishersOn(0) != 3 || p.PublishersOn(3) != 2 {
		t.Errorf("PublishersOn sums to %d", n)
	}
}
