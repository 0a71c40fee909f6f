package resources

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
)

const mosquittoUID = 1883 // the image's mosquitto user

// MosquittoConfigMap holds mosquitto.conf for the benchmark's broker.
func MosquittoConfigMap(mb *v1alpha1.MessagingBenchmark) (*corev1.ConfigMap, error) {
	c := mosquitto.Config{Port: MQTTPort, MaxInflight: int(mb.Spec.MQTT.Inflight), Extra: mb.Spec.Broker.Config}
	if BrokerTLS(mb) {
		c.TLSPort = MQTTSPort
		c.CAFile, c.CertFile, c.KeyFile = "/etc/mosquitto/certs/ca.crt", "/etc/mosquitto/certs/tls.crt", "/etc/mosquitto/certs/tls.key"
		c.TLSVersion = string(mb.Spec.TLS.Version)
	}
	conf, err := c.Render()
	if err != nil {
		return nil, err
	}
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta(mb, NamesOf(mb).BrokerConfig, v1alpha1.ComponentBroker),
		Data:       map[string]string{"mosquitto.conf": conf},
	}, nil
}

// MosquittoDeployment runs one Mosquitto broker.
func MosquittoDeployment(mb *v1alpha1.MessagingBenchmark, cfg Config) *appsv1.Deployment {
	names := NamesOf(mb)
	image := cfg.MosquittoImage
	if mb.Spec.Broker.Image != "" {
		image = mb.Spec.Broker.Image
	}
	ports := []corev1.ContainerPort{{Name: "mqtt", ContainerPort: MQTTPort, Protocol: corev1.ProtocolTCP}}
	mounts := []corev1.VolumeMount{{Name: "config", MountPath: "/etc/mosquitto/msgbench", ReadOnly: true}}
	volumes := []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: names.BrokerConfig}}}}}
	if BrokerTLS(mb) {
		ports = append(ports, corev1.ContainerPort{Name: "mqtts", ContainerPort: MQTTSPort, Protocol: corev1.ProtocolTCP})
		mounts = append(mounts, corev1.VolumeMount{Name: "certs", MountPath: "/etc/mosquitto/certs", ReadOnly: true})
		volumes = append(volumes, corev1.Volume{Name: "certs", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: TLSSecretName(mb), DefaultMode: ptr.To[int32](0o440)}}})
	}
	labels := Labels(mb, v1alpha1.ComponentBroker)
	volumes = append(volumes, corev1.Volume{Name: "spec", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: names.Spec}}}})
	// The usage sidecar reads the broker's CPU time and memory from /proc, which it sees because
	// the pod shares one process namespace: no privilege, no API access, and the same figures as
	// a local run's (the kubelet's summary API would need nodes/proxy, which also grants exec).
	usage := corev1.Container{
		Name:            "usage",
		Image:           cfg.MsgbenchImage,
		ImagePullPolicy: cfg.ImagePullPolicy,
		Args:            []string{"usage", "--listen", fmt.Sprintf(":%d", MetricsPort), "-f", "/etc/msgbench/benchmark.yaml", "--component", "broker"},
		Ports:           []corev1.ContainerPort{metricsContainerPort()},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
		},
		SecurityContext:          restrictedContainer(),
		VolumeMounts:             []corev1.VolumeMount{{Name: "spec", MountPath: "/etc/msgbench", ReadOnly: true}},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
	usage.SecurityContext.RunAsUser = ptr.To[int64](msgbenchUID)
	pod := corev1.PodSpec{
		AutomountServiceAccountToken: ptr.To(false),
		EnableServiceLinks:           ptr.To(false),
		ShareProcessNamespace:        ptr.To(true),
		SecurityContext:              restrictedPod(mosquittoUID),
		Containers: []corev1.Container{{
			Name:            "mosquitto",
			Image:           image,
			ImagePullPolicy: cfg.ImagePullPolicy,
			Command:         []string{"mosquitto", "-c", "/etc/mosquitto/msgbench/mosquitto.conf"},
			Ports:           ports,
			ReadinessProbe: &corev1.Probe{
				ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("mqtt")}},
				PeriodSeconds: 2, FailureThreshold: 3,
			},
			Resources:                *mb.Spec.Broker.Resources.DeepCopy(),
			SecurityContext:          restrictedContainer(),
			VolumeMounts:             mounts,
			TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		}, usage},
		Volumes: volumes,
	}
	pod.SecurityContext.FSGroup = ptr.To[int64](mosquittoUID) // the key file stays group-readable only
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: meta(mb, names.Broker, v1alpha1.ComponentBroker),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: Selector(mb, v1alpha1.ComponentBroker)},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod},
		},
	}
}

// BrokerService exposes the broker inside the cluster.
func BrokerService(mb *v1alpha1.MessagingBenchmark) *corev1.Service {
	ports := []corev1.ServicePort{{Name: "mqtt", Port: MQTTPort, TargetPort: intstr.FromString("mqtt"), Protocol: corev1.ProtocolTCP}, metricsServicePort()}
	if BrokerTLS(mb) {
		ports = append(ports, corev1.ServicePort{Name: "mqtts", Port: MQTTSPort, TargetPort: intstr.FromString("mqtts"), Protocol: corev1.ProtocolTCP})
	}
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta(mb, NamesOf(mb).Broker, v1alpha1.ComponentBroker),
		Spec:       corev1.ServiceSpec{Selector: Selector(mb, v1alpha1.ComponentBroker), Ports: ports},
	}
}
