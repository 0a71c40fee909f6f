package netem

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// NetworkChaosGVK is the Chaos Mesh kind NetworkChaos builds. The Chaos Mesh Go module cannot be
// fetched from the module proxy, so the objects are unstructured.
var NetworkChaosGVK = schema.GroupVersionKind{Group: "chaos-mesh.org", Version: "v1alpha1", Kind: "NetworkChaos"}

// NetworkChaos builds the Chaos Mesh NetworkChaos objects that give the pods of mb link, its
// spec.network resolved (the run plan's Network.Link): one per impaired direction, up then down; nil when the link is
// unimpaired. netem shapes egress only, so the uplink is shaped on the worker pods' egress toward
// the broker and gateway pods, the downlink on theirs toward the workers. Each object is one
// netem action holding delay, jitter, reorder, loss, duplicate, corrupt and the rate: Chaos Mesh
// puts every NetworkChaos with a target into its own prio band behind an iptables CLASSIFY rule,
// so a separate bandwidth (tbf) object for the same pods would catch the packets instead of the
// netem one rather than after it; netem's own rate shapes the same packets it delays. The MTU is
// not applied: pods keep their interface MTU. The caller sets owner references.
//
// Chaos Mesh selects the pods when the object is created, and a NetworkChaos whose target
// matches no pod is never injected: create these objects once the worker and broker or gateway
// pods exist.
//
// direct says whether clients talk to the broker straight, with no msgbench gateway between (the
// run plan decides it from its groups: plan.Plan.DirectToBroker); only then is an external broker
// the uplink's target.
func NetworkChaos(mb *v1alpha1.MessagingBenchmark, link Link, direct bool) ([]*unstructured.Unstructured, error) {
	external, err := externalTarget(mb, direct)
	if err != nil {
		return nil, err
	}
	if external != "" && !link.Down.IsZero() {
		return nil, fmt.Errorf("spec.network.direction: the broker (or gateway) is external, so Chaos Mesh cannot shape its egress toward the workers; set direction: to to impair only the uplink")
	}

	// Chaos Mesh has no field for netem's gemodel (the API server refuses it by a CEL rule too;
	// this catches a manifest that reached the operator some other way).
	for _, d := range []struct {
		imp  Impairment
		spec *v1alpha1.LinkSpec
		path string
	}{{link.Up, mb.Spec.Network.Up, "spec.network.up"}, {link.Down, mb.Spec.Network.Down, "spec.network.down"}} {
		if d.imp.GilbertElliott.Enabled() {
			path := "spec.network"
			if d.spec != nil && d.spec.GilbertElliott != nil {
				path = d.path
			}
			return nil, fmt.Errorf("%s.gilbertElliott: Chaos Mesh's NetworkChaos has no Gilbert-Elliott loss (tc netem's gemodel); use lossPercent with correlation on Kubernetes, or run the manifest with msgbench run", path)
		}
	}

	var objs []*unstructured.Unstructured
	if !link.Up.IsZero() {
		objs = append(objs, networkChaos(mb, "up", link.Up, workerSelector(mb), serverSelector(mb), external))
	}
	if !link.Down.IsZero() {
		objs = append(objs, networkChaos(mb, "down", link.Down, serverSelector(mb), workerSelector(mb), ""))
	}
	return objs, nil
}

// externalTarget is the host of the external broker or gateway the workers talk to straight, or
// "". Workers talk straight to an external broker only when direct (mqtt and kafka clients); the
// gateway protocols reach a gateway pod, which then talks to the broker — or an external gateway
// (spec.gateway.external), the uplink's target then.
func externalTarget(mb *v1alpha1.MessagingBenchmark, direct bool) (string, error) {
	if g := mb.Spec.Gateway.External; g != nil && !direct && mb.Spec.GatewayMode() != "" {
		host, _, err := net.SplitHostPort(g.Address)
		if err != nil {
			return "", fmt.Errorf("spec.gateway.external.address: %w", err)
		}
		return host, nil
	}
	if mb.Spec.Broker.Type != v1alpha1.BrokerExternal || !direct {
		return "", nil
	}
	if mb.Spec.Broker.External == nil {
		return "", fmt.Errorf("spec.broker.external.address: required when spec.broker.type is external")
	}
	host, _, err := net.SplitHostPort(mb.Spec.Broker.External.Address)
	if err != nil {
		return "", fmt.Errorf("spec.broker.external.address: %w", err)
	}
	return host, nil
}

