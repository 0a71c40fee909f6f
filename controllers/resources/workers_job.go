package resources

import (
	"fmt"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/plan"
)

const msgbenchUID = 65532 // the msgbench image's non-root user

// WorkerClientAddress is where the workers' clients connect: the gateway for protocols that
// need one, otherwise the broker.
func WorkerClientAddress(mb *v1alpha1.MessagingBenchmark, p *plan.Plan) string {
	if ext := p.Groups[0].ExternalGateway; ext != "" {
		return ext
	}
	if mode := p.Gateway(); mode != "" {
		return gatewayAddress(mb, p, mode)
	}
	return BrokerAddress(mb, p)
}

// GroupAddress is where the clients of group g connect: an external gateway, its gateway's
// Service, the broker's WebSocket listener for MQTT over WebSocket, or the broker's MQTT listener.
func GroupAddress(mb *v1alpha1.MessagingBenchmark, p *plan.Plan, g plan.Group) string {
	switch {
	case g.ExternalGateway != "":
		return g.ExternalGateway
	case g.Gateway != "":
		return gatewayAddress(mb, p, g.Gateway)
	case g.Fleet == nil:
		return WorkerClientAddress(mb, p)
	}
	return brokerAddress(mb, p, g.MQTT != nil && g.MQTT.WebSocket && mb.Spec.Broker.Type.MQTTBroker())
}

// WorkersJobName is the name of the Job of worker set s: <benchmark>-workers for the shared set
// (a flat run's), <benchmark>-workers-<group> for a group's own.
func WorkersJobName(mb *v1alpha1.MessagingBenchmark, s plan.WorkerSet) string {
	if !s.Own() {
		return NamesOf(mb).Workers
	}
	return shortName(mb.Name, "-workers-"+s.Name)
}

// WorkersJobs are the run's worker Jobs, one per worker set of p.Placement(), in its order.
func WorkersJobs(mb *v1alpha1.MessagingBenchmark, p *plan.Plan, cfg Config) []*batchv1.Job {
	var jobs []*batchv1.Job
	for _, s := range p.Placement() {
		jobs = append(jobs, workersJob(mb, p, s, cfg))
	}
	return jobs
}

// WorkersJob is the Job of the run's first worker set: a flat run's only one.
func WorkersJob(mb *v1alpha1.MessagingBenchmark, p *plan.Plan, cfg Config) *batchv1.Job {
	return workersJob(mb, p, p.Placement()[0], cfg)
}

