package v1alpha1

// HTTPEndpointSpec is an HTTP ingestion endpoint msgbench does not run: the user's own API,
// described by the request each device sends for each message. msgbench starts no HTTP gateway;
// the publishers send the request as the template says, and a response whose status is in
// acceptedStatuses counts as the message accepted. What the endpoint does with a message
// afterwards is not observed: a run against it has no subscribers (docs/http-api.md).
// +kubebuilder:validation:XValidation:rule="self.url.startsWith('http://') || self.url.startsWith('https://')",message="spec.http.endpoint.url: an http:// or https:// URL",fieldPath=".url",reason="FieldValueInvalid"
type HTTPEndpointSpec struct {
	// method of each request.
	// +kubebuilder:validation:Enum=POST;PUT;PATCH
	// +kubebuilder:default=POST
	// +optional
	Method string `json:"method,omitempty"`

	// url of each request, with placeholders filled in per message: {device} (the client's id),
	// {topic} (the topic it publishes to, escaped as one path segment), {seq} (the client's
	// message number, from 0) and {group} (its device group; "default" without groups). The
	// host is where the clients connect: an IP address or a name the machine resolves locally
	// (msgbench run), any name in the cluster on Kubernetes.
	// +kubebuilder:validation:MinLength=8
	// +kubebuilder:validation:MaxLength=2048
	// +required
	URL string `json:"url"`

	// headers of each request (values with the url's placeholders): an API key, a content type.
	// Host and Content-Length are set by msgbench.
	// +kubebuilder:validation:MaxProperties=32
	// +optional
	Headers map[string]string `json:"headers,omitempty"`

	// body of each request, with the url's placeholders and the message itself: {payload} (its
	// bytes as they are), {payload:base64} or {payload:hex}. Default "{payload}".
	// +kubebuilder:validation:MaxLength=65536
	// +optional
	Body *string `json:"body,omitempty"`

	// acceptedStatuses are the response statuses that mean the endpoint took the message;
	// any other is a failed publish. Default: 200 to 299.
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	// +kubebuilder:validation:items:Minimum=100
	// +kubebuilder:validation:items:Maximum=599
	// +optional
	AcceptedStatuses []int32 `json:"acceptedStatuses,omitempty"`
}
