package resources

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/certs"
)

// SpecConfigMap holds the benchmark as a manifest (benchmark.yaml) for the workers and gateways,
// which parse it exactly like `msgbench run` does.
func SpecConfigMap(mb *v1alpha1.MessagingBenchmark) (*corev1.ConfigMap, error) {
	// The metadata the workers' and gateway's metrics are labelled with: name, namespace, and a
	// suite's run's suite, point and repetition.
	md := map[string]any{"name": mb.Name, "namespace": mb.Namespace}
	if s := mb.Labels[v1alpha1.LabelSuite]; s != "" {
		md["labels"] = map[string]string{v1alpha1.LabelSuite: s}
		md["annotations"] = map[string]string{v1alpha1.AnnotationPoint: mb.Annotations[v1alpha1.AnnotationPoint],
			v1alpha1.AnnotationRepetition: mb.Annotations[v1alpha1.AnnotationRepetition]}
	}
	doc := struct {
		APIVersion string                          `json:"apiVersion"`
		Kind       string                          `json:"kind"`
		Metadata   map[string]any                  `json:"metadata"`
		Spec       v1alpha1.MessagingBenchmarkSpec `json:"spec"`
	}{v1alpha1.GroupVersion.String(), "MessagingBenchmark", md, mb.Spec}
	data, err := yaml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	if data, err = keepZeroWarmup(data, mb.Spec.Workload.Warmup.Duration); err != nil {
		return nil, err
	}
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta(mb, NamesOf(mb).Spec, v1alpha1.ComponentWorker),
		Data:       map[string]string{"benchmark.yaml": string(data)},
	}, nil
}

// keepZeroWarmup writes spec.workload.warmup: 0s into the manifest when the warm-up is zero:
// omitted (omitzero), the workers' parse would give it its default of 5 s — a run with
// workload.messages and no warm-up was then refused by every worker, one with a duration ran 5 s
// longer than asked.
func keepZeroWarmup(data []byte, warmup time.Duration) ([]byte, error) {
	if warmup != 0 {
		return data, nil
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	spec, _ := m["spec"].(map[string]any)
	if spec == nil {
		return data, nil
	}
	w, _ := spec["workload"].(map[string]any)
	if w == nil {
		w = map[string]any{}
		spec["workload"] = w
	}
	w["warmup"] = "0s"
	return yaml.Marshal(m)
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
