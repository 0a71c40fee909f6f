package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SuiteOrder is the order in which a suite runs its points' repetitions.
// +kubebuilder:validation:Enum=sequential;interleaved
type SuiteOrder string

// Suite orders.
const (
	// OrderSequential runs every repetition of a point before the next point.
	OrderSequential SuiteOrder = "sequential"
	// OrderInterleaved runs every point once, in an order shuffled with the suite's seed, then
	// again, so a drift of the machine spreads over all points instead of biasing the last.
	OrderInterleaved SuiteOrder = "interleaved"
)

// FailurePolicy says what a suite does when one of its runs fails.
// +kubebuilder:validation:Enum=Continue;Stop
type FailurePolicy string

// Failure policies.
const (
	FailureContinue FailurePolicy = "Continue"
	FailureStop     FailurePolicy = "Stop"
)

// MatrixAxis is one dimension of a suite's matrix: a spec field (or several that move together)
// and the values it takes.
// +kubebuilder:validation:XValidation:rule="has(self.field) != has(self.fields)",message="spec.matrix.axes: set field (one spec field) or fields (several that take each value together), not both",reason="FieldValueInvalid"
type MatrixAxis struct {
	// name labels the axis in point names, e.g. "clients" gives "clients16" (default: the
	// field's last element: "publishers16").
	// +kubebuilder:validation:Pattern=`^[a-zA-Z][a-zA-Z0-9]*$`
	// +kubebuilder:validation:MaxLength=40
	// +optional
	Name string `json:"name,omitempty"`

	// field is a MessagingBenchmark spec field path, as `msgbench run --set` takes it:
	// "qos", "workload.publishers", "network.profile", "groups[sensors].count" (a device group's
	// field: the list item named in brackets).
	// +kubebuilder:validation:Pattern=`^[a-zA-Z][a-zA-Z0-9]*(\[[a-z0-9]([-a-z0-9]*[a-z0-9])?\])?(\.[a-zA-Z][a-zA-Z0-9]*(\[[a-z0-9]([-a-z0-9]*[a-z0-9])?\])?)*$`
	// +kubebuilder:validation:MaxLength=100
	// +optional
	Field string `json:"field,omitempty"`

	// fields, instead of field, are several spec fields that take each value together: a
	// "clients" axis over workload.publishers, workload.subscribers and workload.topics.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:Pattern=`^[a-zA-Z][a-zA-Z0-9]*(\[[a-z0-9]([-a-z0-9]*[a-z0-9])?\])?(\.[a-zA-Z][a-zA-Z0-9]*(\[[a-z0-9]([-a-z0-9]*[a-z0-9])?\])?)*$`
	// +kubebuilder:validation:items:MaxLength=100
	// +optional
	Fields []string `json:"fields,omitempty"`

	// values the field takes, one point each (numbers, strings, booleans, as in the spec).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Values []apiextensionsv1.JSON `json:"values"`
}

// MatrixPoint assigns values to fields by path ("qos": 2, "workload.publishers": 16); in
// exclude, an axis's name stands for its fields too ("clients": 64).
type MatrixPoint map[string]apiextensionsv1.JSON

// Matrix is the suite's points: the product of its axes, less the combinations that match an
// exclude entry, plus each include entry.
type Matrix struct {
	// axes are the dimensions; points are their product (in the order given: the last axis
	// varies fastest).
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Axes []MatrixAxis `json:"axes,omitempty"`

	// exclude drops every point whose values match all the fields of one entry.
	// +kubebuilder:validation:MaxItems=256
	// +optional
	Exclude []MatrixPoint `json:"exclude,omitempty"`

	// include adds points: an entry that names exactly the axes' fields is one more point
	// (after the product); one that names other fields too, or fewer, is a point of its own with
	// the template's values elsewhere.
	// +kubebuilder:validation:MaxItems=256
	// +optional
	Include []MatrixPoint `json:"include,omitempty"`
}

// SearchPass is how a search step's trials decide it.
// +kubebuilder:validation:Enum=all;majority
type SearchPass string

// Search pass rules.
const (
	// PassAll: a step passes when every trial passed (it stops at the first failed trial).
	PassAll SearchPass = "all"
	// PassMajority: a step passes when more than half its trials passed (it stops once decided).
	PassMajority SearchPass = "majority"
)

