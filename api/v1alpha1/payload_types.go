package v1alpha1

// PayloadSpec varies a device group's messages: their size drawn from a distribution, their
// content from a JSON template (docs/fleets.md).
type PayloadSpec struct {
	// size draws each message's size from a distribution instead of publish.payloadBytes.
	// +optional
	Size *SizeDistribution `json:"size,omitempty"`
}

// SizeDistribution is a distribution of message sizes in bytes.
type SizeDistribution struct {
	// distribution is the size's distribution.
	// +kubebuilder:validation:Enum=uniform;normal;lognormal;weighted
	// +required
	Distribution string `json:"distribution"`
}
