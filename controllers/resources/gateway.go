package resources

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/plan"
)

// gatewayPorts are the ports each gateway mode serves; the first is where workers connect.
var gatewayPorts = map[string][]corev1.ServicePort{
	"mqtt-sn": {{Name: "mqtt-sn", Port: 1884, Protocol: corev1.ProtocolUDP}},
	"http":    {{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP}, {Name: "http3", Port: 8080, Protocol: corev1.ProtocolUDP}},
	"quic":    {{Name: "mqtt-quic", Port: 14567, Protocol: corev1.ProtocolUDP}},
}

// GatewayName is the name of the Deployment and Service of the gateway of mode: the run's one
// gateway keeps <benchmark>-gateway; with gateways of several protocols each is
// <benchmark>-gateway-<mode>.
func GatewayName(mb *v1alpha1.MessagingBenchmark, p *plan.Plan, mode string) string {
	if len(p.GatewayModes()) <= 1 {
		return NamesOf(mb).Gateway
	}
	return shortName(mb.Name, "-gateway-"+mode)
}

// GatewaySelector selects the pods of the gateway of mode (of the run's only gateway: all the
// benchmark's gateway pods).
func GatewaySelector(mb *v1alpha1.MessagingBenchmark, p *plan.Plan, mode string) map[string]string {
	s := Selector(mb, v1alpha1.ComponentGateway)
	if len(p.GatewayModes()) > 1 {
		s[v1alpha1.LabelGateway] = mode
	}
	return s
}

// gatewayAddress is where clients reach the gateway of mode: its Service.
func gatewayAddress(mb *v1alpha1.MessagingBenchmark, p *plan.Plan, mode string) string {
	return fmt.Sprintf("%s.%s.svc:%d", GatewayName(mb, p, mode), mb.Namespace, gatewayPorts[mode][0].Port)
}

// GatewayDeployment runs the protocol gateway of mode (`msgbench gateway`, one of
// p.GatewayModes()) in front of the broker; it serves every group of its mode.
func GatewayDeployment(mb *v1alpha1.MessagingBenchmark, p *plan.Plan, mode string, cfg Config) *appsv1.Deployment {
	names := NamesOf(mb)
	ports := gatewayPorts[mode]
	// The broker's MQTT listener, not its WebSocket one: a gateway speaks MQTT over TCP.
	args := []string{"gateway", "--mode", mode, "--listen", fmt.Sprintf(":%d", ports[0].Port), "--broker", brokerAddress(mb, p, false),
		"--plan", PlanPath, "--metrics", fmt.Sprintf(":%d", MetricsPort)}
	mounts := []corev1.VolumeMount{{Name: "spec", MountPath: "/etc/msgbench", ReadOnly: true}}
	volumes := []corev1.Volume{{Name: "spec", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: names.Spec}}}}}
	if p.GatewayTLS() {
		args = append(args, "--tls-cert", "/etc/msgbench/tls/tls.crt", "--tls-key", "/etc/msgbench/tls/tls.key")
		mounts = append(mounts, corev1.VolumeMount{Name: "certs", MountPath: "/etc/msgbench/tls", ReadOnly: true})
		volumes = append(volumes, corev1.Volume{Name: "certs", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: TLSSecretName(mb), DefaultMode: ptr.To[int32](0o440)}}})
		if mb.Spec.ClientCertificates() != nil {
			// The gateway requires each device's certificate and verifies it against the
			// devices' CA: its certificate only, never its key.
			args = append(args, "--client-ca", "/etc/msgbench/client-ca/ca.crt")
			mounts = append(mounts, corev1.VolumeMount{Name: "client-ca", MountPath: "/etc/msgbench/client-ca", ReadOnly: true})
			volumes = append(volumes, clientCAVolume(mb, "client-ca"))
		}
	}
	var cports []corev1.ContainerPort
	for _, p := range ports {
		cports = append(cports, corev1.ContainerPort{Name: p.Name, ContainerPort: p.Port, Protocol: p.Protocol})
	}
	cports = append(cports, metricsContainerPort())
	var probe *corev1.Probe
	if ports[0].Protocol == corev1.ProtocolTCP {
		probe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString(ports[0].Name)}}, PeriodSeconds: 2}
	}
	pod := corev1.PodSpec{
		AutomountServiceAccountToken: ptr.To(false),
		EnableServiceLinks:           ptr.To(false),
		SecurityContext:              restrictedPod(msgbenchUID),
		Containers: []corev1.Container{{
			Name:                     "gateway",
			Image:                    cfg.MsgbenchImage,
			ImagePullPolicy:          cfg.ImagePullPolicy,
			Args:                     args,
			Ports:                    cports,
			ReadinessProbe:           probe,
			Resources:                *mb.Spec.Gateway.Resources.DeepCopy(),
			SecurityContext:          restrictedContainer(),
			VolumeMounts:             mounts,
			TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		}},
		Volumes: volumes,
	}
	pod.SecurityContext.FSGroup = ptr.To[int64](msgbenchUID)
	labels := Labels(mb, v1alpha1.ComponentGateway)
	if len(p.GatewayModes()) > 1 {
		labels[v1alpha1.LabelGateway] = mode
	}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: meta(mb, GatewayName(mb, p, mode), v1alpha1.ComponentGateway),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(mb.Spec.Gateway.Replicas),
			Selector: &metav1.LabelSelector{MatchLabels: GatewaySelector(mb, p, mode)},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod},
		},
	}
}

// GatewayService exposes the gateway of mode to the workers.
func GatewayService(mb *v1alpha1.MessagingBenchmark, p *plan.Plan, mode string) *corev1.Service {
	var ports []corev1.ServicePort
	for _, port := range gatewayPorts[mode] {
		port.TargetPort = intstr.FromString(port.Name)
		ports = append(ports, port)
	}
	ports = append(ports, metricsServicePort())
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta(mb, GatewayName(mb, p, mode), v1alpha1.ComponentGateway),
		Spec:       corev1.ServiceSpec{Selector: GatewaySelector(mb, p, mode), Ports: ports},
	}
}
