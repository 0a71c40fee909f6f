package results

// StartSpread is how closely the workers started together, on the coordinator's clock.
type StartSpread struct {
	Workers int `json:"workers"`
	// SpreadMicros is the last worker's actual start minus the first's (max − min of
	// workers[].startSkewMicros); EarliestMicros and LatestMicros are those two skews.
	SpreadMicros   int64 `json:"spreadMicros"`
	EarliestMicros int64 `json:"earliestMicros"`
	LatestMicros   int64 `json:"latestMicros"`
	// MaxControlRTTMicros is the largest round trip of the calls the clock offsets came from:
	// the spread is right to ± that (each skew to ± half of it).
	MaxControlRTTMicros int64 `json:"maxControlRTTMicros"`
}

// StartSpreadOf summarizes the workers' start skews; nil for fewer than two workers.
func StartSpreadOf(ws []WorkerSummary) *StartSpread {
	if len(ws) < 2 {
		return nil
	}
	s := &StartSpread{Workers: len(ws), EarliestMicros: ws[0].StartSkewMicros, LatestMicros: ws[0].StartSkewMicros}
	for _, w := range ws {
		s.EarliestMicros = min(s.EarliestMicros, w.StartSkewMicros)
		s.LatestMicros = max(s.LatestMicros, w.StartSkewMicros)
		s.MaxControlRTTMicros = max(s.MaxControlRTTMicros, w.ControlRTTMicros)
	}
	s.SpreadMicros = s.LatestMicros - s.EarliestMicros
	return s
}
