package resources

import (
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/plan"
)

// DefaultBrokerImages are the images the operator runs for each broker type unless the operator
// (--broker-image TYPE=IMAGE) or the benchmark (spec.broker.image) names another. Official images,
// pinned: a benchmark's numbers belong to one broker version, and result.json names it.
var DefaultBrokerImages = map[v1alpha1.BrokerType]string{
	v1alpha1.BrokerMosquitto: "ghcr.io/msgbench/mosquitto:2.0.11",
	v1alpha1.BrokerRabbitMQ:  "rabbitmq:4.1.4",
	v1alpha1.BrokerArtemis:   "apache/activemq-artemis:2.40.0",
	v1alpha1.BrokerEMQX:      "emqx/emqx:5.8.6",
	v1alpha1.BrokerNanoMQ:    "emqx/nanomq:0.23.10-slim", // the plain tag has no TLS
	v1alpha1.BrokerHiveMQCE:  "hivemq/hivemq-ce:2025.4",
	v1alpha1.BrokerVerneMQ:   "vernemq/vernemq:2.1.1",
}

// ParseBrokerImages checks --broker-image TYPE=IMAGE pairs: each type one msgbench runs as an
// MQTT broker, each image non-empty.
func ParseBrokerImages(m map[string]string) (map[v1alpha1.BrokerType]string, error) {
	out := map[v1alpha1.BrokerType]string{}
	for t, img := range m {
		bt := v1alpha1.BrokerType(t)
		if _, ok := DefaultBrokerImages[bt]; !ok {
			return nil, fmt.Errorf("--broker-image %s=%s: %s is not a broker type msgbench runs as an MQTT broker (%s)", t, img, t, strings.Join(brokerTypes(), ", "))
		}
		if img == "" {
			return nil, fmt.Errorf("--broker-image %s=: the image is empty", t)
		}
		out[bt] = img
	}
	return out, nil
}

func brokerTypes() []string {
	var out []string
	for t := range DefaultBrokerImages {
		out = append(out, string(t))
	}
	sort.Strings(out)
	return out
}

// BrokerImage is the image of mb's broker: spec.broker.image, else the operator's for its type.
func (c Config) BrokerImage(mb *v1alpha1.MessagingBenchmark) string {
	if mb.Spec.Broker.Image != "" {
		return mb.Spec.Broker.Image
	}
	if mb.Spec.Broker.Type == v1alpha1.BrokerMosquitto && c.MosquittoImage != "" {
		return c.MosquittoImage
	}
	if img := c.BrokerImages[mb.Spec.Broker.Type]; img != "" {
		return img
	}
	return DefaultBrokerImages[mb.Spec.Broker.Type]
}

// BrokerObjects returns the objects that run mb's MQTT broker, in the order they are applied:
// its configuration, its Deployment and its Service. Kafka (Strimzi) and external brokers have
// their own paths.
func BrokerObjects(mb *v1alpha1.MessagingBenchmark, p *plan.Plan, cfg Config) ([]client.Object, error) {
	build, ok := brokerPods[mb.Spec.Broker.Type]
	if !ok {
		return nil, fmt.Errorf("spec.broker.type %q: msgbench does not run this broker as an MQTT broker", mb.Spec.Broker.Type)
	}
	cm, pod, err := build(mb, p, cfg)
	if err != nil {
		return nil, err
	}
	var out []client.Object
	if cm != nil {
		out = append(out, cm)
	}
	return append(out, brokerDeployment(mb, p, cfg, pod), BrokerService(mb, p)), nil
}

// brokerPods build each MQTT broker's configuration and pod ("" is Mosquitto, the CRD's default).
var brokerPods = map[v1alpha1.BrokerType]func(*v1alpha1.MessagingBenchmark, *plan.Plan, Config) (*corev1.ConfigMap, brokerPod, error){
	v1alpha1.BrokerMosquitto: mosquittoPod,
	"":                       mosquittoPod,
	v1alpha1.BrokerRabbitMQ:  rabbitMQPod,
	v1alpha1.BrokerArtemis:   artemisPod,
	v1alpha1.BrokerEMQX:      emqxPod,
	v1alpha1.BrokerNanoMQ:    nanoMQPod,
	v1alpha1.BrokerHiveMQCE:  hiveMQPod,
	v1alpha1.BrokerVerneMQ:   verneMQPod,
}

