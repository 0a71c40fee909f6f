package resources

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/plan"
)

// PlanPath is where the workers, the gateway and the broker's usage sidecar find the run's
// compiled plan: the spec ConfigMap mounted at /etc/msgbench.
const PlanPath = "/etc/msgbench/" + plan.FileName

// SpecConfigMap holds the run's compiled plan (plan.json, the plan's wire form) for the workers,
// the gateway and the usage sidecar: every process of the run carries out the operator's one
// compilation instead of admitting the manifest again (a re-admitted manifest is how a warm-up
// of 0s became the 5 s default, twice).
func SpecConfigMap(mb *v1alpha1.MessagingBenchmark, p *plan.Plan) (*corev1.ConfigMap, error) {
	data, err := plan.Marshal(p)
	if err != nil {
		return nil, err
	}
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta(mb, NamesOf(mb).Spec, v1alpha1.ComponentWorker),
		Data:       map[string]string{plan.FileName: string(data)},
	}, nil
}

// ControlSecret holds the token the operator and its workers authenticate the control
// protocol with.
func ControlSecret(mb *v1alpha1.MessagingBenchmark, token string) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: meta(mb, NamesOf(mb).Control, v1alpha1.ComponentWorker),
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"token": []byte(token)},
	}
}

// TLSSecret holds the CA and server certificate generated for this benchmark.
func TLSSecret(mb *v1alpha1.MessagingBenchmark, b *certs.Bundle) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: meta(mb, NamesOf(mb).TLS, v1alpha1.ComponentBroker),
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{"ca.crt": b.CACert, corev1.TLSCertKey: b.ServerCert, corev1.TLSPrivateKeyKey: b.ServerKey},
	}
}

// ClientCASecret holds the devices' CA the operator generated for this benchmark
// (spec.tls.clientCertificates without ca): its certificate and private key, PEM. The worker pods
// mount both (each signs its devices' certificates); the broker and the gateways the certificate.
func ClientCASecret(mb *v1alpha1.MessagingBenchmark, certPEM, keyPEM []byte) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: meta(mb, NamesOf(mb).ClientCA, v1alpha1.ComponentWorker),
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM},
	}
}

// CertificateHosts are the names the generated server certificate is valid for: the broker's
// and gateway's Service names (for Kafka, Strimzi's bootstrap Service and broker pods).
func CertificateHosts(mb *v1alpha1.MessagingBenchmark) []string {
	n := NamesOf(mb)
	var hosts []string
	for _, svc := range []string{n.Broker, n.Gateway} {
		hosts = append(hosts, svc, fmt.Sprintf("%s.%s", svc, mb.Namespace), fmt.Sprintf("%s.%s.svc", svc, mb.Namespace),
			fmt.Sprintf("%s.%s.svc.cluster.local", svc, mb.Namespace))
	}
	if mb.Spec.Broker.Type == v1alpha1.BrokerKafka {
		hosts = append(hosts, KafkaCertificateHosts(mb)...)
	}
	return hosts
}

// WorkerServiceAccount is the workers' identity: no token is mounted and no role is bound,
// because a worker talks only to the broker and answers the operator.
func WorkerServiceAccount(mb *v1alpha1.MessagingBenchmark) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		TypeMeta:                     metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta:                   meta(mb, NamesOf(mb).WorkerServiceAccount, v1alpha1.ComponentWorker),
		AutomountServiceAccountToken: ptr.To(false),
	}
}

// RunID makes client ids unique per run on a shared broker: the start of the benchmark's UID.
func RunID(mb *v1alpha1.MessagingBenchmark) string {
	id := strings.ReplaceAll(string(mb.UID), "-", "")
	if len(id) > 8 {
		id = id[:8]
	}
	return id
}

// ResultConfigMap keeps the merged result (gzipped JSON) in the cluster, beside the benchmark,
// so that it survives without an object store:
// kubectl get cm <name>-result -o jsonpath='{.binaryData.result\.json\.gz}' | base64 -d | gunzip
func ResultConfigMap(mb *v1alpha1.MessagingBenchmark, resultGz []byte) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta(mb, NamesOf(mb).Result, "result"),
		BinaryData: map[string][]byte{"result.json.gz": resultGz},
	}
}
