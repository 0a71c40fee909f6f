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
		return map[string]any{
			"delay": FormatDuration(i.Delay), "jitter": FormatDuration(i.Jitter),
			"lossPercent": i.Loss.Percent(), "duplicatePercent": i.Duplicate.Percent(),
			"corruptPercent": i.Corrupt.Percent(), "reorderPercent": i.Reorder.Percent(),
			"bandwidth": FormatRate(i.RateBitsPerSecond),
		}
	}
	return map[string]any{
		"profile": profile, "emulator": emulator,
		"up": dir(l.Up), "down": dir(l.Down), "mtuBytes": l.EffectiveMTU(),
		"rttMillis": float64(l.Up.Delay+l.Down.Delay) / float64(time.Millisecond),
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
		if i.RateBitsPerSecond > 0 {
			parts = append(parts, "rate "+FormatRate(i.RateBitsPerSecond))
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprintf("up: %s; down: %s; MTU %d", dir(l.Up), dir(l.Down), l.EffectiveMTU())
}
