package resources_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// goldenSamples cover every kind of object the builders make.
var goldenSamples = []string{"network/profile-nb-iot", "fleets/mixed-fleet", "mqtt-qos1", "mqtts-tls12", "mqtts-device-tls", "mqtt-websocket", "mqtt-sn-qos1", "http-3", "mqtt-quic", "mqtt-external-broker", "mqtt-two-workers-objectstore",
	"broker-rabbitmq", "broker-artemis", "broker-emqx-quic", "broker-nanomq", "broker-hivemq-ce", "broker-vernemq"}

func render(t *testing.T, sample string) []byte {
	t.Helper()
	mb, err := manifest.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "samples", sample+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	mb.Namespace, mb.UID = "bench", types.UID("5f0c1d2e-0000-4000-8000-000000000001")
	cfg := resources.DefaultConfig()
	cfg.MsgbenchImage = "ghcr.io/msgbench/msgbench:test"
	objs, err := resources.Render(mb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, o := range objs {
		data, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(data)
	}
	return b.Bytes()
}

func TestRenderGolden(t *testing.T) {
	for _, s := range goldenSamples {
		t.Run(strings.ReplaceAll(s, "/", "-"), func(t *testing.T) {
			got := render(t, s)
			path := filepath.Join("testdata", strings.ReplaceAll(s, "/", "-")+".golden.yaml")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./controllers/resources -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("rendered objects differ from %s; run go test ./controllers/resources -update and review the diff", path)
			}
		})
	}
}

// TestSecurityAndOwnership checks what every pod template and object must have, whatever the
// sample: restricted pod security, owner references, labels, and no credentials in plain text.
func TestSecurityAndOwnership(t *testing.T) {
	for _, s := range goldenSamples {
		mb, err := manifest.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "samples", s+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		mb.Namespace, mb.UID = "bench", "uid"
		objs, err := resources.Render(mb, resources.DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			name := o.GetObjectKind().GroupVersionKind().Kind + "/" + o.GetName()
			if len(o.GetOwnerReferences()) != 1 || o.GetOwnerReferences()[0].Kind != "MessagingBenchmark" || !*o.GetOwnerReferences()[0].Controller {
				t.Errorf("%s %s: owner references %+v", s, name, o.GetOwnerReferences())
			}
			l := o.GetLabels()
			if l[v1alpha1.LabelBenchmark] != mb.Name || l["app.kubernetes.io/managed-by"] != "msgbench-operator" || l[v1alpha1.LabelComponent] == "" {
				t.Errorf("%s %s: labels %v", s, name, l)
			}
			data, _ := yaml.Marshal(o)
			text := string(data)
			if o.GetObjectKind().GroupVersionKind().Kind == "NetworkChaos" {
				continue
			}
			if strings.Contains(text, "kind: Deployment") || strings.Contains(text, "kind: Job") {
				for _, want := range []string{"runAsNonRoot: true", "allowPrivilegeEscalation: false", "- ALL", "type: RuntimeDefault", "readOnlyRootFilesystem: true", "automountServiceAccountToken: false"} {
					if !strings.Contains(text, want) {
						t.Errorf("%s %s: pod template lacks %q", s, name, want)
					}
				}
				if strings.Contains(text, "tls.key") && strings.Contains(text, "kind: Job") {
					t.Errorf("%s: workers must not mount the server key", s)
				}
			}
		}
	}
}

func TestLongNamesFitDNSLabels(t *testing.T) {
	mb := &v1alpha1.MessagingBenchmark{}
	mb.Name = strings.Repeat("a", 60) + ".b-c"
	n := resources.NamesOf(mb)
	seen := map[string]bool{}
	for _, name := range []string{n.Broker, n.BrokerConfig, n.Gateway, n.Workers, n.WorkerServiceAccount, n.Spec, n.TLS, n.Control, n.Result} {
		if len(name) > 63 || seen[name] {
			t.Errorf("name %q (%d chars) too long or duplicated", name, len(name))
		}
		seen[name] = true
	}
	other := &v1alpha1.MessagingBenchmark{}
	other.Name = strings.Repeat("a", 60) + ".b-d"
	if resources.NamesOf(other).Broker == n.Broker {
		t.Error("two long names map to one broker name")
	}
}

func TestDottedNamesBecomeDNSLabels(t *testing.T) {
	a, b := &v1alpha1.MessagingBenchmark{}, &v1alpha1.MessagingBenchmark{}
	a.Name, b.Name = "team.bench", "team-bench"
	na, nb := resources.NamesOf(a).Broker, resources.NamesOf(b).Broker
	if strings.Contains(na, ".") || na == nb {
		t.Errorf("dotted name gave %q (other %q)", na, nb)
	}
}
