package netem

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.yaml from the current output")

// networkSamples reads every MessagingBenchmark in config/samples/network, namespaced "bench".
func networkSamples(t *testing.T) map[string]*v1alpha1.MessagingBenchmark {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "samples", "network", "*.yaml"))
	if err != nil || len(files) < 11 {
		t.Fatalf("network samples: %v (%d files)", err, len(files))
	}
	out := map[string]*v1alpha1.MessagingBenchmark{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		mb := &v1alpha1.MessagingBenchmark{}
		if err := yaml.UnmarshalStrict(data, mb); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		mb.Namespace = "bench"
		out[strings.TrimSuffix(filepath.Base(f), ".yaml")] = mb
	}
	return out
}

// syntheticBenchmarks cover what the samples do not: every netem parameter, one direction, an
// external broker, a name too long for a suffix.
func syntheticBenchmarks() map[string]*v1alpha1.MessagingBenchmark {
	mk := func(name string, proto v1alpha1.Protocol, broker v1alpha1.BrokerSpec, net v1alpha1.NetworkSpec) *v1alpha1.MessagingBenchmark {
		mb := &v1alpha1.MessagingBenchmark{}
		mb.Name, mb.Namespace = name, "bench"
		mb.Spec.Protocol, mb.Spec.Broker, mb.Spec.Network = proto, broker, net
		return mb
	}
	ext := v1alpha1.BrokerSpec{Type: v1alpha1.BrokerExternal, External: &v1alpha1.ExternalBroker{Address: "mqtt.example.com:1883"}}
	return map[string]*v1alpha1.MessagingBenchmark{
		"synthetic-every-parameter": mk("every-parameter", v1alpha1.ProtocolMQTT, v1alpha1.BrokerSpec{}, v1alpha1.NetworkSpec{
			Profile: "custom",
			LinkSpec: v1alpha1.LinkSpec{
				Delay: dur(20 * ms), Jitter: dur(1500 * 1000), LossPercent: str("1.5"), DuplicatePercent: str("0.25"),
				CorruptPercent: str("0.01"), ReorderPercent: str("25"), Bandwidth: str("1.5mbit"),
			},
		}),
		// Every correlation, one of them overridden for the uplink.
		"synthetic-correlated": mk("correlated", v1alpha1.ProtocolMQTT, v1alpha1.BrokerSpec{}, v1alpha1.NetworkSpec{
			Profile: "custom",
			LinkSpec: v1alpha1.LinkSpec{
				Delay: dur(20 * ms), Jitter: dur(5 * ms), LossPercent: str("1"), DuplicatePercent: str("0.5"),
				CorruptPercent: str("0.1"), ReorderPercent: str("10"),
				Correlation: &v1alpha1.CorrelationSpec{
					DelayPercent: str("25"), LossPercent: str("50"), DuplicatePercent: str("10"),
					CorruptPercent: str("5.5"), ReorderPercent: str("75"),
				},
			},
			Up: &v1alpha1.LinkSpec{Correlation: &v1alpha1.CorrelationSpec{LossPercent: str("0.0000001")}},
		}),
		"synthetic-uplink-only": mk("uplink-only", v1alpha1.ProtocolMQTTSN, v1alpha1.BrokerSpec{}, v1alpha1.NetworkSpec{
			Profile: "congested", Direction: v1alpha1.DirectionTo,
		}),
		"synthetic-external-broker": mk("external", v1alpha1.ProtocolMQTT, ext, v1alpha1.NetworkSpec{
			Profile: "lte", Direction: v1alpha1.DirectionTo,
		}),
		"synthetic-external-broker-gateway": mk("external-gw", v1alpha1.ProtocolHTTP, ext, v1alpha1.NetworkSpec{Profile: "satellite"}),
		"synthetic-long-name": mk(strings.Repeat("long-benchmark-name-", 3)+"x", v1alpha1.ProtocolMQTT, v1alpha1.BrokerSpec{}, v1alpha1.NetworkSpec{
			Profile: "wifi",
		}),
		"synthetic-no-impairment": mk("plain", v1alpha1.ProtocolMQTT, v1alpha1.BrokerSpec{}, v1alpha1.NetworkSpec{Profile: "none"}),
	}
}

