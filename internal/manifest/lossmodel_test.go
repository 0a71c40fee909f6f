package manifest_test

import (
	"strings"
	"testing"

	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/internal/testenv"
	"github.com/msgbench/msgbench/netem"
	"github.com/msgbench/msgbench/plan"
)

// TestGilbertElliottAcceptedLocally takes the Gilbert-Elliott manifests that the API server
// refuses (invalid.yaml's kubernetesOnly cases; api/v1alpha1's admission test checks the
// refusal) and runs them the way msgbench run does: they parse, and the link carries the model,
// with tc's defaults for what the manifest leaves out. The operator's Chaos Mesh mapping refuses
// the same spec naming the field, should one get past the API server.
func TestGilbertElliottAcceptedLocally(t *testing.T) {
	cases, err := testenv.InvalidCases()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		timeline bool
		up, down netem.GilbertElliott
	}{
		"gilbert-elliott-on-kubernetes": {
			up:   netem.GilbertElliott{P: 10_000_000, R: 300_000_000, LossInBad: netem.FractionOne},
			down: netem.GilbertElliott{P: 10_000_000, R: 300_000_000, LossInBad: netem.FractionOne},
		},
		"gilbert-elliott-in-one-direction-on-kubernetes": {
			up: netem.GilbertElliott{P: 10_000_000, R: 300_000_000, LossInBad: 800_000_000},
		},
		"gilbert-elliott-in-timeline-on-kubernetes": {
			timeline: true,
			down:     netem.GilbertElliott{P: 20_000_000, R: 500_000_000, LossInBad: netem.FractionOne},
		},
	}
	seen := 0
	for _, tc := range cases {
		w, ok := want[tc.Name]
		if !ok {
			continue
		}
		seen++
		t.Run(tc.Name, func(t *testing.T) {
			if !tc.KubernetesOnly {
				t.Fatal("the case is not marked kubernetesOnly")
			}
			mb, err := manifest.Parse(doc(tc.Name, tc.Spec))
			if err != nil {
				t.Fatalf("refused locally: %v", err)
			}
			var link netem.Link
			if w.timeline {
				steps, err := netem.ResolveTimeline(mb.Spec.Network)
				if err != nil || len(steps) == 0 {
					t.Fatalf("timeline: %v, %d steps", err, len(steps))
				}
				link = steps[0].Link
			} else if link, err = netem.Resolve(mb.Spec.Network); err != nil {
				t.Fatal(err)
			}
			if link.Up.GilbertElliott != w.up || link.Down.GilbertElliott != w.down {
				t.Errorf("up %+v, down %+v; want %+v, %+v", link.Up.GilbertElliott, link.Down.GilbertElliott, w.up, w.down)
			}
			if link.Up.Loss != 0 && w.up.Enabled() || link.Down.Loss != 0 && w.down.Enabled() {
				t.Errorf("a direction has both loss models: %+v", link)
			}
			if !w.timeline {
				mb.Namespace = "bench"
				p, err := plan.Compile(&mb.Spec, plan.Admitted)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := netem.NetworkChaos(mb, p.Network.Link, p.DirectToBroker()); err == nil || !strings.Contains(err.Error(), "gilbertElliott: Chaos Mesh") {
					t.Errorf("NetworkChaos accepted the model: %v", err)
				}
			}
		})
	}
	if seen != len(want) {
		t.Errorf("found %d of the %d cases in invalid.yaml", seen, len(want))
	}
}
