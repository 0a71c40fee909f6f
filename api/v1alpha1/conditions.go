package v1alpha1

// Conditions that judge the measurement rather than the run's progress (set once the results
// are merged; docs/operator.md).
const (
	// ConditionOfferedLoadSustained (open-loop runs only): True when every message the schedule
	// put in the window was sent; False, reason OfferedLoadNotSustained, with how many were not.
	ConditionOfferedLoadSustained = "OfferedLoadSustained"
	// ConditionCaveats: True when something bent part of the figures (the reason lists the caveat
	// types, the message says what each affects), False when nothing did.
	ConditionCaveats = "Caveats"
)
