package controllers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/internal/certs"
)

// TestClientCertificatesOnKubernetes runs spec.tls.clientCertificates through the operator: it
// generates the devices' CA as a kubernetes.io/tls Secret the benchmark owns, renders Mosquitto
// with require_certificate and a cafile of the server's and the devices' CA, and runs the workers
// with the CA's certificate and key mounted and passed as --client-ca and --client-ca-key. The
// workers' broker is a real Mosquitto over TLS with the operator's server certificate that
// requires client certificates signed by the operator's devices' CA: every device presents its
// own, and the run delivers every message.
func TestClientCertificatesOnKubernetes(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	startOperator(t, ns)
	const name = "mtls"
	createBenchmark(t, ns, name, `
protocol: mqtt
qos: 1
tls: {enabled: true, clientCertificates: {}}
workers: {replicas: 2}
workload: {publishers: 2, subscribers: 2, topics: 2, payloadBytes: 64, rate: 200, messages: 200, warmup: 0s}
`)
	mb := get(t, ns, name)
	names := resources.NamesOf(mb)
	ctx := context.Background()

	// The Secrets: the server's (TLS) and the devices' CA, both before the broker.
	var serverTLS, devicesCA corev1.Secret
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		err1 := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.TLS}, &serverTLS)
		err2 := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.ClientCA}, &devicesCA)
		if err1 == nil && err2 == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s: TLS Secret %v, devices' CA Secret %v (phase %s: %s)", err1, err2, get(t, ns, name).Status.Phase, get(t, ns, name).Status.Message)
		}
	}
	if own := devicesCA.OwnerReferences; devicesCA.Type != corev1.SecretTypeTLS || len(own) != 1 || own[0].UID != mb.UID || own[0].Kind != "MessagingBenchmark" ||
		own[0].Controller == nil || !*own[0].Controller {
		t.Errorf("devices' CA Secret: type %s, owners %+v; want kubernetes.io/tls controlled by the benchmark", devicesCA.Type, own)
	}
	if _, err := certs.NewIssuer(devicesCA.Data[corev1.TLSCertKey], devicesCA.Data[corev1.TLSPrivateKeyKey], "", ""); err != nil {
		t.Fatalf("devices' CA Secret: %v", err)
	}

	// The broker the workers reach: Mosquitto with the operator's server certificate, requiring
	// certificates of the operator's devices' CA (what the rendered Deployment runs).
	b, err := mosquitto.Start(ctx, mosquitto.Options{Host: "127.0.0.1", MaxInflight: 20, TLS: true,
		Bundle:   &certs.Bundle{CACert: serverTLS.Data["ca.crt"], ServerCert: serverTLS.Data[corev1.TLSCertKey], ServerKey: serverTLS.Data[corev1.TLSPrivateKeyKey]},
		ClientCA: devicesCA.Data[corev1.TLSCertKey]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	startKubelet(t, ns, func(k *kubelet) { k.workerBroker = b.TLSAddr })

	// The broker's ConfigMap and the workers' Job, while the run has them.
	var cm corev1.ConfigMap
	var job batchv1.Job
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		err1 := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.BrokerConfig}, &cm)
		err2 := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.Workers}, &job)
		if err1 == nil && err2 == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: broker ConfigMap %v, workers Job %v", err1, err2)
		}
	}
	conf := cm.Data["mosquitto.conf"]
	if !strings.Contains(conf, "require_certificate true") || !strings.Contains(conf, "cafile /etc/mosquitto/msgbench/"+resources.MosquittoCAFileKey) {
		t.Errorf("mosquitto.conf:\n%s\nwant require_certificate true and the joined cafile", conf)
	}
	if cafile := cm.Data[resources.MosquittoCAFileKey]; !strings.Contains(cafile, string(serverTLS.Data["ca.crt"])) ||
		!strings.Contains(cafile, string(devicesCA.Data[corev1.TLSCertKey])) || strings.Contains(cafile, "PRIVATE KEY") {
		t.Errorf("broker ConfigMap's cafile %q: want the server's CA and the devices' CA, no key", cafile)
	}
	pod := job.Spec.Template.Spec
	args := strings.Join(pod.Containers[0].Args, " ")
	if !strings.Contains(args, "--client-ca "+resources.ClientCADir+"/tls.crt --client-ca-key "+resources.ClientCADir+"/tls.key") {
		t.Errorf("worker args %q: want --client-ca and --client-ca-key", args)
	}
	mounted := false
	for _, m := range pod.Containers[0].VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name == m.Name && v.Secret != nil && v.Secret.SecretName == names.ClientCA && m.MountPath == resources.ClientCADir && m.ReadOnly {
				mounted = len(v.Secret.Items) == 2
			}
		}
	}
	if !mounted {
		t.Errorf("worker pod mounts %+v, volumes %+v: want the devices' CA Secret at %s", pod.Containers[0].VolumeMounts, pod.Volumes, resources.ClientCADir)
	}

	mb = waitFinished(t, ns, name, 60*time.Second)
	if mb.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("phase %s: %s", mb.Status.Phase, mb.Status.Message)
	}
	if s := mb.Status.Summary; s == nil || s.Sent != 200 || s.Received != 200 || s.Lost != 0 || s.Duplicates != 0 {
		t.Errorf("summary %+v, want 200 sent and received, none lost", s)
	}
	if r := resultConfigMap(t, ns, mb); r.Sent != 200 || r.Received != 200 || r.Expected != 200 {
		t.Errorf("result: sent %d received %d expected %d, want 200 each", r.Sent, r.Received, r.Expected)
	}
	// Cleanup OnCompletion: the devices' CA goes with the run.
	waitGone(t, &corev1.Secret{}, ns, names.ClientCA)
}

