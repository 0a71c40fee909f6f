//go:build linux

package emulator

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/netem"
)

// pct is a percentage as a Fraction, for readable test tables.
func pct(v float64) netem.Fraction { return netem.Fraction(math.Round(v * 1e7)) }

// newModel is a direction's decision state for imp with a fixed seed.
func newModel(imp netem.Impairment, seed uint64) *model {
	m := &model{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	m.reset(newConfig(imp))
	return m
}

func TestProb(t *testing.T) {
	for _, c := range []struct {
		f    netem.Fraction
		want uint32
	}{
		{0, 0},
		{netem.FractionOne, math.MaxUint32},
		{pct(1), 42949673},      // rint(0.01 · 4294967295) = rint(42949672.95)
		{pct(50), 2147483648},   // rint(2147483647.5), to even
		{pct(0.0000001), 4},     // rint(4.294967295)
		{pct(25), 1073741824},   // rint(1073741823.75)
		{pct(99.9), 4290672328}, // rint(4290672327.705)
	} {
		if got := prob(c.f); got != c.want {
			t.Errorf("prob(%v) = %d, want %d", c.f, got, c.want)
		}
	}
}

// TestCrandomIsNetemsFormula checks get_crandom's fixed-point step against the same formula in
// arbitrary precision, over random states and extreme ones (no overflow at rho = 2³²−1).
func TestCrandomIsNetemsFormula(t *testing.T) {
	pcg := rand.NewPCG(1, 2)
	rng := rand.New(pcg)
	// peek is the next draw of rng, from a copy of its state.
	peek := func() uint32 { cp := *pcg; return rand.New(&cp).Uint32() }
	two32 := new(big.Int).Lsh(big.NewInt(1), 32)
	for i := range 100_000 {
		rho, last := rng.Uint32(), rng.Uint32()
		switch i {
		case 0:
			rho, last = math.MaxUint32, math.MaxUint32
		case 1:
			rho, last = 1, 0
		}
		value := peek()
		c := crandom{last: last, rho: rho}
		got := c.next(rng)
		r := new(big.Int).SetUint64(uint64(rho) + 1)
		want := new(big.Int).Mul(big.NewInt(int64(value)), new(big.Int).Sub(two32, r))
		want.Add(want, new(big.Int).Mul(big.NewInt(int64(last)), r))
		want.Rsh(want, 32)
		if got != uint32(want.Uint64()) || c.last != got {
			t.Fatalf("rho %d last %d value %d: got %d (state %d), want %v", rho, last, value, got, c.last, want)
		}
	}
	// rho 0 is a fresh draw that leaves the state alone.
	c := crandom{last: 7}
	if want, got := peek(), c.next(rng); got != want || c.last != 7 {
		t.Errorf("uncorrelated draw %d, state %d", got, c.last)
	}
}

// TestGilbertElliottOrder pins loss_gilb_ell's order: the transition is drawn first, but the
// packet is lost according to the state it met. With p = r = 100 % the state alternates from
// good, so packets 2, 4, 6… are lost; deciding on the new state would lose 1, 3, 5….
func TestGilbertElliottOrder(t *testing.T) {
	m := newModel(netem.Impairment{GilbertElliott: netem.GilbertElliott{P: netem.FractionOne, R: netem.FractionOne, LossInBad: netem.FractionOne}}, 1)
	var got strings.Builder
	for range 12 {
		lost, bad := m.lose()
		if lost != bad {
			t.Fatalf("lost %v in the bad state %v", lost, bad)
		}
		got.WriteByte("01"[b2i(lost)])
	}
	if got.String() != "010101010101" {
		t.Errorf("losses %s, want 010101010101", got.String())
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// lossRun draws n loss decisions and returns the loss rate, the share of packets that met the
// bad state, the mean length of a run of consecutive losses, and the lag-1 autocorrelation of
// the loss indicator.
func lossRun(m *model, n int) (rate, bad, meanBurst, lag1 float64) {
	var losses, bads, bursts, both int
	prev := false
	for range n {
		lost, b := m.lose()
		if lost {
			losses++
			if !prev {
				bursts++
			} else {
				both++
			}
		}
		bads += b2i(b)
		prev = lost
	}
	rate = float64(losses) / float64(n)
	// Lag-1 autocorrelation of a 0/1 series: (P(X_i = X_i+1 = 1) − rate²)/(rate(1 − rate)).
	lag1 = (float64(both)/float64(n-1) - rate*rate) / (rate * (1 - rate))
	if bursts > 0 {
		meanBurst = float64(losses) / float64(bursts)
	}
	return rate, float64(bads) / float64(n), meanBurst, lag1
}

// TestGilbertElliottStatistics draws 1M decisions per parameter set and compares them with the
// model: the loss rate with (p·(1−h) + r·(1−k))/(p + r), the bad-state share with p/(p + r),
// and, where every bad-state packet and no good-state one is lost, the mean loss burst with 1/r.
// Tolerances are 4 % relative: over 8000 or more bursts the standard errors are near 1 %.
func TestGilbertElliottStatistics(t *testing.T) {
	const n = 1_000_000
	for _, g := range []netem.GilbertElliott{
		{P: pct(1), R: pct(25), LossInBad: netem.FractionOne},
		{P: pct(2), R: pct(50), LossInBad: netem.FractionOne},
		{P: pct(0.5), R: pct(10), LossInBad: netem.FractionOne},
		{P: pct(5), R: pct(30), LossInBad: pct(70), LossInGood: pct(1)},
	} {
		t.Run(fmt.Sprintf("p=%v r=%v 1-h=%v 1-k=%v", g.P, g.R, g.LossInBad, g.LossInGood), func(t *testing.T) {
			m := newModel(netem.Impairment{GilbertElliott: g}, 42)
			rate, bad, burst, lag1 := lossRun(m, n)
			p, r := float64(g.P)/1e9, float64(g.R)/1e9
			wantRate, wantBad := g.StationaryLoss(), p/(p+r)
			t.Logf("loss %.4f%% (model %.4f%%), bad %.4f%% (model %.4f%%), mean burst %.3f, lag-1 %.3f",
				100*rate, 100*wantRate, 100*bad, 100*wantBad, burst, lag1)
			if math.Abs(rate/wantRate-1) > 0.04 {
				t.Errorf("loss rate %.5f, model %.5f", rate, wantRate)
			}
			if math.Abs(bad/wantBad-1) > 0.04 {
				t.Errorf("bad-state share %.5f, model %.5f", bad, wantBad)
			}
			if g.LossInBad == netem.FractionOne && g.LossInGood == 0 && math.Abs(burst*r-1) > 0.04 {
				t.Errorf("mean loss burst %.3f packets, model 1/r = %.3f", burst, 1/r)
			}
			if lag1 < 0.3 {
				t.Errorf("lag-1 autocorrelation %.3f: the losses do not come in bursts", lag1)
			}
		})
	}
}

// TestCorrelatedLoss: netem's loss correlation makes losses cluster (lag-1 autocorrelation
// clearly above 0, and about 0 without it), and it moves the rate away from the one asked for:
// the correlated draw clusters toward the middle, so a small probability shrinks (to nothing at
// 1 %) while 50 % keeps its mean. The measured table is in docs/netem.md; print it with
// MSGBENCH_PRINT_TABLES=1.
func TestCorrelatedLoss(t *testing.T) {
	const n = 1_000_000
	type row struct {
		loss, corr, rate, lag1 float64
		losses                 int
	}
	var rows []row
	for _, loss := range []float64{1, 10, 50} {
		for _, corr := range []float64{0, 25, 50, 75} {
			m := newModel(netem.Impairment{Loss: pct(loss), Correlation: netem.Correlation{Loss: pct(corr)}}, 7)
			rate, _, _, lag1 := lossRun(m, n)
			rows = append(rows, row{loss, corr, rate, lag1, int(math.Round(rate * n))})
			switch {
			case corr == 0:
				lo, hi := binomial99(n, loss/100)
				if got := rate * n; got < lo || got > hi {
					t.Errorf("loss %v%% uncorrelated: %.0f losses, want %.0f..%.0f", loss, got, lo, hi)
				}
				if math.Abs(lag1) > 0.01 {
					t.Errorf("loss %v%% uncorrelated: lag-1 autocorrelation %.4f, want about 0", loss, lag1)
				}
			case loss == 50:
				if !(lag1 > corr/200) {
					t.Errorf("loss 50%% correlation %v%%: lag-1 autocorrelation %.4f, want clearly above 0", corr, lag1)
				}
				if math.Abs(rate-0.5) > 0.005 {
					t.Errorf("loss 50%% correlation %v%%: rate %.4f, want 0.5 (the middle keeps its mean)", corr, rate)
				}
			default:
				if rate >= loss/100/2 {
					t.Errorf("loss %v%% correlation %v%%: rate %.4f%%, want well below the nominal rate", loss, corr, 100*rate)
				}
			}
		}
	}
	if os.Getenv("MSGBENCH_PRINT_TABLES") != "" {
		fmt.Println("| lossPercent | correlation.lossPercent | measured loss (losses in 1M) | lag-1 autocorrelation |")
		fmt.Println("|---|---|---|---|")
		for _, r := range rows {
			lag := "–"
			if r.losses > 0 {
				lag = fmt.Sprintf("%.3f", r.lag1)
			}
			fmt.Printf("| %g | %g | %.4f %% (%d) | %s |\n", r.loss, r.corr, 100*r.rate, r.losses, lag)
		}
	}
}

// TestCorrelatedDraws: each other correlation makes its own draws cluster, and none leaks into
// the others' draws.
func TestCorrelatedDraws(t *testing.T) {
	const n = 400_000
	imp := netem.Impairment{Duplicate: pct(20), Corrupt: pct(20), Reorder: pct(20), Delay: 10 * ms}
	for _, c := range []struct {
		name string
		corr netem.Correlation
		draw func(*model) bool
	}{
		{"duplicate", netem.Correlation{Duplicate: pct(60)}, (*model).duplicate},
		{"corrupt", netem.Correlation{Corrupt: pct(60)}, (*model).corrupt},
		{"reorder", netem.Correlation{Reorder: pct(60)}, (*model).reorder},
	} {
		for _, corr := range []netem.Correlation{{}, c.corr} {
			imp := imp
			imp.Correlation = corr
			m := newModel(imp, 3)
			var hits, both int
			prev := false
			for range n {
				h := c.draw(m)
				hits += b2i(h)
				both += b2i(h && prev)
				prev = h
			}
			rate := float64(hits) / n
			lag1 := (float64(both)/(n-1) - rate*rate) / (rate * (1 - rate))
			t.Logf("%s correlation %v: rate %.4f, lag-1 %.4f", c.name, corr, rate, lag1)
			if corr == (netem.Correlation{}) && math.Abs(lag1) > 0.01 {
				t.Errorf("%s uncorrelated: lag-1 autocorrelation %.4f", c.name, lag1)
			}
			if corr != (netem.Correlation{}) && lag1 < 0.1 {
				t.Errorf("%s correlated: lag-1 autocorrelation %.4f, want clearly above 0", c.name, lag1)
			}
		}
	}
}

// TestCorrelatedJitter: the jitter is normal with standard deviation sigma and mean 0 without
// correlation and independent from packet to packet; with delay correlation successive
// variations are correlated and, as in netem, narrower (table in docs/netem.md).
func TestCorrelatedJitter(t *testing.T) {
	const n = 400_000
	const sigma = 10 * time.Millisecond
	type row struct{ corr, sd, lag1 float64 }
	var rows []row
	for _, corr := range []float64{0, 25, 50, 75} {
		m := newModel(netem.Impairment{Delay: 50 * ms, Jitter: sigma, Correlation: netem.Correlation{Delay: pct(corr)}}, 5)
		var sum, sumSq, sumLag float64
		prev := 0.0
		for i := range n {
			x := float64(m.jitter()) / float64(sigma)
			sum += x
			sumSq += x * x
			if i > 0 {
				sumLag += x * prev
			}
			prev = x
		}
		mean := sum / n
		sd := math.Sqrt(sumSq/n - mean*mean)
		lag1 := (sumLag/(n-1) - mean*mean) / (sd * sd)
		rows = append(rows, row{corr, sd, lag1})
		t.Logf("delay correlation %v%%: mean %.4fσ, sd %.4fσ, lag-1 %.4f", corr, mean, sd, lag1)
		if math.Abs(mean) > 0.01 {
			t.Errorf("correlation %v%%: mean %.4fσ, want 0", corr, mean)
		}
		if corr == 0 && (math.Abs(sd-1) > 0.01 || math.Abs(lag1) > 0.01) {
			t.Errorf("uncorrelated: sd %.4fσ, lag-1 %.4f; want 1 and 0", sd, lag1)
		}
		if corr > 0 && (lag1 < 0.1 || sd >= 1) {
			t.Errorf("correlation %v%%: sd %.4fσ, lag-1 %.4f; want a narrower, correlated jitter", corr, sd, lag1)
		}
	}
	if os.Getenv("MSGBENCH_PRINT_TABLES") != "" {
		fmt.Println("| delay correlation | jitter standard deviation | lag-1 autocorrelation |")
		fmt.Println("|---|---|---|")
		for _, r := range rows {
			fmt.Printf("| %g %% | %.3f × jitter | %.3f |\n", r.corr, r.sd, r.lag1)
		}
	}
}

// devNullPipe is a pipe whose packets go to /dev/null, to drive its decision code (enqueue) and
// counters without TUN devices: with no delay every kept packet is written at once.
func devNullPipe(t testing.TB, imp netem.Impairment, seed uint64) *pipe {
	t.Helper()
	out, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPipe(nil, out, imp, netem.DefaultMTU, DefaultQueuePackets, newClock(), seed)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.close(); _ = out.Close() })
	return p
}

// TestPipeGilbertElliottCounters sends 200k packets through the pipe's own enqueue: its
// counters must match the model's stationary numbers (loss rate, bad-state share; every loss in
// the bad state), and account for every packet.
func TestPipeGilbertElliottCounters(t *testing.T) {
	const n = 200_000
	g := netem.GilbertElliott{P: pct(1), R: pct(20), LossInBad: netem.FractionOne}
	p := devNullPipe(t, netem.Impairment{GilbertElliott: g}, 11)
	cfg := p.load()
	pkt := &packet{buf: make([]byte, 100), n: 100}
	for range n {
		if p.enqueue(pkt, cfg, p.clock.now(), true) {
			t.Fatal("a packet with no delay was queued")
		}
	}
	st := p.snapshot()
	rate, bad := float64(st.Lost)/n, float64(st.BadState)/n
	want := g.StationaryLoss()
	t.Logf("%+v: loss %.3f%%, model %.3f%%", st, 100*rate, 100*want)
	// 200k packets hold about 1900 bursts of mean 5: the standard error of the rate is near 3 %.
	if math.Abs(rate/want-1) > 0.1 || math.Abs(bad/want-1) > 0.1 {
		t.Errorf("loss %.4f, bad-state share %.4f; model %.4f", rate, bad, want)
	}
	if st.LostInBad != st.Lost || st.Delivered+st.Lost != n {
		t.Errorf("counters do not add up: %+v", st)
	}
	if burst, want := float64(st.Lost)/float64(st.LossBursts), 1e9/float64(g.R); math.Abs(burst/want-1) > 0.1 {
		t.Errorf("mean loss burst %.2f packets (%d lost in %d bursts), model %.2f", burst, st.Lost, st.LossBursts, want)
	}
}

// TestDuplicateAndLossTogether: netem draws duplication, then loss; a duplicated packet that is
// lost goes out once. With both at 100 % every packet goes out exactly once, counted as neither.
func TestDuplicateAndLossTogether(t *testing.T) {
	const n = 1000
	p := devNullPipe(t, netem.Impairment{Loss: netem.FractionOne, Duplicate: netem.FractionOne}, 1)
	cfg := p.load()
	pkt := &packet{buf: make([]byte, 100), n: 100}
	for range n {
		p.enqueue(pkt, cfg, p.clock.now(), true)
	}
	// count = 1 + 1 (duplicate) − 1 (lost): no copy is made and nothing is dropped.
	st := p.snapshot()
	if st.Delivered != n || st.Duplicated != 0 || st.Lost != 0 {
		t.Errorf("delivered %d, duplicated %d, lost %d; want %d, 0, 0", st.Delivered, st.Duplicated, st.Lost, n)
	}
	// With loss at 50 % the copies make their own pass, without the duplication draw: every
	// packet is duplicated, and the loss draws alone decide what goes out.
	p = devNullPipe(t, netem.Impairment{Loss: pct(50), Duplicate: netem.FractionOne}, 1)
	cfg = p.load()
	for range n {
		p.enqueue(pkt, cfg, p.clock.now(), true)
	}
	st = p.snapshot()
	if st.Delivered+st.Lost != n+st.Duplicated || st.Duplicated == 0 || st.Duplicated == n {
		t.Errorf("counters do not add up: %+v", st)
	}
}

// TestGilbertElliottThroughLink sends 20000 UDP datagrams up a real link with burst loss and
// checks what the receiver and the forwarder saw: the loss rate and the mean run of consecutive
// missing datagrams against the model (±20 %: a few thousand packets hold a few hundred bursts),
// every loss in the bad state, and the receiver's count equal to the forwarder's.
func TestGilbertElliottThroughLink(t *testing.T) {
	const n = 20000
	g := netem.GilbertElliott{P: pct(2), R: pct(25), LossInBad: netem.FractionOne}
	l := startLink(t, netem.Link{Up: netem.Impairment{GilbertElliott: g}}, Options{Seed: 9})
	got := receivedSequence(t, l, n)
	lost, bursts := 0, 0
	for i := range n {
		if !got[i] {
			lost++
			if i == 0 || got[i-1] {
				bursts++
			}
		}
	}
	st := l.Stats().Up
	rate, burst := float64(lost)/n, float64(lost)/float64(max(bursts, 1))
	t.Logf("lost %d of %d in %d bursts (mean %.2f, model %.2f); rate %.3f%%, model %.3f%%; forwarder %+v",
		lost, n, bursts, burst, 1e9/float64(g.R), 100*rate, 100*g.StationaryLoss(), st)
	if math.Abs(rate/g.StationaryLoss()-1) > 0.2 {
		t.Errorf("loss rate %.4f, model %.4f", rate, g.StationaryLoss())
	}
	if math.Abs(burst*float64(g.R)/1e9-1) > 0.2 {
		t.Errorf("mean loss burst %.2f packets, model %.2f", burst, 1e9/float64(g.R))
	}
	// The link carries only the test's datagrams (the kernels send nothing of their own).
	if st.Packets != n || st.LostInBad != st.Lost || st.Lost != uint64(lost) || st.BadState < st.Lost {
		t.Errorf("the forwarder counted %d lost (%d in the bad state, %d packets met it), the receiver missed %d", st.Lost, st.LostInBad, st.BadState, lost)
	}
	// The forwarder's burst count is the receiver's: a result can state the mean burst it ran.
	if st.LossBursts != uint64(bursts) {
		t.Errorf("the forwarder counted %d loss bursts, the receiver saw %d", st.LossBursts, bursts)
	}
}

// receivedSequence sends n numbered datagrams up the link, paced so that no queue overflows,
// and reports which arrived.
func receivedSequence(t *testing.T, l *Link, n int) []bool {
	t.Helper()
	ctx := context.Background()
	addr := serverAddr(t, l, false, 5002)
	pc, err := l.Server().ListenPacket(ctx, "udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	setReceiveBuffer(t, pc.(*net.UDPConn), 16<<20)
	got := make([]bool, n)
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			_ = pc.SetReadDeadline(time.Now().Add(500 * ms))
			m, _, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if i := binary.BigEndian.Uint64(buf[:m]); i < uint64(n) {
				got[i] = true
			}
		}
	}()
	c, err := l.Device().DialContext(ctx, "udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	payload := make([]byte, 64)
	base := l.Stats().Up.Packets
	for i := range n {
		binary.BigEndian.PutUint64(payload, uint64(i))
		if _, err := c.Write(payload); err != nil {
			t.Fatal(err)
		}
		if i%100 == 99 {
			for deadline := time.Now().Add(5 * time.Second); l.Stats().Up.Packets < base+uint64(i+1); {
				if time.Now().After(deadline) {
					t.Fatalf("the forwarder read %d of %d datagrams", l.Stats().Up.Packets-base, i+1)
				}
				time.Sleep(50 * time.Microsecond)
			}
		}
	}
	<-done
	_ = pc.Close()
	return got
}
