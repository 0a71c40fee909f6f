package netem

import "time"

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