// SuiteSearch finds the highest value of one spec field (the load) at which every run still
// meets the suite's objectives and the built-in criteria (docs/capacity.md): an exponential probe
// from start until a step passes and one fails, then bisection until the bracket is within
// precisionPercent, then a confirmation at the result.
// +kubebuilder:validation:XValidation:rule="has(self.field) != has(self.fields)",message="spec.search: set field (one spec field) or fields (several that take each value together), not both",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.min < self.max",message="spec.search.min must be below max",fieldPath=".min",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.start) || (self.start >= self.min && self.start <= self.max)",message="spec.search.start must lie from min to max",fieldPath=".start",reason="FieldValueInvalid"
type SuiteSearch struct {
	// field is the integer spec field to scale, as `msgbench run --set` takes it:
	// "workload.rate", "workload.publishers", "groups[sensors].count", "workload.connectRate".
	// +kubebuilder:validation:Pattern=`^[a-zA-Z][a-zA-Z0-9]*(\[[a-z0-9]([-a-z0-9]*[a-z0-9])?\])?(\.[a-zA-Z][a-zA-Z0-9]*(\[[a-z0-9]([-a-z0-9]*[a-z0-9])?\])?)*$`
	// +kubebuilder:validation:MaxLength=100
	// +optional
	Field string `json:"field,omitempty"`

	// fields, instead of field, are several integer spec fields that take each value together
	// (workload.publishers and workload.topics: a fleet of devices with a topic each).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:Pattern=`^[a-zA-Z][a-zA-Z0-9]*(\[[a-z0-9]([-a-z0-9]*[a-z0-9])?\])?(\.[a-zA-Z][a-zA-Z0-9]*(\[[a-z0-9]([-a-z0-9]*[a-z0-9])?\])?)*$`
	// +kubebuilder:validation:items:MaxLength=100
	// +optional
	Fields []string `json:"fields,omitempty"`

	// min and max bound the search: a search that fails at min, or passes at max, ends saying
	// so, with no capacity.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000000
	Min int64 `json:"min"`
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=100000000
	Max int64 `json:"max"`

	// start is the first value probed (default min): a guess near the capacity saves steps.
	// +optional
	Start *int64 `json:"start,omitempty"`

	// factor multiplies (after a pass) or divides (after a fail) the value while the probe looks
	// for a bracket.
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=100
	// +optional
	Factor int32 `json:"factor,omitempty"`

	// precisionPercent ends the bisection when the first failing value is within this share
	// of the last passing one: (fail − pass) ≤ precisionPercent % × pass (or 1, for integers).
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	PrecisionPercent int32 `json:"precisionPercent,omitempty"`

	// trials is how many runs a step may take; pass says how they decide it.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=15
	// +optional
	Trials int32 `json:"trials,omitempty"`

	// pass: all (every trial must pass; the step ends at the first failed trial) or majority
	// (more than half; the step ends once decided).
	// +kubebuilder:default=all
	// +optional
	Pass SearchPass `json:"pass,omitempty"`

	// confirm runs the result's value once more (as a step of its own, with its trials) before
	// the search ends; a failed confirmation moves the bracket down and the search goes on.
	// +kubebuilder:default=true
	// +optional
	Confirm *bool `json:"confirm,omitempty"`

	// maxRuns caps the search's runs, trials and confirmation included: a search that reaches it
	// ends with the bracket it has, saying the precision was not reached.
	// +kubebuilder:default=30
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=500
	// +optional
	MaxRuns int32 `json:"maxRuns,omitempty"`

	// maxDuration caps the search's time likewise: no run starts after it.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	// +optional
	MaxDuration *metav1.Duration `json:"maxDuration,omitempty"`
}

