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

// MessagingBenchmarkSuiteSpec is a study: a template benchmark, the matrix of points it is run
// at, how often each is repeated and in which order, and what its results must meet.
type MessagingBenchmarkSuiteSpec struct {
	// template is the MessagingBenchmark spec every run starts from; each point changes the
	// fields its matrix values name.
	Template MessagingBenchmarkSpec `json:"template"`

	// matrix is the points to run (none: the template alone is one point).
	// +optional
	Matrix Matrix `json:"matrix,omitzero"`

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

	// points, in matrix order.
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
