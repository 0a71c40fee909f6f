package netem

import (
	"fmt"
	"strings"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// Resolve turns spec.network into per-direction parameters: the profile's preset, then the
// fields set for both directions, then the up: and down: blocks, then direction, which clears the
// direction it leaves out. Errors name the field (spec.network.up.lossPercent: …), because local
// runs parse manifests without an API server to validate them.
func Resolve(spec v1alpha1.NetworkSpec) (Link, error) {
	var link Link
	switch spec.Profile {
	case "", v1alpha1.ProfileCustom:
	case v1alpha1.ProfileNone:
		if spec.LinkSpec != (v1alpha1.LinkSpec{}) || spec.Up != nil || spec.Down != nil || spec.MTUBytes != nil {
			return Link{}, fmt.Errorf("spec.network.profile: none applies no impairment; use profile custom (or a preset) with explicit fields")
		}
	default:
		p, ok := LookupProfile(spec.Profile)
		if !ok {
			return Link{}, fmt.Errorf("spec.network.profile: unknown profile %q; use one of %s, or custom", spec.Profile, profileNames())
		}
		link = p.Link
	}

	var err error
	if link.Up, err = override(link.Up, spec.LinkSpec, "spec.network"); err != nil {
		return Link{}, err
	}
	if link.Down, err = override(link.Down, spec.LinkSpec, "spec.network"); err != nil {
		return Link{}, err
	}
	if spec.Up != nil {
		if link.Up, err = override(link.Up, *spec.Up, "spec.network.up"); err != nil {
			return Link{}, err
		}
	}
	if spec.Down != nil {
		if link.Down, err = override(link.Down, *spec.Down, "spec.network.down"); err != nil {
			return Link{}, err
		}
	}

	switch spec.Direction {
	case "", v1alpha1.DirectionBoth:
	case v1alpha1.DirectionTo:
		link.Down = Impairment{}
	case v1alpha1.DirectionFrom:
		link.Up = Impairment{}
	default:
		return Link{}, fmt.Errorf("spec.network.direction: %q is not one of to, from, both", spec.Direction)
	}

	if spec.MTUBytes != nil {
		mtu := *spec.MTUBytes
		if mtu < 68 || mtu > 65535 {
			return Link{}, fmt.Errorf("spec.network.mtuBytes: %d is outside 68..65535 (68 is IPv4's minimum)", mtu)
		}
		link.MTU = int(mtu)
	}

	for _, d := range []struct {
		imp  Impairment
		path string
	}{{link.Up, "spec.network.up"}, {link.Down, "spec.network.down"}} {
		// tc refuses reordering without delay too: with nothing delayed, there is nothing to overtake.
		if d.imp.Reorder > 0 && d.imp.Delay == 0 {
			return Link{}, fmt.Errorf("%s.reorderPercent: reordering needs a delay (reordered packets overtake delayed ones); set delay too", d.path)
		}
		// Chaos Mesh drops the jitter of a zero delay; refuse it here so both back ends agree.
		if d.imp.Jitter > 0 && d.imp.Delay == 0 {
			return Link{}, fmt.Errorf("%s.jitter: jitter varies the delay, so it needs a delay; set delay too", d.path)
		}
	}
	return link, nil
}

// override applies the fields set in s to base; path names s in errors.
func override(base Impairment, s v1alpha1.LinkSpec, path string) (Impairment, error) {
	var err error
	if s.Delay != nil {
		if base.Delay, err = checkDuration(s.Delay.Duration, path+".delay"); err != nil {
			return base, err
		}
	}
	if s.Jitter != nil {
		if base.Jitter, err = checkDuration(s.Jitter.Duration, path+".jitter"); err != nil {
			return base, err
		}
	}
	if s.LossPercent != nil && s.GilbertElliott != nil {
		return base, fmt.Errorf("%s.gilbertElliott: set either lossPercent (independent loss) or gilbertElliott (burst loss), not both", path)
	}
	// A link has one loss model: the one set here replaces a less specific level's, whichever
	// model that was.
	if s.LossPercent != nil {
		base.GilbertElliott = GilbertElliott{}
	}
	if s.GilbertElliott != nil {
		if base.GilbertElliott, err = gilbertElliott(*s.GilbertElliott, path+".gilbertElliott"); err != nil {
			return base, err
		}
		base.Loss = 0
	}
	fields := []struct {
		value *string
		into  *Fraction
		name  string
	}{
		{s.LossPercent, &base.Loss, "lossPercent"},
		{s.DuplicatePercent, &base.Duplicate, "duplicatePercent"},
		{s.CorruptPercent, &base.Corrupt, "corruptPercent"},
		{s.ReorderPercent, &base.Reorder, "reorderPercent"},
	}
	if c := s.Correlation; c != nil {
		cor := &base.Correlation
		fields = append(fields, []struct {
			value *string
			into  *Fraction
			name  string
		}{
			{c.DelayPercent, &cor.Delay, "correlation.delayPercent"},
			{c.LossPercent, &cor.Loss, "correlation.lossPercent"},
			{c.DuplicatePercent, &cor.Duplicate, "correlation.duplicatePercent"},
			{c.CorruptPercent, &cor.Corrupt, "correlation.corruptPercent"},
			{c.ReorderPercent, &cor.Reorder, "correlation.reorderPercent"},
		}...)
	}
	for _, f := range fields {
		if f.value == nil {
			continue
		}
		if *f.into, err = ParsePercent(*f.value); err != nil {
			return base, fmt.Errorf("%s.%s: %w", path, f.name, err)
		}
	}
	if s.Bandwidth != nil {
		if base.RateBitsPerSecond, err = ParseRate(*s.Bandwidth); err != nil {
			return base, fmt.Errorf("%s.bandwidth: %w", path, err)
		}
	}
	return base, nil
}

// gilbertElliott parses a Gilbert-Elliott block; path names it in errors. The block is whole:
// the loss probabilities it leaves out take their defaults (100 % in the bad state, 0 in the
// good one, as tc's gemodel), not a less specific level's.
func gilbertElliott(s v1alpha1.GilbertElliottSpec, path string) (GilbertElliott, error) {
	g := GilbertElliott{LossInBad: FractionOne}
	var err error
	for _, f := range []struct {
		value *string
		into  *Fraction
		name  string
	}{
		{&s.GoodToBadPercent, &g.P, "goodToBadPercent"},
		{&s.BadToGoodPercent, &g.R, "badToGoodPercent"},
		{s.LossInBadPercent, &g.LossInBad, "lossInBadPercent"},
		{s.LossInGoodPercent, &g.LossInGood, "lossInGoodPercent"},
	} {
		if f.value == nil {
			continue
		}
		if *f.into, err = ParsePercent(*f.value); err != nil {
			return GilbertElliott{}, fmt.Errorf("%s.%s: %w", path, f.name, err)
		}
	}
	if g.R == 0 {
		return GilbertElliott{}, fmt.Errorf("%s.badToGoodPercent: 0 would keep the link in the bad state for ever once it got there", path)
	}
	return g, nil
}

// checkDuration bounds a duration that came through metav1.Duration, which accepts what
// time.ParseDuration does, negative values included.
func checkDuration(d time.Duration, path string) (time.Duration, error) {
	if d < 0 {
		return 0, fmt.Errorf("%s: %v is negative", path, d)
	}
	if d > MaxDelay {
		return 0, fmt.Errorf("%s: %v is above the maximum of %v", path, d, MaxDelay)
	}
	return d, nil
}

func profileNames() string {
	names := make([]string, 0, len(profiles))
	for _, p := range profiles {
		names = append(names, string(p.Name))
	}
	return strings.Join(names, ", ")
}