// brokerPod is what differs between the MQTT brokers' pods; brokerDeployment adds what they
// share (the usage sidecar, which also answers the pod's readiness through MQTT, labels, the
// spec volume, a single replica recreated on change).
type brokerPod struct {
	// Container is the broker's container: name, command, ports (named mqtt, mqtts, quic),
	// mounts, security context. Image, pull policy, resources and the termination message
	// policy are filled in.
	Container corev1.Container
	// InitContainers run before the broker (e.g. to lay out a writable configuration).
	InitContainers []corev1.Container
	Volumes        []corev1.Volume
	// Security is the pod's security context: restrictedPod(uid) where the image allows it.
	Security *corev1.PodSecurityContext
}

// brokerConfigMap is the ConfigMap of a broker's configuration files.
func brokerConfigMap(mb *v1alpha1.MessagingBenchmark, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta(mb, NamesOf(mb).BrokerConfig, v1alpha1.ComponentBroker),
		Data:       data,
	}
}

// configVolume mounts the broker's ConfigMap; certsVolume the TLS Secret (ca.crt, tls.crt,
// tls.key), readable by the pod's group only.
func configVolume(mb *v1alpha1.MessagingBenchmark) corev1.Volume {
	return corev1.Volume{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: NamesOf(mb).BrokerConfig}}}}
}

func certsVolume(mb *v1alpha1.MessagingBenchmark) corev1.Volume {
	return corev1.Volume{Name: "certs", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: TLSSecretName(mb), DefaultMode: ptr.To[int32](0o440)}}}
}

// withCerts mounts the run's TLS Secret (certsVolume) read-only at dir in the broker container.
func withCerts(mb *v1alpha1.MessagingBenchmark, dir string, mounts []corev1.VolumeMount, volumes []corev1.Volume) ([]corev1.VolumeMount, []corev1.Volume) {
	return append(mounts, corev1.VolumeMount{Name: "certs", MountPath: dir, ReadOnly: true}), append(volumes, certsVolume(mb))
}

// restrictedBrokerPod runs c as the image's uid under the restricted Pod Security Standard, the
// pod's fsGroup that uid too: the TLS key file (mode 0440) stays readable by its group only.
func restrictedBrokerPod(uid int64, c corev1.Container, volumes []corev1.Volume) brokerPod {
	c.SecurityContext = restrictedContainer()
	sec := restrictedPod(uid)
	sec.FSGroup = ptr.To(uid)
	return brokerPod{Container: c, Volumes: volumes, Security: sec}
}

// emptyDir is a scratch volume (data, logs, a writable copy of the configuration).
func emptyDir(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
}

// mqttPorts are the broker container's listener ports: mqtt always, mqtts with broker TLS over
// TCP, quic (UDP) for MQTT over QUIC straight to the broker.
func mqttPorts(mb *v1alpha1.MessagingBenchmark, p *plan.Plan) []corev1.ContainerPort {
	ports := []corev1.ContainerPort{{Name: "mqtt", ContainerPort: MQTTPort, Protocol: corev1.ProtocolTCP}}
	switch {
	case brokerQUIC(p):
		ports = append(ports, corev1.ContainerPort{Name: "quic", ContainerPort: QUICPort, Protocol: corev1.ProtocolUDP})
	case p.Broker.TLS:
		ports = append(ports, corev1.ContainerPort{Name: "mqtts", ContainerPort: MQTTSPort, Protocol: corev1.ProtocolTCP})
	}
	if brokerWebSocket(mb) && mb.Spec.Broker.Type != v1alpha1.BrokerArtemis { // Artemis: on mqtt and mqtts
		ports = append(ports, corev1.ContainerPort{Name: "ws", ContainerPort: wsPort(mb), Protocol: corev1.ProtocolTCP})
		if p.Broker.TLS {
			ports = append(ports, corev1.ContainerPort{Name: "wss", ContainerPort: wssPort(mb), Protocol: corev1.ProtocolTCP})
		}
	}
	return ports
}

