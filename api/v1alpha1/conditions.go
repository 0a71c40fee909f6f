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

// ConditionObjectivesMet judges a run or a suite against its objectives (spec.objectives): True
// when every objective was met, False (reason ObjectivesMissed) naming each one missed with the
// measured value, Unknown while there is nothing to judge yet. It is apart from the phase: a
// run can measure correctly (Succeeded) and miss its objectives. Not set when there are none.
const ConditionObjectivesMet = "ObjectivesMet"