// netemSpec is the spec of one netem action: every parameter in one qdisc, each with its
// correlation. Correlations are always set ("0" when none) because only Chaos Mesh's defaulting
// webhook would otherwise fill them in. A correlation whose impairment is zero has no block to
// go in, and does nothing in netem either.
func netemSpec(imp Impairment) map[string]any {
	spec := map[string]any{"action": "netem", "mode": "all", "direction": "to"}
	cor := imp.Correlation
	if imp.Delay > 0 || imp.Jitter > 0 {
		delay := map[string]any{"latency": FormatDuration(imp.Delay), "correlation": cor.Delay.Percent()}
		if imp.Jitter > 0 {
			delay["jitter"] = FormatDuration(imp.Jitter)
		}
		if imp.Reorder > 0 {
			// gap 1: each packet, with probability reorder, goes out at once (tc's default gap).
			delay["reorder"] = map[string]any{"reorder": imp.Reorder.Percent(), "correlation": cor.Reorder.Percent(), "gap": int64(1)}
		}
		spec["delay"] = delay
	}
	for _, f := range []struct {
		key      string
		val, cor Fraction
	}{{"loss", imp.Loss, cor.Loss}, {"duplicate", imp.Duplicate, cor.Duplicate}, {"corrupt", imp.Corrupt, cor.Corrupt}} {
		if f.val > 0 {
			spec[f.key] = map[string]any{f.key: f.val.Percent(), "correlation": f.cor.Percent()}
		}
	}
	if imp.RateBitsPerSecond > 0 {
		// tc reads "kbit" as 1000 bit/s; "bps" would mean bytes per second.
		spec["rate"] = map[string]any{"rate": FormatRate(imp.RateBitsPerSecond)}
	}
	return spec
}

