package v1alpha1

// KubernetesOnlyRule names one CEL rule of the MessagingBenchmark spec that only the API server
// applies: what the operator's Chaos Mesh (or pods) cannot do but `msgbench run`'s emulator can.
// The API server refuses a spec that breaks it; `msgbench run` (internal/manifest) leaves the rule
// out and runs the spec.
//
// Why a Go table: the mark cannot live in the CRD as data. A CEL rule
// (x-kubernetes-validations) has only rule, message, messageExpression, reason (one of four
// field.ErrorType values the API server enforces), fieldPath and optionalOldSelf, and the CRD's
// schema takes no x- extension of our own (apiextensions' JSONSchemaProps has a field for each
// x-kubernetes-* it knows and nothing else: controller-gen has no marker for one, and an unknown key is
// refused by strict field validation or dropped when the CRD is decoded). Before, the mark was the message's first words
// ("on Kubernetes, "): rewording a message would silently have made `msgbench run` enforce the
// rule, or stop enforcing another. reason and fieldPath are meaningful and shared with other
// rules, and a CEL comment in the rule would hide a behaviour in an expression. So each rule is
// named here by where it sits and what it says, which nothing but a change to the rule itself
// can change: internal/manifest's TestKubernetesOnlyRulesNameCRDRules holds that every entry
// matches exactly one rule of both generated CRDs (MessagingBenchmark, and the suite's template)
// and that every rule worded as Kubernetes-only is an entry. Adding one: write the marker
// (message starting "on Kubernetes, ", by convention, so that a user reads why `msgbench run`
// accepts what `kubectl apply` refuses), run `make manifests`, and add its entry here.
//
// +kubebuilder:object:generate=false
type KubernetesOnlyRule struct {
	// Path is the schema the rule is written on, as the JSON field names from the spec down,
	// joined by dots ("network": one of spec.network's rules; "" for the spec's own), with "[*]"
	// for a list's items ("network.timeline.[*]") and "{*}" for a map's values.
	Path string
	// Rule is the rule's CEL expression, exactly as its marker and the generated CRD write it.
	Rule string
	// Why is what Kubernetes cannot do that msgbench run can.
	Why string
}

// KubernetesOnlyRules are the Kubernetes-only rules of the MessagingBenchmark spec (and so of a
// suite's template).
var KubernetesOnlyRules = []KubernetesOnlyRule{
	{
		Path: "network",
		Rule: "!(has(self.gilbertElliott) || (has(self.up) && has(self.up.gilbertElliott)) || (has(self.down) && has(self.down.gilbertElliott)) || (has(self.timeline) && self.timeline.exists(s, has(s.gilbertElliott) || (has(s.up) && has(s.up.gilbertElliott)) || (has(s.down) && has(s.down.gilbertElliott)))))",
		Why:  "Chaos Mesh's NetworkChaos has no Gilbert-Elliott loss; the local emulator applies it",
	},
	{
		Path: "network",
		Rule: "!has(self.radio) || has(self.radio.energy)",
		Why:  "Chaos Mesh applies one netem queue per pod and keeps no per-device radio states, so a radio there only accounts energy; the local emulator keeps the states",
	},
	{
		Path: "",
		Rule: "!has(self.groups) || !self.groups.exists(l, has(l.start) && has(l.subscribe)) || !self.groups.exists(g, (has(g.network) || has(g.placement)) && (has(g.publish) || (has(g.start) && has(g.subscribe))))",
		Why:  "a late subscribing group counts what it expects from its publishers' sequence numbers read in its own process; the operator runs each group with a network or a placement of its own in a pod of its own, msgbench run runs every group in one process",
	},
	{
		Path: "groups.[*].network",
		Rule: "!(has(self.gilbertElliott) || (has(self.up) && has(self.up.gilbertElliott)) || (has(self.down) && has(self.down.gilbertElliott)) || (has(self.timeline) && self.timeline.exists(s, has(s.gilbertElliott) || (has(s.up) && has(s.up.gilbertElliott)) || (has(s.down) && has(s.down.gilbertElliott)))))",
		Why:  "Chaos Mesh's NetworkChaos has no Gilbert-Elliott loss; the local emulator applies it",
	},
	{
		Path: "tls.clientCertificates.ca",
		Rule: "!has(self.certFile)",
		Why:  "the operator reads no files from the user's machine: the devices' CA comes from a Secret (secretRef); msgbench run reads certFile and keyFile",
	},
	{
		Path: "groups.[*].network",
		Rule: "!has(self.radio) || has(self.radio.energy)",
		Why:  "Chaos Mesh applies one netem queue per pod and keeps no per-device radio states, so a radio there only accounts energy; the local emulator keeps the states",
	},
	{
		Path: "",
		Rule: "self.broker.type != 'kafka' || !((has(self.identity) && (has(self.identity.username) || has(self.identity.credentials))) || (has(self.groups) && self.groups.exists(g, has(g.identity) && (has(g.identity.username) || has(g.identity.credentials)))))",
		Why:  "the operator's Strimzi Kafka has no SASL listener with the devices' users yet; msgbench run's local Kafka gets one",
	},
}

// IsKubernetesOnly reports whether the rule written at path (as KubernetesOnlyRule.Path) is one
// of KubernetesOnlyRules.
func IsKubernetesOnly(path, rule string) bool {
	for _, r := range KubernetesOnlyRules {
		if r.Path == path && r.Rule == rule {
			return true
		}
	}
	return false
}
