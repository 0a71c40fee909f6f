package plan

import "testing"

func TestShareDealsTopicsWithTheirClients(t *testing.T) {
	g := &Group{Publishers: 10, Subscribers: 7, Topics: 4, Load: Load{Messages: 1003}}
	seenPub, seenSub := map[int]bool{}, map[int]bool{}
	var quota int64
	for worker := 0; worker < 3; worker++ {
		p := g.Share(worker, 3)
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
	p := g.Share(0, 1)
	if n := p.PublishersOn(0) + p.PublishersOn(1) + p.PublishersOn(2) + p.PublishersOn(3); n != 10 || p.PublishersOn(0) != 3 || p.PublishersOn(3) != 2 {
		t.Errorf("PublishersOn sums to %d", n)
	}
}
