package resources_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/artemis"
	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/plan/plantest"
)

// The pod runs exactly what brokers/artemis renders and a local run executes, with its TLS
// files where the rendered keystore says, as the image's uid 1001. (serverside.TestBrokerObjectsServerSide
// sends the Artemis objects, plain and with TLS, to a real API server.)
func TestArtemisPod(t *testing.T) {
	mb := brokerBench(t, v1alpha1.BrokerArtemis, "mqtt", "1.2", 20, nil)
	cm, d, svc := brokerObjects(t, mb)
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
	wantPorts(t, svc, "mqtt/1883/TCP", "mqtts/8883/TCP")
	wantRestricted(t, d, 1001)

	// The heap follows a memory limit.
	mb.Spec.Broker.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}
	_, d, _ = brokerObjects(t, mb)
	if args := strings.Join(d.Spec.Template.Spec.Containers[0].Command, " "); !strings.Contains(args, "-Xmx1024m") {
		t.Errorf("2Gi limit: command %q, want -Xmx1024m", args)
	}

	// A managed spec.broker.config key is refused, naming the field and the key.
	mb.Spec.Broker.Config = map[string]string{"acceptor.keyStorePath": "/x"}
	if _, err := resources.BrokerObjects(mb, plantest.Kubernetes(t, mb), resources.DefaultConfig()); err == nil ||
		!strings.Contains(err.Error(), "spec.broker.config") || !strings.Contains(err.Error(), "acceptor.keyStorePath") {
		t.Errorf("managed key: %v", err)
	}
}