func allBenchmarks(t *testing.T) map[string]*v1alpha1.MessagingBenchmark {
	all := networkSamples(t)
	for k, v := range syntheticBenchmarks() {
		all[k] = v
	}
	return all
}

func TestNetworkChaosGolden(t *testing.T) {
	for name, mb := range allBenchmarks(t) {
		t.Run(name, func(t *testing.T) {
			objs, err := chaosOf(mb)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			for _, o := range objs {
				data, err := yaml.Marshal(o.Object)
				if err != nil {
					t.Fatal(err)
				}
				got.WriteString("---\n")
				got.Write(data)
			}
			golden := filepath.Join("testdata", name+".golden.yaml")
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./netem -run TestNetworkChaosGolden -update to create it)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("NetworkChaos(%s) differs from %s (rerun with -update after checking the change):\n%s", name, golden, got.String())
			}
		})
	}
}

// TestNetworkChaosSemantics checks the properties the golden files only show: what each object
// selects and how the numbers are written, independent of formatting.
func TestNetworkChaosSemantics(t *testing.T) {
	nbiot := networkSamples(t)["profile-nb-iot"]
	objs, err := chaosOf(nbiot)
	if err != nil || len(objs) != 2 {
		t.Fatalf("nb-iot: %d objects, %v; want up and down", len(objs), err)
	}
	up, down := objs[0], objs[1]
	for _, c := range []struct {
		obj              *unstructured.Unstructured
		name, latency    string
		rate, source     string
		targetComponents []any
	}{
		{up, "profile-nb-iot-net-up", "200ms", "60kbit", v1alpha1.ComponentWorker, nil},
		{down, "profile-nb-iot-net-down", "400ms", "30kbit", "", []any{v1alpha1.ComponentWorker}},
	} {
		if c.obj.GetName() != c.name || c.obj.GetNamespace() != "bench" || c.obj.GroupVersionKind() != NetworkChaosGVK {
			t.Errorf("object %s/%s %v", c.obj.GetNamespace(), c.obj.GetName(), c.obj.GroupVersionKind())
		}
		spec := c.obj.Object["spec"].(map[string]any)
		if spec["action"] != "netem" || spec["direction"] != "to" || spec["mode"] != "all" {
			t.Errorf("%s: action %v direction %v mode %v", c.name, spec["action"], spec["direction"], spec["mode"])
		}
		if got, _, _ := unstructured.NestedString(spec, "delay", "latency"); got != c.latency {
			t.Errorf("%s: latency %q, want %q", c.name, got, c.latency)
		}
		if got, _, _ := unstructured.NestedString(spec, "rate", "rate"); got != c.rate {
			t.Errorf("%s: rate %q, want %q (bit units: Chaos Mesh reads bps as bytes)", c.name, got, c.rate)
		}
		if labels := c.obj.GetLabels(); labels[v1alpha1.LabelBenchmark] != "profile-nb-iot" || labels[v1alpha1.LabelComponent] != v1alpha1.ComponentNetwork {
			t.Errorf("%s: labels %v", c.name, labels)
		}
	}
	// Up shapes the workers' egress toward broker and gateway; down the reverse.
	if got, _, _ := unstructured.NestedString(up.Object, "spec", "selector", "labelSelectors", v1alpha1.LabelComponent); got != v1alpha1.ComponentWorker {
		t.Errorf("up selects component %q, want worker", got)
	}
	if got, _, _ := unstructured.NestedSlice(up.Object, "spec", "target", "selector", "expressionSelectors"); len(got) != 1 ||
		got[0].(map[string]any)["operator"] != "In" || len(got[0].(map[string]any)["values"].([]any)) != 2 {
		t.Errorf("up target expression selectors %v, want component In (broker, gateway)", got)
	}
	if got, _, _ := unstructured.NestedString(down.Object, "spec", "target", "selector", "labelSelectors", v1alpha1.LabelComponent); got != v1alpha1.ComponentWorker {
		t.Errorf("down targets component %q, want worker", got)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(down.Object, "spec", "selector", "expressionSelectors"); !found {
		t.Errorf("down does not select the broker and gateway pods")
	}
}

func TestNetworkChaosExternalBrokerDownlinkIsAnError(t *testing.T) {
	mb := syntheticBenchmarks()["synthetic-external-broker"].DeepCopy()
	mb.Spec.Network.Direction = v1alpha1.DirectionBoth
	_, err := chaosOf(mb)
	if err == nil || !strings.Contains(err.Error(), "spec.network.direction: the broker (or gateway) is external") {
		t.Fatalf("error %v, want one naming spec.network.direction", err)
	}
}

// TestNetworkChaosCorrelation checks that each correlation lands in its impairment's block, and
// that a direction's own value wins.
func TestNetworkChaosCorrelation(t *testing.T) {
	objs, err := chaosOf(syntheticBenchmarks()["synthetic-correlated"])
	if err != nil || len(objs) != 2 {
		t.Fatalf("%d objects, %v; want up and down", len(objs), err)
	}
	for i, loss := range []string{"0.0000001", "50"} {
		spec := objs[i].Object["spec"].(map[string]any)
		for _, c := range []struct {
			path []string
			want string
		}{
			{[]string{"delay", "correlation"}, "25"},
			{[]string{"delay", "reorder", "correlation"}, "75"},
			{[]string{"loss", "correlation"}, loss},
			{[]string{"duplicate", "correlation"}, "10"},
			{[]string{"corrupt", "correlation"}, "5.5"},
		} {
			if got, _, _ := unstructured.NestedString(spec, c.path...); got != c.want {
				t.Errorf("%s: %s = %q, want %q", objs[i].GetName(), strings.Join(c.path, "."), got, c.want)
			}
		}
	}
}

// TestNetworkChaosRefusesGilbertElliott: Chaos Mesh has no gemodel, so the error names the field
// that set it.
func TestNetworkChaosRefusesGilbertElliott(t *testing.T) {
	ge := &v1alpha1.GilbertElliottSpec{GoodToBadPercent: "1", BadToGoodPercent: "25"}
	for _, c := range []struct {
		net  v1alpha1.NetworkSpec
		path string
	}{
		{v1alpha1.NetworkSpec{Profile: "lte", LinkSpec: v1alpha1.LinkSpec{GilbertElliott: ge}}, "spec.network.gilbertElliott:"},
		{v1alpha1.NetworkSpec{Profile: "lte", Down: &v1alpha1.LinkSpec{GilbertElliott: ge}}, "spec.network.down.gilbertElliott:"},
	} {
		mb := &v1alpha1.MessagingBenchmark{}
		mb.Name, mb.Namespace, mb.Spec.Network = "ge", "bench", c.net
		objs, err := chaosOf(mb)
		if err == nil || !strings.HasPrefix(err.Error(), c.path) || !strings.Contains(err.Error(), "Gilbert-Elliott") {
			t.Errorf("%+v: %d objects, error %v; want one starting %q", c.net, len(objs), err, c.path)
		}
	}
}

func TestChaosName(t *testing.T) {
	if got := ChaosName("mqtt-qos1", "up"); got != "mqtt-qos1-net-up" {
		t.Errorf("ChaosName(mqtt-qos1, up) = %q", got)
	}
	// Long names: at most 63 characters, stable, distinct for names sharing the kept prefix.
	long := strings.Repeat("x", 70)
	a, b := ChaosName(long+"a", "down"), ChaosName(long+"b", "down")
	if len(a) > 63 || len(b) > 63 || a == b || a != ChaosName(long+"a", "down") || !strings.HasSuffix(a, "-net-down") {
		t.Errorf("long names %q (%d) and %q (%d)", a, len(a), b, len(b))
	}
	// A cut that ends in a dash or dot does not leave a separator run.
	if got := ChaosName(strings.Repeat("a", 45)+"-.-"+strings.Repeat("c", 20), "up"); strings.Contains(got, "--") || strings.Contains(got, ".-") {
		t.Errorf("ChaosName left a separator run: %q", got)
	}
}

// chaosOf is NetworkChaos of mb's spec.network as the run plan resolves it.
func chaosOf(mb *v1alpha1.MessagingBenchmark) ([]*unstructured.Unstructured, error) {
	link, err := Resolve(mb.Spec.Network)
	if err != nil {
		return nil, err
	}
	return NetworkChaos(mb, link, mb.Spec.GatewayMode() == "")
}