// workersJob runs a worker set's load-generator pods as an Indexed Job. Each pod runs
// `msgbench loadgen --control`: it connects its share of the clients (of the set's groups),
// reports ready, waits for the operator's start signal and keeps its result until the operator
// collected it. A failed worker is not retried (backoffLimit 0): its share of the measurement is
// lost, so the run fails instead of mixing two attempts.
func workersJob(mb *v1alpha1.MessagingBenchmark, p *plan.Plan, set plan.WorkerSet, cfg Config) *batchv1.Job {
	names := NamesOf(mb)
	w := mb.Spec.Workers
	// --broker is where the set's first group connects; the others that connect elsewhere
	// (another gateway, the WebSocket listener) get an --endpoint each.
	groups := p.SetGroups(set)
	broker := GroupAddress(mb, p, groups[0])
	args := []string{"loadgen", "--plan", PlanPath, "--broker", broker,
		"--control", fmt.Sprintf(":%d", cfg.ControlPort), "--run-id", RunID(mb),
		// live metrics, and a scraper's chance to read the final values once the operator has
		// collected the result
		"--metrics", fmt.Sprintf(":%d", MetricsPort), "--metrics-wait", "15s"}
	if u := BrokerUsageURL(mb); u != "" {
		args = append(args, "--broker-usage", u)
	}
	if u := GatewayUsageURL(mb, p); u != "" {
		args = append(args, "--gateway-usage", u)
	}
	if set.Groups != nil {
		args = append(args, "--groups", strings.Join(set.Groups, ","))
	}
	for _, g := range groups {
		if a := GroupAddress(mb, p, g); a != broker {
			args = append(args, "--endpoint", g.Name+"="+a)
		}
	}
	mounts := []corev1.VolumeMount{{Name: "spec", MountPath: "/etc/msgbench", ReadOnly: true}}
	volumes := []corev1.Volume{{Name: "spec", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: names.Spec}}}}}
	if p.NeedsCertificate() || (TLSEnabled(mb) && mb.Spec.Broker.Type == v1alpha1.BrokerExternal && mb.Spec.TLS.SecretRef != nil) {
		// Only the CA: a worker never sees the server's private key.
		args = append(args, "--ca", "/etc/msgbench/tls/ca.crt")
		mounts = append(mounts, corev1.VolumeMount{Name: "ca", MountPath: "/etc/msgbench/tls", ReadOnly: true})
		volumes = append(volumes, corev1.Volume{Name: "ca", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: TLSSecretName(mb), Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}}})
	}
	if name := ClientCASecretName(mb); name != "" {
		// The devices' CA, certificate and key: each worker signs its devices' certificates.
		args = append(args, "--client-ca", ClientCADir+"/tls.crt", "--client-ca-key", ClientCADir+"/tls.key")
		mounts = append(mounts, corev1.VolumeMount{Name: "client-ca", MountPath: ClientCADir, ReadOnly: true})
		volumes = append(volumes, corev1.Volume{Name: "client-ca", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: name, Items: []corev1.KeyToPath{{Key: corev1.TLSCertKey, Path: "tls.crt"}, {Key: corev1.TLSPrivateKeyKey, Path: "tls.key"}},
			DefaultMode: ptr.To[int32](0o440)}}})
	}
	// Each credentials Secret of the set's groups (spec.identity.credentials.secretRef), where
	// msgbench loadgen reads it: /etc/msgbench/credentials/<secret>/credentials.csv.
	for _, name := range credentialSecrets(groups) {
		vol := "credentials-" + name
		mounts = append(mounts, corev1.VolumeMount{Name: vol, MountPath: CredentialsDir + "/" + name, ReadOnly: true})
		volumes = append(volumes, corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: name, Items: []corev1.KeyToPath{{Key: plan.CredentialsKey, Path: plan.CredentialsKey}}}}})
	}
	labels := Labels(mb, v1alpha1.ComponentWorker)
	if set.Own() {
		labels[v1alpha1.LabelGroup] = set.Name
	}
	pod := corev1.PodSpec{
		RestartPolicy:                corev1.RestartPolicyNever,
		ServiceAccountName:           names.WorkerServiceAccount,
		AutomountServiceAccountToken: ptr.To(false),
		EnableServiceLinks:           ptr.To(false),
		SecurityContext:              restrictedPod(msgbenchUID),
		NodeSelector:                 w.NodeSelector,
		Tolerations:                  w.Tolerations,
		Affinity:                     w.Affinity,
		Containers: []corev1.Container{{
			Name:            "loadgen",
			Image:           cfg.MsgbenchImage,
			ImagePullPolicy: cfg.ImagePullPolicy,
			Args:            args,
			Env: []corev1.EnvVar{{Name: "MSGBENCH_CONTROL_TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: names.Control}, Key: "token"}}}},
			Ports: []corev1.ContainerPort{{Name: "control", ContainerPort: cfg.ControlPort, Protocol: corev1.ProtocolTCP}, metricsContainerPort()},
			ReadinessProbe: &corev1.Probe{
				ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("control")}},
				PeriodSeconds: 1, FailureThreshold: 1,
			},
			Resources:                *w.Resources.DeepCopy(),
			SecurityContext:          restrictedContainer(),
			VolumeMounts:             mounts,
			TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		}},
		Volumes: volumes,
	}
	if len(groups) == 1 && set.Own() {
		if pl := groups[0].Fleet.Placement; pl != nil { // the group's own scheduling, field by field
			if pl.NodeSelector != nil {
				pod.NodeSelector = pl.NodeSelector
			}
			if pl.Tolerations != nil {
				pod.Tolerations = pl.Tolerations
			}
			if pl.Affinity != nil {
				pod.Affinity = pl.Affinity
			}
		}
	}
	if ClientCASecretName(mb) != "" {
		pod.SecurityContext.FSGroup = ptr.To[int64](msgbenchUID) // the CA's key file (0440) is the pod's group's
	}
	if mb.Spec.Workload.ClientsOfWorker(0, int(w.Replicas)) > DefaultEphemeralPorts {
		// A pod has one address, and its connections to the broker's one address:port need a
		// source port each: past the default range's 28,232 the next connect fails with
		// EADDRNOTAVAIL. The range is a namespaced sysctl the restricted Pod Security Standard
		// allows (a "safe" one the kubelet sets without --allowed-unsafe-sysctls).
		pod.SecurityContext.Sysctls = []corev1.Sysctl{{Name: "net.ipv4.ip_local_port_range", Value: WidePortRange}}
	}
	deadline := int64(mb.Spec.Timeout.Seconds())
	if deadline <= 0 {
		deadline = 900
	}
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta(mb, WorkersJobName(mb, set), v1alpha1.ComponentWorker),
		Spec: batchv1.JobSpec{
			Completions:           ptr.To(int32(set.Replicas)),
			Parallelism:           ptr.To(int32(set.Replicas)),
			CompletionMode:        ptr.To(batchv1.IndexedCompletion),
			BackoffLimit:          ptr.To[int32](0),
			ActiveDeadlineSeconds: ptr.To(deadline),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{AnnotationBenchmark: mb.Name}},
				Spec:       pod,
			},
		},
	}
}

// DefaultEphemeralPorts is the size of Linux's default net.ipv4.ip_local_port_range (32768–60999);
// WidePortRange is the range a worker pod gets when it holds more clients than that (64,512 ports).
const (
	DefaultEphemeralPorts = 60999 - 32768 + 1
	WidePortRange         = "1024 65535"
)

// ClientCADir is where a worker pod finds the devices' CA (spec.tls.clientCertificates): tls.crt
// and tls.key.
const ClientCADir = "/etc/msgbench/client-ca"

// CredentialsDir is where a worker pod finds each credentials Secret, in a folder of its name
// (msgbench loadgen's default $MSGBENCH_CREDENTIALS_DIR).
const CredentialsDir = "/etc/msgbench/credentials"

// credentialSecrets are the credentials Secrets of groups, each once, in the groups' order.
func credentialSecrets(groups []plan.Group) []string {
	var names []string
	for _, g := range groups {
		if id := g.Identity; id != nil && id.CredentialsSecret != "" && !slices.Contains(names, id.CredentialsSecret) {
			names = append(names, id.CredentialsSecret)
		}
	}
	return names
}
