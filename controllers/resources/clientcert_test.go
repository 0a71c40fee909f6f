package resources_test

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/plan"
)

func compileClientCerts(t *testing.T, spec string) (*v1alpha1.MessagingBenchmark, *plan.Plan) {
	t.Helper()
	mb, err := manifest.Parse([]byte("apiVersion: msgbench.io/v1alpha1\nkind: MessagingBenchmark\nmetadata: {name: mtls, namespace: ns}\nspec:\n" + spec))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.CompileBenchmark(mb, plan.Kubernetes)
	if err != nil {
		t.Fatal(err)
	}
	return mb, p
}

// secretVolumes are the Secret volumes of a pod by Secret name.
func secretVolumes(pod corev1.PodSpec) map[string]corev1.Volume {
	out := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		if v.Secret != nil {
			out[v.Secret.SecretName] = v
		}
	}
	return out
}

func itemKeys(v corev1.Volume) []string {
	var keys []string
	for _, it := range v.Secret.Items {
		keys = append(keys, it.Key)
	}
	return keys
}

// With spec.tls.clientCertificates on Kubernetes: the devices' CA Secret the operator generates is
// the benchmark's (owned, kubernetes.io/tls); Mosquitto requires a certificate and verifies it
// with a cafile holding the server's CA and the devices' CA, from its ConfigMap, and mounts no key
// of the devices' CA; each worker pod mounts the CA's certificate and key and passes them to
// msgbench loadgen; msgbench's HTTP gateway verifies against the CA's certificate only.
func TestClientCertificatesRendered(t *testing.T) {
	cfg := resources.DefaultConfig()
	mb, p := compileClientCerts(t, `
  protocol: mqtt
  qos: 1
  tls: {enabled: true, clientCertificates: {}}
  workload: {publishers: 2, subscribers: 1, duration: 5s}
`)
	names := resources.NamesOf(mb)
	if got := resources.ClientCASecretName(mb); got != names.ClientCA || got != "mtls-client-ca" {
		t.Fatalf("devices' CA Secret %q, want %q", got, names.ClientCA)
	}
	s := resources.ClientCASecret(mb, []byte("CERT"), []byte("KEY"))
	if s.Type != corev1.SecretTypeTLS || string(s.Data[corev1.TLSCertKey]) != "CERT" || string(s.Data[corev1.TLSPrivateKeyKey]) != "KEY" ||
		len(s.OwnerReferences) != 1 || s.OwnerReferences[0].Kind != "MessagingBenchmark" || s.OwnerReferences[0].Name != "mtls" || !*s.OwnerReferences[0].Controller {
		t.Errorf("devices' CA Secret %+v: want a kubernetes.io/tls Secret controlled by the benchmark", s)
	}

	// The broker.
	objs, err := resources.BrokerObjects(mb, p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !resources.NeedsMosquittoCAFile(mb, p) {
		t.Fatal("NeedsMosquittoCAFile false for Mosquitto over TLS with client certificates")
	}
	resources.WithMosquittoCAFile(mb, objs, []byte("SERVER-CA\n"), []byte("DEVICES-CA\n"))
	var conf, cafile string
	for _, o := range objs {
		if cm, ok := o.(*corev1.ConfigMap); ok {
			conf, cafile = cm.Data["mosquitto.conf"], cm.Data[resources.MosquittoCAFileKey]
		}
		if d, ok := brokerPod(o); ok {
			if v, mounted := secretVolumes(d)[names.ClientCA]; mounted {
				t.Errorf("the broker pod mounts the devices' CA Secret (%v): it gets the certificate from its ConfigMap, never the key", itemKeys(v))
			}
		}
	}
	if !strings.Contains(conf, "require_certificate true\n") || !strings.Contains(conf, "cafile /etc/mosquitto/msgbench/"+resources.MosquittoCAFileKey+"\n") {
		t.Errorf("mosquitto.conf:\n%s\nwant require_certificate true and the joined cafile", conf)
	}
	if cafile != "SERVER-CA\n\nDEVICES-CA\n" {
		t.Errorf("cafile %q: want the server's CA, then the devices' CA", cafile)
	}

	// The workers.
	pod := resources.WorkersJob(mb, p, cfg).Spec.Template.Spec
	args := strings.Join(pod.Containers[0].Args, " ")
	if !strings.Contains(args, "--client-ca "+resources.ClientCADir+"/tls.crt --client-ca-key "+resources.ClientCADir+"/tls.key") {
		t.Errorf("worker args %q: want --client-ca and --client-ca-key", args)
	}
	v, ok := secretVolumes(pod)[names.ClientCA]
	if !ok || !slices.Equal(itemKeys(v), []string{"tls.crt", "tls.key"}) {
		t.Errorf("worker volumes %+v: want the devices' CA Secret's tls.crt and tls.key", pod.Volumes)
	}
	mounted := false
	for _, m := range pod.Containers[0].VolumeMounts {
		mounted = mounted || (m.Name == v.Name && m.MountPath == resources.ClientCADir && m.ReadOnly)
	}
	if !mounted || pod.SecurityContext.FSGroup == nil {
		t.Errorf("worker mounts %+v, fsGroup %v: want the CA at %s read-only, readable by the pod's group", pod.Containers[0].VolumeMounts, pod.SecurityContext.FSGroup, resources.ClientCADir)
	}

	// The user's CA (ca.secretRef) and msgbench's HTTP gateway.
	mb, p = compileClientCerts(t, `
  protocol: http
  qos: 1
  tls: {enabled: true, clientCertificates: {ca: {secretRef: {name: fleet-ca}}}}
  workload: {publishers: 2, subscribers: 1, duration: 5s}
`)
	if got := resources.ClientCASecretName(mb); got != "fleet-ca" {
		t.Fatalf("devices' CA Secret %q, want the user's fleet-ca", got)
	}
	gw := resources.GatewayDeployment(mb, p, p.Gateway(), cfg).Spec.Template.Spec
	if args := strings.Join(gw.Containers[0].Args, " "); !strings.Contains(args, "--client-ca /etc/msgbench/client-ca/ca.crt") {
		t.Errorf("gateway args %q: want --client-ca", args)
	}
	if v, ok := secretVolumes(gw)["fleet-ca"]; !ok || !slices.Equal(itemKeys(v), []string{"tls.crt"}) {
		t.Errorf("gateway volumes %+v: want fleet-ca's tls.crt only", gw.Volumes)
	}
	if v, ok := secretVolumes(resources.WorkersJob(mb, p, cfg).Spec.Template.Spec)["fleet-ca"]; !ok || !slices.Equal(itemKeys(v), []string{"tls.crt", "tls.key"}) {
		t.Errorf("the workers do not mount the user's CA Secret fleet-ca")
	}

	// Without client certificates: nothing of it.
	mb, p = compileClientCerts(t, `
  protocol: http
  qos: 1
  tls: {enabled: true}
  workload: {publishers: 2, subscribers: 1, duration: 5s}
`)
	gwArgs := strings.Join(resources.GatewayDeployment(mb, p, p.Gateway(), cfg).Spec.Template.Spec.Containers[0].Args, " ")
	wArgs := strings.Join(resources.WorkersJob(mb, p, cfg).Spec.Template.Spec.Containers[0].Args, " ")
	if resources.ClientCASecretName(mb) != "" || strings.Contains(gwArgs, "--client-ca") || strings.Contains(wArgs, "--client-ca") || resources.NeedsMosquittoCAFile(mb, p) {
		t.Errorf("without client certificates: gateway %q, workers %q", gwArgs, wArgs)
	}
}

// brokerPod is the pod template of the broker Deployment among the rendered objects.
func brokerPod(o client.Object) (corev1.PodSpec, bool) {
	if d, ok := o.(*appsv1.Deployment); ok {
		return d.Spec.Template.Spec, true
	}
	return corev1.PodSpec{}, false
}
