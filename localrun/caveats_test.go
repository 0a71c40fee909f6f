package localrun

import (
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/netem"
	"github.com/msgbench/msgbench/netem/emulator"
	"github.com/msgbench/msgbench/results"
)

// TestPathCaveats: what the path between clients and servers says about a run — retransmits
// where nothing is lost (loopback, or a lossless emulated link, naming its queue drops) and the
// emulator running late — reaches the result as named caveats; a lossy link's retransmits do not.
func TestPathCaveats(t *testing.T) {
	types := func(cs []results.Caveat) (s []string) {
		for _, c := range cs {
			s = append(s, c.Type)
		}
		return s
	}
	withRetransmits := func(n int64) *results.Result {
		return &results.Result{Wire: results.Wire{Retransmits: results.Int64(n)}}
	}
	lossless := netem.Link{Up: netem.Impairment{Delay: 20 * time.Millisecond}, Down: netem.Impairment{Delay: 20 * time.Millisecond}}
	lossyLink := lossless
	lossyLink.Up.Loss, _ = netem.ParsePercent("2")
	bursty := lossless
	bursty.Down.GilbertElliott = netem.GilbertElliott{P: netem.FractionOne / 100, R: netem.FractionOne / 4, LossInBad: netem.FractionOne}
	outageLater := []netem.Step{{Link: netem.Link{Up: netem.Impairment{Loss: netem.FractionOne}, Down: netem.Impairment{Loss: netem.FractionOne}}}}
	caveats := func(st emulator.Stats, l netem.Link, res *results.Result, steps ...netem.Step) []results.Caveat {
		return linkCaveats(st, l, lossy(l, steps), res)
	}
	link := func(st emulator.Stats, l netem.Link) groupLink {
		return groupLink{stats: func() emulator.Stats { return st }, link: l, lossy: lossy(l, nil)}
	}
	groups := func(ls ...groupLink) *runner { return &runner{groupLinks: ls} }
	busy := emulator.Stats{Up: emulator.DirectionStats{Packets: 100, Late: 7, MaxLate: 30 * time.Millisecond}}
	for _, c := range []struct {
		name string
		got  []results.Caveat
		want []string
	}{
		{"loopback, no retransmits", loopback().pathCaveats(withRetransmits(0)), nil},
		{"loopback, retransmits", loopback().pathCaveats(withRetransmits(4)), []string{results.CaveatRetransmits}},
		{"loopback, UDP", loopback().pathCaveats(&results.Result{}), nil},
		{"lossless link, retransmits", caveats(emulator.Stats{}, lossless, withRetransmits(4)), []string{results.CaveatRetransmits}},
		{"lossy link, retransmits", caveats(emulator.Stats{}, lossyLink, withRetransmits(40)), nil},
		{"bursty (Gilbert-Elliott) link, retransmits", caveats(emulator.Stats{}, bursty, withRetransmits(40)), nil},
		{"outage step later, retransmits", caveats(emulator.Stats{}, lossless, withRetransmits(40), outageLater...), nil},
		{"lossless link holding packets for radios, retransmits", caveats(emulator.Stats{Radio: emulator.RadioStats{HeldPackets: 9}}, lossless, withRetransmits(4)), nil},
		{"late emulator", caveats(busy, lossyLink, withRetransmits(40)), []string{results.CaveatEmulatorLate}},
		// Groups behind links of their own (the rest on loopback): judged against their links.
		{"group links, one holding packets for radios", groups(link(emulator.Stats{}, lossless), link(emulator.Stats{Radio: emulator.RadioStats{HeldPackets: 9}}, lossless)).groupLinkCaveats(withRetransmits(94)), nil},
		{"group links, one lossy", groups(link(emulator.Stats{}, lossless), link(emulator.Stats{}, lossyLink)).groupLinkCaveats(withRetransmits(9)), nil},
		{"group links, lossless", groups(link(emulator.Stats{}, lossless)).groupLinkCaveats(withRetransmits(4)), []string{results.CaveatRetransmits}},
		{"group links, one late", groups(link(emulator.Stats{}, lossless), link(busy, lossyLink)).groupLinkCaveats(withRetransmits(0)), []string{results.CaveatEmulatorLate}},
	} {
		if got := types(c.got); len(got) != len(c.want) || (len(got) > 0 && got[0] != c.want[0]) {
			t.Errorf("%s: caveats %v, want %v", c.name, got, c.want)
		}
	}
	drops := emulator.Stats{Down: emulator.DirectionStats{QueueDrops: 12}}
	if cs := caveats(drops, lossless, withRetransmits(4)); len(cs) != 1 || !strings.Contains(cs[0].Message, "dropped 12 packets") {
		t.Errorf("queue drops not named: %+v", cs)
	}
}
