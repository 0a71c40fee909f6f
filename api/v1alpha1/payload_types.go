package v1alpha1

// PayloadSpec varies a device group's messages: their size drawn from a distribution, or their
// content rendered from a JSON template (docs/fleets.md). Set one of size and template.
//
// Every message starts with msgbench's 16-byte header (publisher id, sequence number, intended
// send time), which counts losses, duplicates and order and measures latency; a size counts it
// (a message of size n is the header and n-16 random bytes), and a template's message is the
// header followed by the rendered JSON.
//
// Size and template are exclusive: a template's message is as long as what it renders to, as
// a device's is. Padding it to a drawn size would either break the JSON (random bytes) or send
// whitespace no device sends; to vary a templated message's size, vary its content.
// +kubebuilder:validation:XValidation:rule="!has(self.size) || !has(self.template)",message="template: a template's message is as long as it renders (the 16-byte header and the JSON), so it has no size distribution; set size (random content) or template, not both",fieldPath=".template",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="has(self.size) || has(self.template)",message="size: set size (a distribution of sizes, random content) or template (JSON content); without either, leave payload out and set publish.payloadBytes",fieldPath=".size",reason="FieldValueRequired"
type PayloadSpec struct {
	// size draws each message's size, header included, from a distribution instead of
	// publish.payloadBytes; the content is random bytes (incompressible, like encrypted sensor
	// data).
	// +optional
	Size *SizeDistribution `json:"size,omitempty"`

	// template is each message's content: JSON rendered per message, after the 16-byte header
	// (a message is 16 + the rendered length bytes). Its placeholders are
	//   {device}     the device's client id (text: write "{device}"),
	//   {index}      the device's index in its group (0 to count-1),
	//   {counter}    the message's sequence number, the one in its header (0, 1, 2, …),
	//   {timestamp}  the message's intended send time in Unix milliseconds (13 digits), a JSON
	//                number as most IoT platforms stamp readings (AWS IoT's timestamp(),
	//                ThingsBoard's ts), cheaper to render and parse than RFC 3339 text.
	// e.g. {"id":"{device}","n":{counter},"t":{timestamp},"temp":21.5}. It must be JSON once the
	// placeholders are filled in; any other {word} is refused as a misspelt placeholder. The
	// text is sent as written (write it compact: spaces are bytes on the wire).
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=65536
	// +optional
	Template string `json:"template,omitempty"`
}

