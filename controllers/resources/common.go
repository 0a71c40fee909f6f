// Package resources builds the Kubernetes objects the operator creates for a MessagingBenchmark.
// Every builder is a pure function from the benchmark (its compiled plan, where the builder decides
// from the protocol, and the operator's Config) to an object:
// no client calls, so `msgbench render` prints exactly what the operator applies, and golden
// files pin each object's shape (testdata/*.golden.yaml, refreshed with go test -update).
package resources

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/version"
	"github.com/msgbench/msgbench/plan"
)

// Config holds the operator's settings that shape the objects.
type Config struct {
	// MsgbenchImage runs the workers and gateways; MosquittoImage the Mosquitto broker, and
	// BrokerImages the other broker types (unset ones: DefaultBrokerImages).
	MsgbenchImage  string
	MosquittoImage string
	BrokerImages   map[v1alpha1.BrokerType]string
	// ImagePullPolicy of every container (IfNotPresent by default).
	ImagePullPolicy corev1.PullPolicy
	// ControlPort is the workers' control port.
	ControlPort int32
}

// DefaultConfig is the Config of an operator started without flags.
func DefaultConfig() Config {
	tag := version.Version
	if tag == "" || tag == "dev" {
		tag = "latest"
	}
	return Config{
		MsgbenchImage:   "ghcr.io/msgbench/msgbench:" + tag,
		MosquittoImage:  "ghcr.io/msgbench/mosquitto:2.0.11",
		ImagePullPolicy: corev1.PullIfNotPresent,
		ControlPort:     9090,
	}
}

// AnnotationBenchmark on pod templates holds the benchmark's full name (labels hold a
// shortened one for names over 63 characters), so the operator can map pods back.
const AnnotationBenchmark = "msgbench.io/benchmark-name"

// Ports the broker and workers use inside the cluster.
const (
	MQTTPort = 1883
	// MetricsPort serves /metrics (and /usage) on workers, gateways and the broker's usage
	// sidecar: the port OpenTelemetry and client_golang examples use for Prometheus.
	MetricsPort = 9464
	MQTTSPort   = 8883
	// QUICPort is the UDP port of a broker's own MQTT-over-QUIC listener (EMQX's default).
	QUICPort = 14567
)

// Names of a benchmark's objects. Each fits a DNS label (63 characters): long benchmark names
// are shortened with a hash so two benchmarks never share an object.
type Names struct {
	Broker, BrokerConfig, Gateway, Workers, WorkerServiceAccount, Spec, TLS, ClientCA, Control, Result string
}

// NamesOf returns the object names of mb.
func NamesOf(mb *v1alpha1.MessagingBenchmark) Names {
	n := func(suffix string) string { return shortName(mb.Name, suffix) }
	return Names{
		Broker:               n("-broker"),
		BrokerConfig:         n("-broker-config"),
		Gateway:              n("-gateway"),
		Workers:              n("-workers"),
		WorkerServiceAccount: n("-worker"),
		Spec:                 n("-spec"),
		TLS:                  n("-tls"),
		ClientCA:             n("-client-ca"),
		Control:              n("-control"),
		Result:               n("-result"),
	}
}

func shortName(name, suffix string) string { return v1alpha1.ShortName(name, suffix) }

// Labels of every object of mb's component.
func Labels(mb *v1alpha1.MessagingBenchmark, component string) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":       "msgbench",
		"app.kubernetes.io/instance":   shortName(mb.Name, ""),
		"app.kubernetes.io/component":  component,
		"app.kubernetes.io/part-of":    "msgbench",
		"app.kubernetes.io/managed-by": "msgbench-operator",
		v1alpha1.LabelBenchmark:        shortName(mb.Name, ""),
		v1alpha1.LabelComponent:        component,
	}
}

// Selector selects the pods of mb's component.
func Selector(mb *v1alpha1.MessagingBenchmark, component string) map[string]string {
	return map[string]string{v1alpha1.LabelBenchmark: shortName(mb.Name, ""), v1alpha1.LabelComponent: component}
}

func meta(mb *v1alpha1.MessagingBenchmark, name, component string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: mb.Namespace, Labels: Labels(mb, component), OwnerReferences: OwnerReferences(mb)}
}

// OwnerReferences makes mb the controlling owner of an object, so it is deleted with mb.
func OwnerReferences(mb *v1alpha1.MessagingBenchmark) []metav1.OwnerReference {
	return []metav1.OwnerReference{{
		APIVersion:         v1alpha1.GroupVersion.String(),
		Kind:               "MessagingBenchmark",
		Name:               mb.Name,
		UID:                mb.UID,
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}}
}

// restrictedPod meets the Kubernetes "restricted" Pod Security Standard.
func restrictedPod(uid int64) *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		RunAsUser:      ptr.To(uid),
		RunAsGroup:     ptr.To(uid),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

func restrictedContainer() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		ReadOnlyRootFilesystem:   ptr.To(true),
		RunAsNonRoot:             ptr.To(true),
	}
}

