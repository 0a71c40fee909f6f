package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Labels on every object the operator creates for a benchmark. Selectors (Services, Chaos Mesh
// NetworkChaos, the results collector) rely on them.
const (
	// LabelBenchmark holds the MessagingBenchmark's name.
	LabelBenchmark = "msgbench.io/benchmark"
	// LabelComponent holds one of the Component* values.
	LabelComponent = "msgbench.io/component"
	// LabelSuite, on a suite's run, holds the MessagingBenchmarkSuite's name (LabelValue of it).
	LabelSuite = "msgbench.io/suite"
	// AnnotationPoint and AnnotationRepetition, on a suite's run, name its point and repetition.
	AnnotationPoint      = "msgbench.io/point"
	AnnotationRepetition = "msgbench.io/repetition"
	// LabelStudy groups the samples of one reference study.
	LabelStudy = "msgbench.io/study"
	// LabelGroup, on the worker pods of a device group behind a link of its own and on that
	// link's NetworkChaos, holds the group's name: its NetworkChaos selects its pods alone.
	LabelGroup = "msgbench.io/group"
	// LabelGateway, on a gateway's pods in a run with gateways of several protocols, holds the
	// gateway's mode (mqtt-sn, http): its Service and a group's NetworkChaos select them alone.
	LabelGateway = "msgbench.io/gateway"
)

// Values of LabelComponent.
const (
	ComponentBroker  = "broker"
	ComponentGateway = "gateway"
	ComponentWorker  = "worker"
	ComponentNetwork = "network"
)

// ShortName makes a DNS label (at most 63 characters, no dots) of name+suffix for object names
// and label values. Names that are too long or contain dots get a hash of the full name, so two
// benchmarks never share one.
func ShortName(name, suffix string) string {
	const limit = 63
	if len(name)+len(suffix) <= limit && !strings.Contains(name, ".") {
		return name + suffix
	}
	sum := sha256.Sum256([]byte(name))
	h := hex.EncodeToString(sum[:])[:8]
	keep := min(len(name), limit-len(suffix)-len(h)-1)
	base := strings.Trim(strings.ReplaceAll(name[:keep], ".", "-"), "-")
	return base + "-" + h + suffix
}

// LabelValue is the value of LabelBenchmark for a benchmark named name.
func LabelValue(name string) string { return ShortName(name, "") }
