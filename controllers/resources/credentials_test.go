package resources_test

import (
	"testing"

	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/plan"
)

// A group whose credentials are a Secret's (spec.identity.credentials.secretRef): its worker pod
// mounts that Secret's credentials.csv where msgbench loadgen reads it, read-only, and only that key.
func TestWorkersMountTheCredentialsSecret(t *testing.T) {
	mb, err := manifest.Parse([]byte(`
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: creds, namespace: ns}
spec:
  protocol: mqtt
  qos: 1
  identity:
    clientId: "dev-{index}"
    credentials: {secretRef: {name: fleet-creds}}
  workload: {publishers: 2, subscribers: 1, duration: 5s}
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.CompileBenchmark(mb, plan.Kubernetes)
	if err != nil {
		t.Fatal(err)
	}
	pod := resources.WorkersJob(mb, p, resources.Config{MsgbenchImage: "msgbench:test"}).Spec.Template.Spec
	var mounted, volume bool
	for _, m := range pod.Containers[0].VolumeMounts {
		mounted = mounted || (m.MountPath == "/etc/msgbench/credentials/fleet-creds" && m.ReadOnly && m.Name == "credentials-fleet-creds")
	}
	for _, v := range pod.Volumes {
		if s := v.Secret; s != nil && s.SecretName == "fleet-creds" {
			volume = len(s.Items) == 1 && s.Items[0].Key == plan.CredentialsKey && v.Name == "credentials-fleet-creds"
		}
	}
	if !mounted || !volume {
		t.Errorf("mounts %+v, volumes %+v: want Secret fleet-creds's %s at /etc/msgbench/credentials/fleet-creds", pod.Containers[0].VolumeMounts, pod.Volumes, plan.CredentialsKey)
	}
}