func brokerDeployment(mb *v1alpha1.MessagingBenchmark, p *plan.Plan, cfg Config, bp brokerPod) *appsv1.Deployment {
	names := NamesOf(mb)
	c := bp.Container
	c.Image = cfg.BrokerImage(mb)
	c.ImagePullPolicy = cfg.ImagePullPolicy
	c.Resources = *mb.Spec.Broker.Resources.DeepCopy()
	c.TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	if c.Ports == nil {
		c.Ports = mqttPorts(mb, p)
	}
	if c.ReadinessProbe == nil {
		c.ReadinessProbe = &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("mqtt")}},
			PeriodSeconds: 2, FailureThreshold: 3,
		}
	}
	for i := range bp.InitContainers {
		ic := &bp.InitContainers[i]
		if ic.Image == "" {
			ic.Image = c.Image
		}
		ic.ImagePullPolicy = cfg.ImagePullPolicy
		ic.TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	}
	volumes := append(append([]corev1.Volume{}, bp.Volumes...), corev1.Volume{Name: "spec", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: names.Spec}}}})
	pod := corev1.PodSpec{
		AutomountServiceAccountToken: ptr.To(false),
		EnableServiceLinks:           ptr.To(false),
		ShareProcessNamespace:        ptr.To(true),
		SecurityContext:              bp.Security,
		InitContainers:               bp.InitContainers,
		Containers:                   []corev1.Container{c, usageSidecar(cfg, readyAddress(mb))},
		Volumes:                      volumes,
	}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: meta(mb, names.Broker, v1alpha1.ComponentBroker),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: Selector(mb, v1alpha1.ComponentBroker)},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: Labels(mb, v1alpha1.ComponentBroker)}, Spec: pod},
		},
	}
}

// usageSidecar reads the broker's CPU time and memory from /proc, which it sees because the pod
// shares one process namespace: no privilege, no API access, and the same figures as a local
// run's (the kubelet's summary API would need nodes/proxy, which also grants exec). Its
// readiness is an MQTT CONNECT/CONNACK with the broker on 127.0.0.1: a pod is ready when its
// broker serves MQTT, not when a port opens (JVM and Erlang brokers open ports early), and this
// works with any broker image, shell or not.
func usageSidecar(cfg Config, ready string) corev1.Container {
	c := corev1.Container{
		Name:            "usage",
		Image:           cfg.MsgbenchImage,
		ImagePullPolicy: cfg.ImagePullPolicy,
		Args: []string{"usage", "--listen", fmt.Sprintf(":%d", MetricsPort), "--plan", PlanPath, "--component", "broker",
			"--ready-mqtt", ready},
		Ports: []corev1.ContainerPort{metricsContainerPort()},
		ReadinessProbe: &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("metrics")}},
			PeriodSeconds: 2, TimeoutSeconds: 3, FailureThreshold: 3,
		},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
		},
		SecurityContext:          restrictedContainer(),
		VolumeMounts:             []corev1.VolumeMount{{Name: "spec", MountPath: "/etc/msgbench", ReadOnly: true}},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
	c.SecurityContext.RunAsUser = ptr.To[int64](msgbenchUID)
	return c
}

// BrokerService exposes the broker inside the cluster: mqtt, mqtts or quic as the container
// listens, and the usage sidecar's metrics port.
func BrokerService(mb *v1alpha1.MessagingBenchmark, p *plan.Plan) *corev1.Service {
	var ports []corev1.ServicePort
	for _, cp := range mqttPorts(mb, p) {
		ports = append(ports, corev1.ServicePort{Name: cp.Name, Port: cp.ContainerPort, TargetPort: intstr.FromString(cp.Name), Protocol: cp.Protocol})
	}
	ports = append(ports, metricsServicePort())
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta(mb, NamesOf(mb).Broker, v1alpha1.ComponentBroker),
		Spec:       corev1.ServiceSpec{Selector: Selector(mb, v1alpha1.ComponentBroker), Ports: ports},
	}
}
