//go:build linux

package emulator

import (
	"math"
	"math/rand/v2"

	"github.com/msgbench/msgbench/netem"
)

// The random decisions below follow Linux's sch_netem (netem_enqueue, get_crandom,
// loss_gilb_ell, tabledist) draw for draw, so that a link here and a tc netem qdisc with the same
// numbers behave alike, the quirks included: netem's correlation does not keep the mean
// (docs/netem.md measures by how much).

// prob is a probability as tc hands it to the kernel: rint(f·(2³²−1)). netem compares it with a
// uniform 32-bit draw.
func prob(f netem.Fraction) uint32 {
	return uint32(math.RoundToEven(float64(f) / float64(netem.FractionOne) * math.MaxUint32))
}

// config is an impairment in the form the reader uses, computed once per change.
type config struct {
	imp  netem.Impairment
	zero bool // the impairment leaves packets alone

	loss, duplicate, corrupt, reorder uint32
	// Gilbert-Elliott, as the kernel keeps it: a1 = p, a2 = r, a3 = h (tc turns the "1-h" it is
	// given into h), a4 = 1-k.
	ge          bool
	p, r, h, k1 uint32
	// The correlations (netem's rho).
	delayRho, lossRho, dupRho, corruptRho, reorderRho uint32
}

func newConfig(imp netem.Impairment) *config {
	c := &config{
		imp: imp, zero: imp.IsZero(),
		loss: prob(imp.Loss), duplicate: prob(imp.Duplicate), corrupt: prob(imp.Corrupt), reorder: prob(imp.Reorder),
		delayRho: prob(imp.Correlation.Delay), lossRho: prob(imp.Correlation.Loss), dupRho: prob(imp.Correlation.Duplicate),
		corruptRho: prob(imp.Correlation.Corrupt), reorderRho: prob(imp.Correlation.Reorder),
	}
	if g := imp.GilbertElliott; g.Enabled() {
		c.ge, c.loss = true, 0
		c.p, c.r, c.h, c.k1 = prob(g.P), prob(g.R), math.MaxUint32-prob(g.LossInBad), prob(g.LossInGood)
	}
	return c
}

// crandom is netem's correlated random number generator (struct crndstate): each draw is a
// fresh uniform one weighted with the previous draw, in 32-bit fixed point. It is not uniform
// once rho > 0: the weighted mean clusters toward the middle, which is why a correlated
// probability is not the probability asked for.
type crandom struct {
	last, rho uint32
}

// init is init_crandom: the first "previous" draw is a fresh one.
func (c *crandom) init(rho uint32, rng *rand.Rand) {
	c.rho, c.last = rho, rng.Uint32()
}

// next is get_crandom.
func (c *crandom) next(rng *rand.Rand) uint32 {
	if c.rho == 0 {
		return rng.Uint32()
	}
	value := uint64(rng.Uint32())
	rho := uint64(c.rho) + 1
	// Cannot overflow: both products share the factor below 2³², and the weights sum to 2³².
	c.last = uint32((value*(1<<32-rho) + uint64(c.last)*rho) >> 32)
	return c.last
}

// model is one direction's random state: netem's correlation states, the Gilbert-Elliott state
// and the generator. Only the reader goroutine uses it. A new config resets it, as "tc qdisc
// change" does (the correlations start from a fresh draw, the model from the good state).
type model struct {
	cfg                                               *config
	rng                                               *rand.Rand
	delayCor, lossCor, dupCor, corruptCor, reorderCor crandom
	bad                                               bool // the Gilbert-Elliott model is in its bad state
}

func (m *model) reset(cfg *config) {
	m.cfg, m.bad = cfg, false
	m.delayCor.init(cfg.delayRho, m.rng)
	m.lossCor.init(cfg.lossRho, m.rng)
	m.dupCor.init(cfg.dupRho, m.rng)
	m.corruptCor.init(cfg.corruptRho, m.rng)
	m.reorderCor.init(cfg.reorderRho, m.rng)
}

// duplicate draws netem's "random duplication".
func (m *model) duplicate() bool {
	return m.cfg.duplicate != 0 && m.cfg.duplicate >= m.dupCor.next(m.rng)
}

// lose is netem's loss_event: whether the packet is dropped, and whether it met the
// Gilbert-Elliott model in its bad state.
func (m *model) lose() (lost, bad bool) {
	c := m.cfg
	if !c.ge {
		return c.loss != 0 && c.loss >= m.lossCor.next(m.rng), false
	}
	// loss_gilb_ell: the transition is drawn first, but the loss probability is the one of the
	// state the packet met.
	if !m.bad {
		if m.rng.Uint32() < c.p {
			m.bad = true
		}
		return m.rng.Uint32() < c.k1, false
	}
	if m.rng.Uint32() < c.r {
		m.bad = false
	}
	return m.rng.Uint32() > c.h, true
}

// corrupt draws netem's "randomized packet corruption".
func (m *model) corrupt() bool {
	return m.cfg.corrupt != 0 && m.cfg.corrupt >= m.corruptCor.next(m.rng)
}

// reorder reports whether the packet goes out at once, ahead of the delayed ones. netem draws it
// unless gap is 0 (no reordering) or the packet is inside the gap after the last reordered one;
// the API's gap is always 1, which leaves no packet inside a gap.
func (m *model) reorder() bool {
	return m.cfg.reorder != 0 && m.cfg.reorder >= m.reorderCor.next(m.rng)
}

// jitter is tabledist's variation of the delay with the normal distribution: the (correlated)
// uniform draw through the normal quantile function, where netem looks up its table of that
// function. Correlation narrows the spread along with the variation. Uncorrelated, a fresh
// uniform draw through the quantile is a normal draw, which NormFloat64 makes in a fifth of the
// time.
func (m *model) jitter() int64 {
	sigma := m.cfg.imp.Jitter
	if sigma == 0 {
		return 0
	}
	if m.delayCor.rho == 0 {
		return int64(m.rng.NormFloat64() * float64(sigma))
	}
	return int64(normalQuantile(m.delayCor.next(m.rng)) * float64(sigma))
}

// normalQuantile is the standard normal quantile at the middle of the 32-bit draw's interval.
func normalQuantile(u uint32) float64 {
	return math.Sqrt2 * math.Erfinv(2*(float64(u)+0.5)/(1<<32)-1)
}
