package resources

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/artemis"
	"github.com/msgbench/msgbench/plan"
)

// artemisUID is the artemis user of the official image (and of msgbench's Debian-JRE image).
const artemisUID = 1001

// artemisLayout is where the broker's pieces are in its pod: the distribution in the image, the
// ConfigMap of files brokers/artemis renders (read-only: Artemis only reads its etc), and an
// emptyDir instance for everything Artemis writes (lock/, data/, tmp/), so the root file system
// stays read-only.
var artemisLayout = artemis.Layout{Home: "/opt/activemq-artemis", Instance: "/var/lib/artemis-instance", Etc: "/etc/artemis"}

const artemisCerts = "/etc/artemis-certs"

// artemisPod runs Apache ActiveMQ Artemis with the instance files brokers/artemis renders (as for
// a local run) and the same java command line: `java` on PATH, Artemis in /opt/activemq-artemis,
// as uid 1001 under the restricted Pod Security Standard. No entrypoint script runs, so the
// official image and one built from a JRE plus the Maven distribution behave alike.
func artemisPod(mb *v1alpha1.MessagingBenchmark, p *plan.Plan, _ Config) (*corev1.ConfigMap, brokerPod, error) {
	c := artemis.Config{Layout: artemisLayout, Port: MQTTPort, Extra: mb.Spec.Broker.Config}
	mounts := []corev1.VolumeMount{
		{Name: "config", MountPath: artemisLayout.Etc, ReadOnly: true},
		{Name: "instance", MountPath: artemisLayout.Instance},
	}
	volumes := []corev1.Volume{configVolume(mb), emptyDir("instance")}
	if p.Broker.TLS {
		c.TLSPort = MQTTSPort
		c.CertFile, c.KeyFile = artemisCerts+"/tls.crt", artemisCerts+"/tls.key"
		c.TLSVersion = string(mb.Spec.TLS.Version)
		mounts, volumes = withCerts(mb, artemisCerts, mounts, volumes)
	}
	files, err := c.Render()
	if err != nil {
		return nil, brokerPod{}, err
	}
	return brokerConfigMap(mb, files), restrictedBrokerPod(artemisUID, corev1.Container{
		Name:         "artemis",
		Command:      append([]string{"java"}, artemisLayout.Args(artemisHeapMB(mb))...),
		VolumeMounts: mounts,
	}, volumes), nil
}

// artemisHeapMB is the JVM heap: half of spec.broker.resources' memory limit (the rest is
// Netty's direct buffers, metaspace and threads), else 512 MiB as in a local run.
func artemisHeapMB(mb *v1alpha1.MessagingBenchmark) int {
	if l, ok := mb.Spec.Broker.Resources.Limits[corev1.ResourceMemory]; ok && l.Value() > 0 {
		return max(int(l.Value()>>20)/2, 64)
	}
	return 512
}