// TestClientCASecretRef: with ca.secretRef the operator waits for the user's Secret (GitOps tools
// apply in any order), generates no CA of its own, and fails the run, naming the key, when the
// Secret lacks the CA's private key.
func TestClientCASecretRef(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	startOperator(t, ns)
	const name = "mtls-ref"
	createBenchmark(t, ns, name, `
protocol: mqtt
qos: 1
tls: {enabled: true, clientCertificates: {ca: {secretRef: {name: fleet-ca}}}}
workload: {publishers: 1, subscribers: 1, topics: 1, messages: 10, warmup: 0s}
`)
	wait := func(what string, ok func(*v1alpha1.MessagingBenchmark) bool) *v1alpha1.MessagingBenchmark {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			mb := get(t, ns, name)
			if ok(mb) {
				return mb
			}
			if time.Now().After(deadline) {
				t.Fatalf("after 20 s, not %s: phase %s: %s", what, mb.Status.Phase, mb.Status.Message)
			}
		}
	}
	mb := wait("waiting for the Secret", func(mb *v1alpha1.MessagingBenchmark) bool {
		return strings.Contains(mb.Status.Message, "waiting for Secret fleet-ca named by spec.tls.clientCertificates.ca.secretRef")
	})
	var s corev1.Secret
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: resources.NamesOf(mb).ClientCA}, &s); err == nil {
		t.Errorf("the operator generated a CA (%s) though the spec names the user's", s.Name)
	}
	caPEM, _, err := certs.NewCA("fleet", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "fleet-ca", Namespace: ns},
		Data: map[string][]byte{corev1.TLSCertKey: caPEM}}); err != nil {
		t.Fatal(err)
	}
	mb = wait("failed", func(mb *v1alpha1.MessagingBenchmark) bool { return mb.Status.Phase == v1alpha1.PhaseFailed })
	if !strings.Contains(mb.Status.Message, "Secret fleet-ca has no key tls.key") {
		t.Errorf("message %q: want the missing key named", mb.Status.Message)
	}
}