// SizeDistribution is a distribution of message sizes in bytes, the 16-byte header included, so
// every size is between 16 and 16777216 (16 MiB). Each distribution takes its own fields:
//
//	uniform    min, max: every size from min to max equally likely (min = max: one size).
//	normal     mean, stddev; min and max truncate it (default: its 0.01st and 99.99th
//	           percentiles, min at least 16).
//	lognormal  median, p99; min and max truncate it as for normal. Sizes of real traffic are
//	           skewed to the right (most messages small, a long tail of large ones), which a
//	           log-normal distribution describes. It is given by two sizes an engineer reads off
//	           a broker's or a capture's histogram: the median (half the messages are smaller)
//	           and the 99th percentile (one in a hundred is larger); in the usual terms
//	           mu = ln(median) and sigma = ln(p99/median)/2.326.
//	weighted   values: a list of sizes with their weights, as a measured mix (70% 64 B
//	           heartbeats, 25% 512 B readings, 5% 4 KiB diagnostics).
//
// A truncated distribution draws again any size outside [min, max] (its shape inside is kept);
// the interval must hold at least 1% of the distribution. A group's largest message (max, or
// the largest value) sizes its subscribers' buffers and maximum packet size.
// +kubebuilder:validation:XValidation:rule="self.distribution != 'uniform' || has(self.min)",message="min: a uniform distribution draws every size from min to max; set min",fieldPath=".min",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="self.distribution != 'uniform' || has(self.max)",message="max: a uniform distribution draws every size from min to max; set max",fieldPath=".max",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="self.distribution != 'normal' || has(self.mean)",message="mean: a normal distribution takes mean and stddev; set mean",fieldPath=".mean",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="self.distribution != 'normal' || has(self.stddev)",message="stddev: a normal distribution takes mean and stddev; set stddev",fieldPath=".stddev",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="self.distribution != 'lognormal' || has(self.median)",message="median: a lognormal distribution takes median and p99; set median",fieldPath=".median",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="self.distribution != 'lognormal' || has(self.p99)",message="p99: a lognormal distribution takes median and p99; set p99",fieldPath=".p99",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="self.distribution != 'weighted' || has(self.values)",message="values: a weighted distribution takes values, a list of {bytes, weight}; set values",fieldPath=".values",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="!has(self.mean) || self.distribution == 'normal'",message="mean: only a normal distribution has mean and stddev (uniform: min, max; lognormal: median, p99; weighted: values); remove mean",fieldPath=".mean",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.stddev) || self.distribution == 'normal'",message="stddev: only a normal distribution has mean and stddev (uniform: min, max; lognormal: median, p99; weighted: values); remove stddev",fieldPath=".stddev",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.median) || self.distribution == 'lognormal'",message="median: only a lognormal distribution has median and p99 (uniform: min, max; normal: mean, stddev; weighted: values); remove median",fieldPath=".median",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.p99) || self.distribution == 'lognormal'",message="p99: only a lognormal distribution has median and p99 (uniform: min, max; normal: mean, stddev; weighted: values); remove p99",fieldPath=".p99",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.values) || self.distribution == 'weighted'",message="values: only a weighted distribution has values (uniform: min, max; normal: mean, stddev; lognormal: median, p99); remove values",fieldPath=".values",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.min) || self.distribution != 'weighted'",message="min: a weighted distribution's sizes are its values' bytes; remove min",fieldPath=".min",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.max) || self.distribution != 'weighted'",message="max: a weighted distribution's sizes are its values' bytes; remove max",fieldPath=".max",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.min) || !has(self.max) || self.min <= self.max",message="max: smaller than min",fieldPath=".max",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.median) || !has(self.p99) || self.p99 > self.median",message="p99: must be larger than median (the spread is ln(p99/median))",fieldPath=".p99",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.mean) || ((!has(self.min) || self.min <= self.mean) && (!has(self.max) || self.mean <= self.max))",message="mean: outside [min, max], the interval sizes are drawn in",fieldPath=".mean",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.median) || ((!has(self.min) || self.min <= self.median) && (!has(self.max) || self.median <= self.max))",message="median: outside [min, max], the interval sizes are drawn in",fieldPath=".median",reason="FieldValueInvalid"
type SizeDistribution struct {
	// distribution is the sizes' distribution: uniform, normal, lognormal or weighted.
	// +kubebuilder:validation:Enum=uniform;normal;lognormal;weighted
	// +required
	Distribution string `json:"distribution"`

	// min is the smallest size (uniform; normal and lognormal: truncation, default their 0.01st
	// percentile and at least 16).
	// +kubebuilder:validation:Minimum=16
	// +kubebuilder:validation:Maximum=16777216
	// +optional
	Min *int32 `json:"min,omitempty"`

	// max is the largest size (uniform; normal and lognormal: truncation, default their 99.99th
	// percentile).
	// +kubebuilder:validation:Minimum=16
	// +kubebuilder:validation:Maximum=16777216
	// +optional
	Max *int32 `json:"max,omitempty"`

	// mean is a normal distribution's mean size.
	// +kubebuilder:validation:Minimum=16
	// +kubebuilder:validation:Maximum=16777216
	// +optional
	Mean *int32 `json:"mean,omitempty"`

	// stddev is a normal distribution's standard deviation in bytes.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16777216
	// +optional
	StdDev *int32 `json:"stddev,omitempty"`

	// median is a lognormal distribution's median size: half the messages are smaller.
	// +kubebuilder:validation:Minimum=16
	// +kubebuilder:validation:Maximum=16777216
	// +optional
	Median *int32 `json:"median,omitempty"`

	// p99 is a lognormal distribution's 99th percentile: one message in a hundred is larger.
	// +kubebuilder:validation:Minimum=17
	// +kubebuilder:validation:Maximum=16777216
	// +optional
	P99 *int32 `json:"p99,omitempty"`

	// values are a weighted distribution's sizes, each drawn with probability its weight over
	// the sum of the weights.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	// +optional
	Values []WeightedSize `json:"values,omitempty"`
}

// WeightedSize is one size of a weighted distribution.
type WeightedSize struct {
	// bytes is the message's size, header included.
	// +kubebuilder:validation:Minimum=16
	// +kubebuilder:validation:Maximum=16777216
	// +required
	Bytes int32 `json:"bytes"`

	// weight is how often, relative to the other values' weights, the size is drawn (e.g. 70,
	// 25, 5 for 70%, 25%, 5%).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000
	// +required
	Weight int32 `json:"weight"`
}