// metricsContainerPort is the "metrics" port a PodMonitor scrapes.
func metricsContainerPort() corev1.ContainerPort {
	return corev1.ContainerPort{Name: "metrics", ContainerPort: MetricsPort, Protocol: corev1.ProtocolTCP}
}

// metricsServicePort exposes a pod's usage endpoint to the workers.
func metricsServicePort() corev1.ServicePort {
	return corev1.ServicePort{Name: "metrics", Port: MetricsPort, TargetPort: intstr.FromString("metrics"), Protocol: corev1.ProtocolTCP}
}

// BrokerUsageURL is where the workers read the broker's CPU and memory: its usage sidecar ("" when
// msgbench does not run the broker's pod: external, Strimzi Kafka).
func BrokerUsageURL(mb *v1alpha1.MessagingBenchmark) string {
	if !mb.Spec.Broker.Type.MQTTBroker() {
		return ""
	}
	return fmt.Sprintf("http://%s.%s.svc:%d/usage", NamesOf(mb).Broker, mb.Namespace, MetricsPort)
}

// GatewayUsageURL is where the workers read the gateway's CPU and memory ("" without a gateway,
// or with several replicas, whose Service would answer for one of them at random). With
// gateways of several protocols it is the first one's (the result has one gateway usage).
func GatewayUsageURL(mb *v1alpha1.MessagingBenchmark, p *plan.Plan) string {
	if p.Gateway() == "" || mb.Spec.Gateway.Replicas != 1 {
		return ""
	}
	return fmt.Sprintf("http://%s.%s.svc:%d/usage", GatewayName(mb, p, p.Gateway()), mb.Namespace, MetricsPort)
}

// TLSEnabled reports whether the clients of mb encrypt.
func TLSEnabled(mb *v1alpha1.MessagingBenchmark) bool { return mb.Spec.TLSEnabled() }

// TLSSecretName is the Secret with the broker's certificate: the user's, or the generated one.
func TLSSecretName(mb *v1alpha1.MessagingBenchmark) string {
	if mb.Spec.TLS != nil && mb.Spec.TLS.SecretRef != nil {
		return mb.Spec.TLS.SecretRef.Name
	}
	return NamesOf(mb).TLS
}

// ClientCASecretName is the kubernetes.io/tls Secret with the devices' CA
// (spec.tls.clientCertificates): the user's (ca.secretRef), or the one the operator generates;
// "" without client certificates.
func ClientCASecretName(mb *v1alpha1.MessagingBenchmark) string {
	cc := mb.Spec.ClientCertificates()
	switch {
	case cc == nil:
		return ""
	case cc.CA != nil && cc.CA.SecretRef != nil:
		return cc.CA.SecretRef.Name
	}
	return NamesOf(mb).ClientCA
}

// clientCAVolume is the devices' CA certificate (tls.crt of ClientCASecretName) as file ca.crt,
// never its key: what a server that verifies the devices' certificates needs.
func clientCAVolume(mb *v1alpha1.MessagingBenchmark, name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: ClientCASecretName(mb), Items: []corev1.KeyToPath{{Key: corev1.TLSCertKey, Path: "ca.crt"}}}}}
}

// BrokerAddress is the host:port the MQTT (or Kafka) clients connect to: the WebSocket listener
// for spec.mqtt.transport websocket. For broker type kafka it is the bootstrap Service Strimzi
// creates (KafkaBootstrapAddress).
func BrokerAddress(mb *v1alpha1.MessagingBenchmark, p *plan.Plan) string {
	return brokerAddress(mb, p, mb.Spec.MQTT.WebSocket() && mb.Spec.Broker.Type.MQTTBroker())
}

// brokerAddress is the broker's address, its WebSocket listener's when ws.
func brokerAddress(mb *v1alpha1.MessagingBenchmark, p *plan.Plan, ws bool) string {
	if mb.Spec.Broker.Type == v1alpha1.BrokerExternal && mb.Spec.Broker.External != nil {
		return mb.Spec.Broker.External.Address
	}
	if mb.Spec.Broker.Type == v1alpha1.BrokerKafka {
		return KafkaBootstrapAddress(mb, p)
	}
	port := MQTTPort
	switch {
	case brokerQUIC(p):
		port = QUICPort
	case p.Broker.TLS:
		port = MQTTSPort
	}
	if ws {
		port = int(wsPort(mb))
		if p.Broker.TLS {
			port = int(wssPort(mb))
		}
	}
	return fmt.Sprintf("%s.%s.svc:%d", NamesOf(mb).Broker, mb.Namespace, port)
}

// brokerQUIC reports whether clients reach the broker over QUIC with no gateway between: a group
// of mqtt-quic clients straight to a broker that serves QUIC itself (EMQX's QUIC listener).
func brokerQUIC(p *plan.Plan) bool {
	return slices.ContainsFunc(p.Groups, func(g plan.Group) bool { return g.Protocol == v1alpha1.ProtocolMQTTQUIC && g.Gateway == "" })
}
