package v1alpha1

// Labels on every object the operator creates for a benchmark. Selectors (Services, Chaos Mesh
// NetworkChaos, the results collector) rely on them.
const (
	// LabelBenchmark holds the MessagingBenchmark's name.
	LabelBenchmark = "msgbench.io/benchmark"
	// LabelComponent holds one of the Component* values.
	LabelComponent = "msgbench.io/component"
	// LabelStudy groups the samples of one reference study.
	LabelStudy = "msgbench.io/study"
)

// Values of LabelComponent.
const (
	ComponentBroker  = "broker"
	ComponentGateway = "gateway"
	ComponentWorker  = "worker"
	ComponentNetwork = "network"
)
