package resources_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/artemis"
	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/internal/testenv"
)

// artemisBench is the broker-artemis sample, with TLS at version tls ("" for none).
func artemisBench(t *testing.T, tls string) *v1alpha1.MessagingBenchmark {
	t.Helper()
	sample, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "samples", "broker-artemis.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if tls != "" {
		sample = append(sample, "  tls:\n    enabled: true\n    version: \""+tls+"\"\n"...)
	}
	// Parse applies the CRD's defaults and rules, as the API server would.
	mb, err := manifest.Parse(sample)
	if err != nil {
		t.Fatal(err)
	}
	mb.Namespace, mb.UID = "bench", types.UID("5f0c1d2e-0000-4000-8000-000000000001")
	return mb
}

func artemisObjects(t *testing.T, mb *v1alpha1.MessagingBenchmark) (*corev1.ConfigMap, *appsv1.Deployment) {
	t.Helper()
	objs, err := resources.BrokerObjects(mb, resources.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var cm *corev1.ConfigMap
	var d *appsv1.Deployment
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.ConfigMap:
			cm = o
		case *appsv1.Deployment:
			d = o
		}
	}
	if cm == nil || d == nil {
		t.Fatalf("no ConfigMap or Deployment among %d objects", len(objs))
	}
	return cm, d
}

// The pod runs exactly what brokers/artemis renders and a local run executes, with its TLS
// files where the rendered keystore says, as the image's uid 1001.
func TestArtemisPod(t *testing.T) {
	mb := artemisBench(t, "1.2")
	cm, d := artemisObjects(t, mb)
	c := d.Spec.Template.Spec.Containers[0]
	if c.Image != resources.DefaultBrokerImages[v1alpha1.BrokerArtemis] || c.Command[0] != "java" {
		t.Fatalf("container %s runs %v", c.Image, c.Command)
	}
	if !strings.Contains(cm.Data[artemis.BrokerXML], "enabledProtocols=TLSv1.2") || !strings.Contains(cm.Data[artemis.BrokerXML], "tcp://0.0.0.0:1883?protocols=MQTT") {
		t.Errorf("broker.xml lacks the plain 1883 acceptor or TLS 1.2:\n%s", cm.Data[artemis.BrokerXML])
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	for _, f := range []string{"tls.crt", "tls.key"} {
		if !strings.Contains(cm.Data[artemis.KeystoreCfg], mounts["certs"]+"/"+f) {
			t.Errorf("keystore.pemcfg %q does not name %s in the certs mount %s", cm.Data[artemis.KeystoreCfg], f, mounts["certs"])
		}
	}
	args := strings.Join(c.Command, " ")
	for _, want := range []string{"-Dartemis.instance.etc=" + mounts["config"], "-Dartemis.instance=" + mounts["instance"], "-Xmx512m"} {
		if !strings.Contains(args, want) {
			t.Errorf("command %q lacks %q (mounts %v)", args, want, mounts)
		}
	}
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == "mqtts" && p.ContainerPort == 8883 }) {
		t.Errorf("ports %v lack mqtts 8883", c.Ports)
	}
	if sc := d.Spec.Template.Spec.SecurityContext; *sc.RunAsUser != 1001 || *sc.FSGroup != 1001 || !*c.SecurityContext.ReadOnlyRootFilesystem {
		t.Errorf("security: pod %+v, container %+v", sc, c.SecurityContext)
	}

	// The heap follows a memory limit.
	mb.Spec.Broker.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}
	_, d = artemisObjects(t, mb)
	if args := strings.Join(d.Spec.Template.Spec.Containers[0].Command, " "); !strings.Contains(args, "-Xmx1024m") {
		t.Errorf("2Gi limit: command %q, want -Xmx1024m", args)
	}

	// A managed spec.broker.config key is refused, naming the field and the key.
	mb.Spec.Broker.Config = map[string]string{"acceptor.keyStorePath": "/x"}
	if _, err := resources.BrokerObjects(mb, resources.DefaultConfig()); err == nil ||
		!strings.Contains(err.Error(), "spec.broker.config") || !strings.Contains(err.Error(), "acceptor.keyStorePath") {
		t.Errorf("managed key: %v", err)
	}
}

// The broker objects are accepted by a real kube-apiserver, and the pod by a namespace that
// enforces the restricted Pod Security Standard.
func TestArtemisObjectsServerSide(t *testing.T) {
	env, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench", Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest"}}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	for _, tls := range []string{"", "1.3"} {
		objs, err := resources.BrokerObjects(artemisBench(t, tls), resources.DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if err := env.Client.Create(ctx, o, client.DryRunAll); err != nil {
				t.Errorf("tls %q: %s %s refused: %v", tls, o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
			}
			if d, ok := o.(*appsv1.Deployment); ok {
				pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "broker-", Namespace: "bench", Labels: d.Spec.Template.Labels},
					Spec: d.Spec.Template.Spec}
				if err := env.Client.Create(ctx, pod, client.DryRunAll); err != nil {
					t.Errorf("tls %q: broker pod refused in a restricted namespace: %v", tls, err)
				}
			}
		}
	}
}
