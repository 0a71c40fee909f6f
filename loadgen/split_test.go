package loadgen_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/loadgen"
	"github.com/msgbench/msgbench/results"
)

// runSplit runs fleetSpec's groups in three workers, as three pods would: each worker its own
// groups, one agreed start, and (with clocks) every worker's clock offset as the coordinator
// measured it. Worker 1's wall clock reads 0.4 s ahead, worker 2's 0.3 s behind (each starts
// when its own clock reaches the agreed start).
func runSplit(t *testing.T, addr string, clocks bool) *results.Result {
	t.Helper()
	return runSplitOf(t, addr, fleetSpec, [][]string{{"sensors", "consumers"}, {"dashboards", "commander"}, {"actuators"}},
		[]time.Duration{0, 400 * time.Millisecond, -300 * time.Millisecond}, clocks)
}

// runSplitOf runs spec's groups in len(sets) workers, worker i running sets[i] with its wall
// clock skews[i] off.
func runSplitOf(t *testing.T, addr, spec string, sets [][]string, skews []time.Duration, clocks bool) *results.Result {
	t.Helper()
	mb, err := manifest.Parse([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	var peers []loadgen.PeerClock
	for i, s := range sets {
		peers = append(peers, loadgen.PeerClock{Groups: s, OffsetMicros: skews[i].Microseconds(), RTTMicros: 200})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var ready sync.WaitGroup
	ready.Add(len(sets))
	startAt := make(chan time.Time)
	parts := make([]*results.Result, len(sets))
	errs := make([]error, len(sets))
	var wg sync.WaitGroup
	for i, set := range sets {
		o := loadgen.Options{Name: "test", Spec: &mb.Spec, Address: addr, RunID: "split", Groups: set,
			Ready: ready.Done,
			Start: func(ctx context.Context) (time.Time, error) {
				select {
				case at := <-startAt:
					return at, nil
				case <-ctx.Done():
					return time.Time{}, ctx.Err()
				}
			}}
		if clocks {
			o.Clocks = func() []loadgen.PeerClock { return peers }
		}
		loadgen.SetWallClockSkew(&o, skews[i])
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[i], errs[i] = loadgen.Run(ctx, o)
		}()
	}
	ready.Wait() // every subscriber of every worker subscribed
	at := time.Now().Add(600 * time.Millisecond)
	for range sets {
		startAt <- at
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("worker %d: %v", i, err)
		}
	}
	res, err := results.Merge(parts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestSplitFleetCountsExactlyAcrossWorkers: the fleet of TestFleetDeliversExactly… spread over
// three workers whose clocks disagree by seconds. Each pair of groups, whose publishers and
// subscribers now run in different workers, still receives exactly what the subscription graph
// calls for once the workers' counts are merged, and its latencies, put on one clock with the
// offsets the coordinator measured, are those of one machine's loopback (not 0.4 or 0.7 s off).
func TestSplitFleetCountsExactlyAcrossWorkers(t *testing.T) {
	t.Parallel() // its own broker
	b := startMosquitto(t, "")
	res := runSplit(t, b.Addr, true)
	if res.Phase != "Succeeded" {
		t.Fatalf("phase %s: %s", res.Phase, res.Message)
	}
	sensors, commands := res.Group("sensors").Sent, res.Group("commander").Sent
	if sensors < 850 || sensors > 950 || commands < 330 || commands > 390 {
		t.Errorf("sent: sensors %d (want ~900), commander %d (want ~360)", sensors, commands)
	}
	want := map[[2]string]struct {
		n          int64
		correction int64 // µs: the subscriber's offset minus the publisher's
	}{
		{"sensors", "consumers"}:    {sensors, 0},
		{"sensors", "dashboards"}:   {3 * sensors, 4e5},
		{"commander", "dashboards"}: {3 * commands, 0},
		{"commander", "actuators"}:  {commands, -7e5},
	}
	if len(res.Pairs) != len(want) {
		t.Errorf("pairs %+v, want %v", res.Pairs, want)
	}
	for _, p := range res.Pairs {
		w, ok := want[[2]string{p.From, p.To}]
		if !ok || p.Expected != w.n || p.Received != w.n || p.Lost != 0 || p.Duplicates != 0 {
			t.Errorf("pair %s → %s: expected %d, received %d, lost %d, duplicates %d; want %d exactly", p.From, p.To, p.Expected, p.Received, p.Lost, p.Duplicates, w.n)
		}
		if p.EndToEnd == nil || p.EndToEnd.Count != w.n || p.EndToEnd.MinMicros < 0 || p.EndToEnd.MinMicros > 100_000 {
			// A clock left off by 0.4 s would shift every latency, the shortest too (a busy
			// machine's queues stretch the others, never all of them).
			t.Errorf("pair %s → %s: end-to-end %+v, want %d latencies of a loopback (the shortest under 0.1 s)", p.From, p.To, p.EndToEnd, w.n)
		}
		switch {
		case w.correction == 0 && p.Clock != nil:
			t.Errorf("pair %s → %s ran in one worker, but says clock %+v", p.From, p.To, p.Clock)
		case w.correction != 0 && (p.Clock == nil || p.Clock.CorrectionMicros != w.correction || p.Clock.UncertaintyMicros != 200 || p.Clock.Uncorrected):
			t.Errorf("pair %s → %s: clock %+v, want a correction of %d µs ± 200 µs", p.From, p.To, p.Clock, w.correction)
		}
	}
	for name, exp := range map[string]int64{"consumers": sensors, "dashboards": 3 * (sensors + commands), "actuators": commands} {
		if g := res.Group(name); g.Expected != exp || g.Received != exp || g.Lost == nil || *g.Lost != 0 {
			t.Errorf("%s: expected %d, received %d, lost %v; want %d", name, g.Expected, g.Received, g.Lost, exp)
		}
	}
	if total := sensors*4 + commands*4; res.Expected != total || res.Received != total || *res.Lost != 0 {
		t.Errorf("run: expected %d, received %d, lost %d; want %d", res.Expected, res.Received, *res.Lost, total)
	}
	if len(res.Groups) != 5 || res.Groups[0].Name != "sensors" || res.Groups[4].Name != "actuators" {
		t.Errorf("groups not once each in the spec's order: %+v", res.Groups)
	}
	if len(res.Workers) != 3 || len(res.Workers[0].Groups) == 0 {
		t.Errorf("workers %+v, want three, each with its groups", res.Workers)
	}
}

// TestSplitFleetWithoutOffsetsSaysSo: the same workers with no offsets given cannot put the
// other workers' send times on their clock, and the pairs that cross say so; none is silent.
func TestSplitFleetWithoutOffsetsSaysSo(t *testing.T) {
	t.Parallel() // its own broker
	b := startMosquitto(t, "")
	res := runSplit(t, b.Addr, false)
	crossing := 0
	for _, p := range res.Pairs {
		if (p.From == "sensors" && p.To == "dashboards") || (p.From == "commander" && p.To == "actuators") {
			crossing++
			if p.Clock == nil || !p.Clock.Uncorrected {
				t.Errorf("pair %s → %s crosses workers with no offsets, but its clock is %+v", p.From, p.To, p.Clock)
			}
		}
	}
	if crossing != 2 {
		t.Errorf("pairs %+v: want both crossing pairs reported", res.Pairs)
	}
	found := false
	for _, c := range res.Caveats {
		found = found || (c.Type == results.CaveatClocksUncorrected && strings.Contains(c.Message, "sensors → dashboards") && strings.Contains(c.Message, "commander → actuators"))
	}
	if !found {
		t.Errorf("caveats %+v: want ClocksUncorrected naming both crossing pairs", res.Caveats)
	}
}
