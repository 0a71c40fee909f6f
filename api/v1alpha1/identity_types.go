package v1alpha1

// IdentitySpec is who the devices are: the client id each one connects with and the username and
// password it shows the broker (docs/identity.md). A pattern's placeholders are {index} (the
// device's number: 0 to count-1 in a group; in a spec without groups the publishers come first,
// then the subscribers), {index:N} (that number zero-padded to N digits, {index:05} or
// {index:5}), {group} (the group's name; "default" without groups) and {run} (the run's random
// id, which keeps ids apart on a broker shared with other runs); username and password take
// {clientId} too (the device's client id). A field left out of a group's identity is
// spec.identity's.
// +kubebuilder:validation:XValidation:rule="!has(self.clientId) || self.clientId.matches('[{]index(:[0-9]{1,2})?[}]')",message="clientId: the pattern must contain {index} (or {index:N}, zero-padded to N digits): without it every device would get the same client id, and on an MQTT broker two clients with one id take each other's connection",fieldPath=".clientId",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="!has(self.password) || has(self.username)",message="password: MQTT sends a password only with a username; set username too",fieldPath=".password",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="!has(self.credentials) || (!has(self.username) && !has(self.password))",message="credentials: the devices' usernames and passwords come from credentials or from the username and password patterns, not both",fieldPath=".credentials",reason="FieldValueForbidden"
type IdentitySpec struct {
	// clientId is the pattern of each device's client id (MQTT, MQTT-SN, the Kafka client.id),
	// e.g. "sensor-{index:05}". It must contain {index}. Default: msgbench's own ids,
	// "{run}-{group}-{index}" in a group and mb<run>-p<i> (publishers), mb<run>-s<i>
	// (subscribers) without groups.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=100
	// +kubebuilder:validation:Pattern=`^[^#+/\x00]+$`
	// +optional
	ClientID string `json:"clientId,omitempty"`

	// username is the pattern of each device's username (MQTT CONNECT; HTTP Basic
	// authentication), e.g. "dev-{index}". Default: none (anonymous).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=100
	// +kubebuilder:validation:Pattern=`^[^\x00]+$`
	// +optional
	Username string `json:"username,omitempty"`

	// password is the pattern of each device's password, e.g. "pw-{index}"; it is stored with
	// the spec as written (in the result too). Keep real secrets in credentials.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=100
	// +kubebuilder:validation:Pattern=`^[^\x00]+$`
	// +optional
	Password string `json:"password,omitempty"`

	// credentials lists each device's username and password, by client id, in a file (msgbench
	// run) or a Secret (the operator): CSV lines clientId,username,password. Only its location is
	// stored with the spec, never its content.
	// +optional
	Credentials *CredentialsSource `json:"credentials,omitempty"`

	// saslMechanism is how a Kafka device proves its username and password to the broker
	// (protocol kafka only): PLAIN (the password in the clear, inside TLS when spec.tls is
	// enabled) or SCRAM-SHA-256 / SCRAM-SHA-512 (a salted challenge; the password never crosses
	// the wire). Default PLAIN when the devices have credentials. The Kafka msgbench runs gets a
	// SASL listener (SASL_PLAINTEXT, or SASL_SSL with TLS) that knows each device's user; an
	// external Kafka must know them already (docs/kafka.md).
	// +optional
	SASLMechanism SASLMechanism `json:"saslMechanism,omitempty"`
}

// SASLMechanism is a Kafka SASL mechanism, spelled as Kafka's sasl.mechanism spells it.
// +kubebuilder:validation:Enum=PLAIN;SCRAM-SHA-256;SCRAM-SHA-512
type SASLMechanism string

// The SASL mechanisms msgbench's Kafka clients speak.
const (
	SASLPlain       SASLMechanism = "PLAIN"
	SASLScramSHA256 SASLMechanism = "SCRAM-SHA-256"
	SASLScramSHA512 SASLMechanism = "SCRAM-SHA-512"
)

// CredentialsSource is where the devices' credentials are listed: one line per device,
// clientId,username,password (a # line is a comment).
// +kubebuilder:validation:XValidation:rule="has(self.file) != has(self.secretRef)",message="credentials: set file (msgbench run) or secretRef (on Kubernetes), one of them",fieldPath=".file",reason="FieldValueRequired"
type CredentialsSource struct {
	// file is the CSV file msgbench run reads, relative to the manifest's folder.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	File string `json:"file,omitempty"`

	// secretRef names a Secret in the benchmark's namespace whose key credentials.csv holds the
	// lines; the operator mounts it in the worker pods.
	// +optional
	SecretRef *LocalSecretReference `json:"secretRef,omitempty"`
}