// MessagingBenchmarkSuiteSpec is a study: a template benchmark, the matrix of points it is run
// at, how often each is repeated and in which order, and what its results must meet.
// +kubebuilder:validation:XValidation:rule="!has(self.search) || !has(self.matrix)",message="spec.search: a search scales one field of the template; set no matrix with it (one suite per point, e.g. one per QoS)",fieldPath=".search",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.search) || !has(self.repetitions) || self.repetitions == 1",message="spec.repetitions: a search repeats a step with spec.search.trials",fieldPath=".repetitions",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.search) || !has(self.concurrency) || self.concurrency == 1",message="spec.concurrency: a search runs one run at a time (each step depends on the one before)",fieldPath=".concurrency",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.search) || !has(self.order) || self.order == 'sequential'",message="spec.order: a search decides its order step by step",fieldPath=".order",reason="FieldValueInvalid"
type MessagingBenchmarkSuiteSpec struct {
	// template is the MessagingBenchmark spec every run starts from; each point changes the
	// fields its matrix values name.
	Template MessagingBenchmarkSpec `json:"template"`

	// matrix is the points to run (none: the template alone is one point).
	// +optional
	Matrix Matrix `json:"matrix,omitzero"`

	// search, instead of a matrix, finds the highest value of one field at which the runs
	// still meet the objectives: the capacity, with its bracket and the curve (docs/capacity.md).
	// +optional
	Search *SuiteSearch `json:"search,omitempty"`

	// repetitions is how often each point runs (statistics need at least 2; 5 or more give a
	// useful 95 % confidence interval).
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Repetitions int32 `json:"repetitions,omitempty"`

	// order: sequential (every repetition of a point, then the next point) or interleaved
	// (every point once in a shuffled order, then again: a drift of the machine spreads over all
	// points).
	// +kubebuilder:default=sequential
	// +optional
	Order SuiteOrder `json:"order,omitempty"`

	// seed shuffles an interleaved order; unset, the suite draws one and records it in
	// status.seed, so the order can be repeated.
	// +optional
	Seed *int64 `json:"seed,omitempty"`

	// concurrency is how many runs measure at once. 1 (the default) never lets two runs share
	// the nodes while measuring, so one cannot disturb another; more is faster, and every
	// result then carries a caveat.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	Concurrency int32 `json:"concurrency,omitempty"`

	// objectives every point must meet (the same expressions as a MessagingBenchmark's
	// spec.objectives), judged on each point's statistics over its repetitions: on the mean of
	// a figure, and on percentiles pooled from all repetitions' merged histograms.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=200
	// +kubebuilder:validation:items:Pattern=`^\s*[a-zA-Z][a-zA-Z0-9]*(\.[a-zA-Z0-9]+)*\s*(<=|>=|==|!=|<|>)\s*\S+\s*$`
	// +optional
	Objectives []string `json:"objectives,omitempty"`

	// failurePolicy: Continue (default) records a failed run and goes on; Stop ends the suite
	// Failed at the first failed run.
	// +kubebuilder:default=Continue
	// +optional
	FailurePolicy FailurePolicy `json:"failurePolicy,omitempty"`

	// suspend stops starting new runs (runs already started finish); false resumes.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// ttlSecondsAfterFinished, when set, deletes the suite (and its runs) this many seconds after
	// it finished.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// SuitePhase summarises where a suite is.
// +kubebuilder:validation:Enum=Pending;Running;Suspended;Succeeded;Failed
type SuitePhase string

// Suite phases.
const (
	SuitePending   SuitePhase = "Pending"
	SuiteRunning   SuitePhase = "Running"
	SuiteSuspended SuitePhase = "Suspended"
	SuiteSucceeded SuitePhase = "Succeeded"
	SuiteFailed    SuitePhase = "Failed"
)

// SuiteRunCounts counts a suite's runs (points × repetitions).
type SuiteRunCounts struct {
	// total runs the suite will make.
	Total int32 `json:"total"`
	// running runs have started and not finished.
	Running int32 `json:"running"`
	// succeeded runs measured correctly.
	Succeeded int32 `json:"succeeded"`
	// failed runs ended Failed.
	Failed int32 `json:"failed"`
}

// FigureStats are one figure's statistics over a point's repetitions, as strings of decimal
// numbers (no floats in the API): the full set is in suite.json.
type FigureStats struct {
	// mean over the repetitions.
	Mean string `json:"mean"`
	// ci95 is the half-width of the 95 % confidence interval of the mean (Student's t); empty
	// with one repetition.
	// +optional
	CI95 string `json:"ci95,omitempty"`
	// cv is the coefficient of variation (standard deviation / mean) in percent.
	// +optional
	CV string `json:"cv,omitempty"`
}

// PointStatus is one point of the matrix.
type PointStatus struct {
	// name says the point's values, e.g. "qos1-publishers16".
	Name string `json:"name"`
	// values are the point's matrix values, by field path, as text.
	// +optional
	Values map[string]string `json:"values,omitempty"`
	// succeeded and failed count the point's finished runs.
	Succeeded int32 `json:"succeeded"`
	Failed    int32 `json:"failed"`
	// receivedPerSecond over the repetitions.
	// +optional
	ReceivedPerSecond *FigureStats `json:"receivedPerSecond,omitempty"`
	// latencyP99Micros is the end-to-end p99 in microseconds: mean over the repetitions.
	// +optional
	LatencyP99Micros *FigureStats `json:"latencyP99Micros,omitempty"`
	// unstable is true when a figure varies by more than 10 % (coefficient of variation) over
	// the repetitions: more repetitions, or a quieter machine, are needed before comparing it.
	// +optional
	Unstable bool `json:"unstable,omitempty"`
	// objectivesMet is whether the point met every objective (unset: none, or not judged yet).
	// +optional
	ObjectivesMet *bool `json:"objectivesMet,omitempty"`
}

// Search outcomes (docs/capacity.md).
const (
	// SearchSearching: the search has steps left to run.
	SearchSearching = "Searching"
	// SearchFound: the bracket is within the precision and the result was confirmed.
	SearchFound = "Found"
	// SearchAboveRange: the objectives held at max: the capacity is at least max, and no number is made up.
	SearchAboveRange = "AboveRange"
	// SearchBelowRange: the objectives failed at min: no load in the range meets them.
	SearchBelowRange = "BelowRange"
	// SearchCapped: maxRuns or maxDuration ended the search before the precision was reached.
	SearchCapped = "Capped"
)

// SearchStatus is where a capacity search stands.
type SearchStatus struct {
	// outcome: Searching, Found, AboveRange, BelowRange or Capped.
	Outcome string `json:"outcome"`
	// capacity is the highest value that passed, with a bracket (Found, or Capped with one).
	// +optional
	Capacity *int64 `json:"capacity,omitempty"`
	// lastPass and firstFail bracket the capacity: it lies from lastPass up to, not including,
	// firstFail.
	// +optional
	LastPass *int64 `json:"lastPass,omitempty"`
	// +optional
	FirstFail *int64 `json:"firstFail,omitempty"`
	// steps run so far (a step is one value, with its trials).
	Steps int32 `json:"steps"`
	// next is the value the search runs now.
	// +optional
	Next *int64 `json:"next,omitempty"`
	// message says how the search ended, or what it does next.
	// +optional
	Message string `json:"message,omitempty"`
}

// MessagingBenchmarkSuiteStatus is what the operator observed of the suite.
type MessagingBenchmarkSuiteStatus struct {
	// phase: Pending, Running, Suspended, Succeeded (every run ended; failed runs are counted)
	// or Failed (a run failed under failurePolicy Stop, every run failed, or the suite cannot run).
	// +optional
	Phase SuitePhase `json:"phase,omitempty"`

	// observedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Completed, ObjectivesMet, ResultsStored.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// seed the interleaved order was shuffled with.
	// +optional
	Seed *int64 `json:"seed,omitempty"`

	// runs counts the suite's runs.
	// +optional
	Runs SuiteRunCounts `json:"runs,omitzero"`

	// progress is "done/total" runs, for kubectl get.
	// +optional
	Progress string `json:"progress,omitempty"`

	// verdict is Passed (every point met every objective), Missed (some did not), Incomplete
	// (a point has no successful run) or None (no objectives).
	// +optional
	Verdict string `json:"verdict,omitempty"`

	// search is the capacity search's state (spec.search).
	// +optional
	Search *SearchStatus `json:"search,omitempty"`

	// points, in matrix order (a search's steps, in the order they ran).
	// +optional
	Points []PointStatus `json:"points,omitempty"`

	// startTime and completionTime of the suite.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// resultsURL is where suite.json was stored.
	// +optional
	ResultsURL string `json:"resultsURL,omitempty"`

	// message explains the phase.
	// +optional
	Message string `json:"message,omitempty"`
}

// MessagingBenchmarkSuite runs a study: a MessagingBenchmark template at every point of a matrix,
// each repeated, one run at a time unless asked otherwise, with statistics per point and a
// verdict against objectives. Each run is a child MessagingBenchmark.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mbs,categories=msgbench
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Runs",type=string,JSONPath=`.status.progress`
// +kubebuilder:printcolumn:name="Failed",type=integer,JSONPath=`.status.runs.failed`
// +kubebuilder:printcolumn:name="Verdict",type=string,JSONPath=`.status.verdict`
// +kubebuilder:printcolumn:name="Capacity",type=integer,JSONPath=`.status.search.capacity`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type MessagingBenchmarkSuite struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MessagingBenchmarkSuiteSpec   `json:"spec"`
	Status MessagingBenchmarkSuiteStatus `json:"status,omitempty"`
}

// MessagingBenchmarkSuiteList is a list of suites.
// +kubebuilder:object:root=true
type MessagingBenchmarkSuiteList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MessagingBenchmarkSuite `json:"items"`
}
