package plan_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/netem"
	"github.com/msgbench/msgbench/plan"
)

func read(t *testing.T, sample string, set ...string) *v1alpha1.MessagingBenchmarkSpec {
	t.Helper()
	mb, err := manifest.ReadFile(filepath.Join("../config/samples", sample), set...)
	if err != nil {
		t.Fatal(err)
	}
	return &mb.Spec
}

// Every sample compiles for every target it names, to one group that carries the spec's
// clients, with the network the resolver gives: the plan is the spec, resolved, never another
// reading of it.
func TestEverySampleCompiles(t *testing.T) {
	var files []string
	for _, glob := range []string{"*.yaml", "network/*.yaml"} {
		m, _ := filepath.Glob(filepath.Join("../config/samples", glob))
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("%d samples found", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if manifest.Kind(data) != "MessagingBenchmark" {
			continue
		}
		name, _ := filepath.Rel("../config/samples", f)
		spec := read(t, name)
		for _, target := range []plan.Target{plan.Kubernetes, plan.Admitted} {
			p, err := plan.Compile(spec, target)
			if err != nil {
				t.Errorf("%s for %s: %v", name, target, err)
				continue
			}
			g := p.Groups[0]
			if len(p.Groups) != 1 || p.Version != plan.Version || g.Protocol != spec.Protocol || g.QoS != spec.QoS ||
				g.Publishers != spec.Workload.Publishers || g.Subscribers != spec.Workload.Subscribers || g.Topics != spec.Workload.Topics {
				t.Errorf("%s: plan %+v for spec protocol %s qos %d workload %+v", name, p, spec.Protocol, spec.QoS, spec.Workload)
			}
			if p.Network.Impaired != spec.Impaired() {
				t.Errorf("%s: impaired %v, spec says %v", name, p.Network.Impaired, spec.Impaired())
			}
			if !spec.Impaired() {
				continue
			}
			link, err := netem.Resolve(spec.Network)
			if err != nil || link != p.Network.Link {
				t.Errorf("%s: link %+v, the resolver %+v (%v)", name, p.Network.Link, link, err)
			}
			steps, _ := netem.ResolveTimeline(spec.Network)
			if len(steps) != len(p.Network.Steps) {
				t.Errorf("%s: %d steps, the resolver %d", name, len(p.Network.Steps), len(steps))
			}
		}
	}
}

// A timeline step at or after the window's end is refused before a run starts (locally and on
// Kubernetes), naming the step; a result's record of the same spec still resolves. (The CRD's
// CEL refuses it too; the spec is changed after admission here, as a Go client's could be.)
func TestTimelineOutsideTheWindow(t *testing.T) {
	spec := read(t, "network-handover.yaml")
	spec.Workload.Duration.Duration = 1500 * time.Millisecond
	for _, target := range []plan.Target{plan.Local, plan.Kubernetes} {
		if _, err := plan.Compile(spec, target); err == nil || !strings.Contains(err.Error(), "spec.network.timeline[") {
			t.Errorf("%s: %v, want the late step refused by its field", target, err)
		}
	}
	p, err := plan.Compile(spec, plan.Admitted)
	if err != nil || len(p.Network.Steps) == 0 {
		t.Errorf("admitted: %v, %d steps", err, len(p.Network.Steps))
	}
}

// QUIC below its handshake's MTU is a local rule: the emulator enforces the MTU, Chaos Mesh
// does not (pods keep their interface MTU).
func TestQUICMTUIsALocalRule(t *testing.T) {
	spec := read(t, "mqtt-quic.yaml", "network.profile=nb-iot")
	if _, err := plan.Compile(spec, plan.Local); err == nil || !strings.Contains(err.Error(), "spec.network.profile: nb-iot's MTU of 296 bytes is too small for mqtt-quic") {
		t.Errorf("local: %v", err)
	}
	if _, err := plan.Compile(spec, plan.Kubernetes); err != nil {
		t.Errorf("kubernetes: %v", err)
	}
}

// The stall allowance, term by term (docs/results.md, "Offered load and the window").
func TestStallAllowance(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		name string
		set  []string
		want time.Duration
	}{
		{"loopback", nil, 100 * ms},
		{"delay, no loss", []string{"network.profile=custom", "network.delay=50ms"}, 100 * ms},
		// 3 × (200 ms + RTT 100 ms)
		{"lossy TCP", []string{"network.profile=custom", "network.delay=50ms", "network.lossPercent=1"}, 100*ms + 3*(200*ms+100*ms)},
		// jitter counts in the slowest round trip: 100 ms + 2 × 10 ms
		{"lossy with jitter", []string{"network.profile=custom", "network.delay=50ms", "network.jitter=10ms", "network.lossPercent=1"}, 100*ms + 3*(200*ms+120*ms)},
	} {
		p, err := plan.Compile(read(t, "mqtt-qos1.yaml", c.set...), plan.Local)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := p.StallAllowance(); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// MQTT-SN at QoS 1 waits its whole retry interval once; at QoS -1 it never retries.
	sn := read(t, "mqtt-sn-qos1.yaml", "network.profile=custom", "network.delay=50ms", "network.lossPercent=1", "mqttsn.retryInterval=5s")
	p, err := plan.Compile(sn, plan.Local)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.StallAllowance(), 100*ms+5*time.Second+100*ms; got != want {
		t.Errorf("mqtt-sn qos 1: %v, want %v", got, want)
	}
	// A planned outage adds its length and a round trip; a radio its promotion and paging.
	for _, name := range []string{"network-handover.yaml", "network-radio-nb-iot.yaml"} {
		spec := read(t, name)
		p, err := plan.Compile(spec, plan.Admitted)
		if err != nil {
			t.Fatal(err)
		}
		var planned time.Duration
		for _, o := range p.Network.Outages {
			planned += o
		}
		if p.Network.Radio != nil {
			planned += p.Network.Radio.PromotionDelay + p.Network.Radio.PagingCycle
		}
		if planned == 0 || p.StallAllowance() < 100*ms+planned {
			t.Errorf("%s: allowance %v, want at least %v more than the scheduling stall", name, p.StallAllowance(), planned)
		}
	}
}

func TestCompileRefusesNoSpecAndUnknownTarget(t *testing.T) {
	if _, err := plan.Compile(nil, plan.Local); err == nil {
		t.Error("nil spec compiled")
	}
	if _, err := plan.Compile(read(t, "mqtt-qos0.yaml"), plan.Target("mars")); err == nil || !strings.Contains(err.Error(), "mars") {
		t.Errorf("unknown target: %v", err)
	}
}

// A device group's own link is held to the same rule, naming the group's fields.
func TestQUICMTUOfAGroupsLink(t *testing.T) {
	mb, err := manifest.Parse([]byte(`
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: h3-group}
spec:
  protocol: mqtt
  http: {version: "3"}
  topics: [{name: readings, pattern: "r/{index}", count: 2}]
  groups:
  - {name: sensors, count: 2, protocol: http, network: {profile: nb-iot}, publish: {topics: readings, payloadBytes: 16, interval: 1s}}
  - {name: backend, count: 1, subscribe: {filter: "r/#"}}
`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = plan.Compile(&mb.Spec, plan.Local)
	if err == nil || !strings.HasPrefix(err.Error(), "spec.groups[sensors].network.profile: nb-iot's MTU of 296 bytes is too small for http version 3") ||
		!strings.Contains(err.Error(), "set spec.groups[sensors].network.mtuBytes to 1280") {
		t.Errorf("local: %v", err)
	}
	mtu := int32(1280)
	mb.Spec.Groups[0].Network.MTUBytes = &mtu
	if _, err := plan.Compile(&mb.Spec, plan.Local); err != nil {
		t.Errorf("with mtuBytes 1280: %v", err)
	}
}