// networkChaos is the NetworkChaos shaping the egress of the source pods toward the target pods
// (or the external host).
func networkChaos(mb *v1alpha1.MessagingBenchmark, direction string, imp Impairment, source, target map[string]any, external string) *unstructured.Unstructured {
	spec := netemSpec(imp)
	spec["selector"] = source
	if external != "" {
		spec["externalTargets"] = []any{external}
	} else {
		spec["target"] = map[string]any{"mode": "all", "selector": target}
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	obj.SetGroupVersionKind(NetworkChaosGVK)
	obj.SetName(ChaosName(mb.Name, direction))
	obj.SetNamespace(mb.Namespace)
	obj.SetLabels(map[string]string{
		v1alpha1.LabelBenchmark:        v1alpha1.LabelValue(mb.Name),
		v1alpha1.LabelComponent:        v1alpha1.ComponentNetwork,
		"app.kubernetes.io/name":       "msgbench",
		"app.kubernetes.io/instance":   v1alpha1.LabelValue(mb.Name),
		"app.kubernetes.io/component":  v1alpha1.ComponentNetwork,
		"app.kubernetes.io/part-of":    "msgbench",
		"app.kubernetes.io/managed-by": "msgbench-operator",
	})
	return obj
}

// workerSelector selects the benchmark's load-generator pods.
func workerSelector(mb *v1alpha1.MessagingBenchmark) map[string]any {
	return map[string]any{
		"namespaces": []any{mb.Namespace},
		"labelSelectors": map[string]any{
			v1alpha1.LabelBenchmark: v1alpha1.LabelValue(mb.Name),
			v1alpha1.LabelComponent: v1alpha1.ComponentWorker,
		},
	}
}

// serverSelector selects the benchmark's broker and gateway pods: whichever the workers talk to.
func serverSelector(mb *v1alpha1.MessagingBenchmark) map[string]any {
	return map[string]any{
		"namespaces":     []any{mb.Namespace},
		"labelSelectors": map[string]any{v1alpha1.LabelBenchmark: v1alpha1.LabelValue(mb.Name)},
		"expressionSelectors": []any{map[string]any{
			"key":      v1alpha1.LabelComponent,
			"operator": "In",
			"values":   []any{v1alpha1.ComponentBroker, v1alpha1.ComponentGateway},
		}},
	}
}

// maxNameLength keeps names valid as label values and DNS labels too.
const maxNameLength = 63

// ChaosName is the name of the NetworkChaos for benchmark and suffix: "<benchmark>-net-<suffix>",
// at most 63 characters. A benchmark name too long for that is cut and followed by a hash of the
// whole name, so the name stays stable and distinct.
func ChaosName(benchmark, suffix string) string {
	tail := "-net-" + suffix
	if len(benchmark)+len(tail) <= maxNameLength {
		return benchmark + tail
	}
	sum := sha256.Sum256([]byte(benchmark))
	hash := hex.EncodeToString(sum[:4])
	keep := maxNameLength - len(tail) - len(hash) - 1
	return strings.TrimRight(benchmark[:keep], "-.") + "-" + hash + tail
}

// GroupNetworkChaos builds the NetworkChaos objects of device group group's own link
// (spec.groups[].network), as NetworkChaos does for spec.network: the uplink on the egress of
// the group's worker pods (label msgbench.io/group) toward server, the pods its clients reach
// (its gateway's, or the broker's), the downlink on theirs toward the group's pods. external is
// the host of an external broker the group's clients reach straight ("" otherwise), which only
// the uplink can impair. Names and labels carry the group, so each group's link is its own.
func GroupNetworkChaos(mb *v1alpha1.MessagingBenchmark, group string, link Link, server map[string]string, external string) ([]*unstructured.Unstructured, error) {
	field := "spec.groups[" + group + "].network"
	if external != "" && !link.Down.IsZero() {
		return nil, fmt.Errorf("%s.direction: the broker (or gateway) is external, so Chaos Mesh cannot shape its egress toward the workers; set direction: to to impair only the uplink", field)
	}
	if link.Up.GilbertElliott.Enabled() || link.Down.GilbertElliott.Enabled() {
		return nil, fmt.Errorf("%s.gilbertElliott: Chaos Mesh's NetworkChaos has no Gilbert-Elliott loss (tc netem's gemodel); use lossPercent with correlation on Kubernetes, or run the manifest with msgbench run", field)
	}
	workers := workerSelector(mb)
	workers["labelSelectors"].(map[string]any)[v1alpha1.LabelGroup] = group
	servers := map[string]any{}
	for k, v := range server {
		servers[k] = v
	}
	target := map[string]any{"namespaces": []any{mb.Namespace}, "labelSelectors": servers}
	var objs []*unstructured.Unstructured
	if !link.Up.IsZero() {
		objs = append(objs, networkChaos(mb, groupSuffix(group, "up"), link.Up, workers, target, external))
	}
	if !link.Down.IsZero() {
		objs = append(objs, networkChaos(mb, groupSuffix(group, "down"), link.Down, target, workers, ""))
	}
	for _, o := range objs {
		labels := o.GetLabels()
		labels[v1alpha1.LabelGroup] = group
		o.SetLabels(labels)
	}
	return objs, nil
}

// groupSuffix names a group's NetworkChaos of direction: "g-<group>-<direction>", the group's
// name hashed when the whole would not fit ChaosName's 63 characters.
func groupSuffix(group, direction string) string {
	if len(group) > 24 {
		sum := sha256.Sum256([]byte(group))
		group = group[:15] + "-" + hex.EncodeToString(sum[:4])
	}
	return "g-" + group + "-" + direction
}
