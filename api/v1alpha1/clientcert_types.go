package v1alpha1

// ClientCertificatesSpec gives every device its own TLS client certificate (mutual TLS), the way
// most production IoT brokers authenticate devices (docs/tls.md, Client certificates). Each
// client presents a certificate whose subject common name is its client id (commonName), signed
// by the CA msgbench generates for the run or by one the user supplies (ca). The broker or gateway
// msgbench runs requests a certificate, refuses a handshake without one and verifies it against
// that CA (Mosquitto: require_certificate; the HTTP and QUIC gateways; other brokers are refused).
// An external broker is the user's: it is not configured, the devices present their certificates.
type ClientCertificatesSpec struct {
	// ca is the CA that signs the devices' certificates. Unset: msgbench generates a CA for the
	// run (an ECDSA P-256 key) and hands it to the broker or gateway it runs.
	// +optional
	CA *ClientCASource `json:"ca,omitempty"`

	// keyType is the devices' key: ecdsa-p256 (default; a certificate of about 400 bytes on the
	// wire, made in tens of microseconds) or rsa-2048 (about 800 bytes, and each key takes tens
	// of milliseconds to generate).
	// +kubebuilder:default=ecdsa-p256
	// +optional
	KeyType ClientKeyType `json:"keyType,omitempty"`

	// commonName is the pattern of each certificate's subject common name; {clientId} is the
	// device's client id. Default "{clientId}". A broker that takes the certificate's identity
	// as the username (Mosquitto use_identity_as_username) sees this name.
	// +kubebuilder:default="{clientId}"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[^\x00]+$`
	// +optional
	CommonName string `json:"commonName,omitempty"`
}

// ClientCASource is a CA the user supplies to sign the devices' certificates: its certificate and
// its private key, PEM (the key unencrypted: PKCS #8, PKCS #1 or SEC 1).
// +kubebuilder:validation:XValidation:rule="has(self.secretRef) != has(self.certFile)",message="ca: set certFile and keyFile (msgbench run) or secretRef (on Kubernetes), one of them",fieldPath=".certFile",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="!has(self.certFile)",message="on Kubernetes, spec.tls.clientCertificates.ca: the operator reads no files; give the devices' CA as a kubernetes.io/tls Secret in the benchmark's namespace with secretRef (certFile and keyFile are for msgbench run)",fieldPath=".certFile",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="has(self.certFile) == has(self.keyFile)",message="ca: certFile and keyFile go together: the CA's certificate and its private key",fieldPath=".keyFile",reason="FieldValueRequired"
type ClientCASource struct {
	// certFile is the CA certificate's PEM file (msgbench run), relative to the manifest's folder.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	CertFile string `json:"certFile,omitempty"`

	// keyFile is the CA's private key PEM file (msgbench run), relative to the manifest's folder.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	KeyFile string `json:"keyFile,omitempty"`

	// secretRef names a Secret in the benchmark's namespace with the CA's certificate (tls.crt)
	// and private key (tls.key), a kubernetes.io/tls Secret; the operator mounts it in the worker
	// pods (each signs its devices' certificates) and gives the CA certificate, never the key, to
	// the broker and the gateways it runs.
	// +optional
	SecretRef *LocalSecretReference `json:"secretRef,omitempty"`
}

// ClientKeyType is the key algorithm of the devices' certificates.
// +kubebuilder:validation:Enum=ecdsa-p256;rsa-2048
type ClientKeyType string

// Device key types.
const (
	ClientKeyECDSAP256 ClientKeyType = "ecdsa-p256"
	ClientKeyRSA2048   ClientKeyType = "rsa-2048"
)

// ClientCertificates is spec.tls.clientCertificates, nil when the devices present none.
func (s *MessagingBenchmarkSpec) ClientCertificates() *ClientCertificatesSpec {
	if s.TLS == nil {
		return nil
	}
	return s.TLS.ClientCertificates
}
