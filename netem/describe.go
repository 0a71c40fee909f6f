package netem

import (
	"fmt"
	"strings"
	"time"
)

// Describe is a result's "network": the link as applied, in the manifest's units, and what
// applied it (the local user-space emulator, or Chaos Mesh on Kubernetes).
func Describe(profile any, l Link, emulator string) map[string]any {
	dir := func(i Impairment) map[string]any {
		m := map[string]any{
			"delay": FormatDuration(i.Delay), "jitter": FormatDuration(i.Jitter),
			"lossPercent": i.Loss.Percent(), "duplicatePercent": i.Duplicate.Percent(),
			"corruptPercent": i.Corrupt.Percent(), "reorderPercent": i.Reorder.Percent(),
			"bandwidth": FormatRate(i.RateBitsPerSecond),
		}
		if g := i.GilbertElliott; g.Enabled() {
			m["gilbertElliott"] = map[string]any{
				"goodToBadPercent": g.P.Percent(), "badToGoodPercent": g.R.Percent(),
				"lossInBadPercent": g.LossInBad.Percent(), "lossInGoodPercent": g.LossInGood.Percent(),
				"stationaryLossPercent": g.StationaryLoss() * 100,
			}
		}
		if c := i.Correlation; c != (Correlation{}) {
			m["correlation"] = map[string]any{
				"delayPercent": c.Delay.Percent(), "lossPercent": c.Loss.Percent(), "duplicatePercent": c.Duplicate.Percent(),
				"corruptPercent": c.Corrupt.Percent(), "reorderPercent": c.Reorder.Percent(),
			}
		}
		return m
	}
	return map[string]any{
		"profile": profile, "emulator": emulator,
		"up": dir(l.Up), "down": dir(l.Down), "mtuBytes": l.EffectiveMTU(),
		"rttMillis": float64(l.RTT()) / float64(time.Millisecond),
	}
}

// String says in one line what the link does.
func (l Link) String() string {
	dir := func(i Impairment) string {
		if i.IsZero() {
			return "none"
		}
		var parts []string
		if i.Delay > 0 {
			parts = append(parts, "delay "+i.Delay.String())
		}
		if i.Jitter > 0 {
			parts = append(parts, "jitter "+i.Jitter.String())
		}
		for _, p := range []struct {
			name string
			f    Fraction
		}{{"loss", i.Loss}, {"duplicate", i.Duplicate}, {"corrupt", i.Corrupt}, {"reorder", i.Reorder}} {
			if p.f > 0 {
				parts = append(parts, p.name+" "+p.f.String())
			}
		}
		if g := i.GilbertElliott; g.Enabled() {
			parts = append(parts, fmt.Sprintf("Gilbert-Elliott loss (p %s, r %s, 1-h %s, 1-k %s; %.3g%% on average)",
				g.P, g.R, g.LossInBad, g.LossInGood, g.StationaryLoss()*100))
		}
		if c := i.Correlation; c != (Correlation{}) {
			var cs []string
			for _, p := range []struct {
				name string
				f    Fraction
			}{{"delay", c.Delay}, {"loss", c.Loss}, {"duplicate", c.Duplicate}, {"corrupt", c.Corrupt}, {"reorder", c.Reorder}} {
				if p.f > 0 {
					cs = append(cs, p.name+" "+p.f.String())
				}
			}
			parts = append(parts, "correlation "+strings.Join(cs, "/"))
		}
		if i.RateBitsPerSecond > 0 {
			parts = append(parts, "rate "+FormatRate(i.RateBitsPerSecond))
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprintf("up: %s; down: %s; MTU %d", dir(l.Up), dir(l.Down), l.EffectiveMTU())
}
