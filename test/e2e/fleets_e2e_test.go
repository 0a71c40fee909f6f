//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/results"
)

// TestFleetsOnTheNode runs the device-group samples (config/samples/fleets/, docs/fleets.md)
// through the operator on the real node, scaled to its two cores, and checks the stored result
// per group and per pair of groups: every pair received exactly what the subscription graph
// expects, the shared subscription's group got each reading once, and the group that joins late
// got the retained notice, counted apart; the mixed fleet ran a gateway per protocol.
func TestFleetsOnTheNode(t *testing.T) {
	for _, tc := range []struct {
		s     sample
		check func(t *testing.T, r *results.Result)
		// pods, when set, checks the run's pods once it succeeded.
		pods func(t *testing.T, mb *v1alpha1.MessagingBenchmark)
	}{
		{
			// 200 sensors, one reading every 2 s each (100 msg/s), into 2 consumers sharing one
			// subscription.
			s: sample{file: "fleets/telemetry-fan-in.yaml", edit: func(spec map[string]any) {
				sensors := specGroup(t, spec, "sensors")
				sensors["count"] = 200
				sensors["publish"].(map[string]any)["interval"] = "2s"
			}},
			check: func(t *testing.T, r *results.Result) {
				sensors, backend := mustGroup(t, r, "sensors"), mustGroup(t, r, "backend")
				// A shared subscription takes each reading once, whichever member gets it.
				if backend.Expected != sensors.Sent || backend.Received != sensors.Sent || deref(backend.Lost) != 0 {
					t.Errorf("backend (shared subscription): expected %d, received %d, lost %d; want each of the sensors' %d readings once",
						backend.Expected, backend.Received, deref(backend.Lost), sensors.Sent)
				}
				if p := mustPair(t, r, "sensors", "backend"); p.Expected != sensors.Sent {
					t.Errorf("pair sensors → backend expects %d, the sensors sent %d", p.Expected, sensors.Sent)
				}
			},
		},
		{
			// A backend cycling over 100 devices' own command topics at 50 commands a second.
			s: sample{file: "fleets/command-fan-out.yaml", edit: func(spec map[string]any) {
				specGroup(t, spec, "actuators")["count"] = 100
			}},
			check: func(t *testing.T, r *results.Result) {
				backend, actuators := mustGroup(t, r, "backend"), mustGroup(t, r, "actuators")
				// Each command goes to one device's own topic, which that device alone holds.
				if actuators.Expected != backend.Sent || actuators.Received != backend.Sent {
					t.Errorf("actuators: expected %d, received %d; want each of the backend's %d commands once",
						actuators.Expected, actuators.Received, backend.Sent)
				}
			},
		},
		{
			// The sample as it is, but for load()'s shortening: its 1 s warm-up would put the one
			// notice (sent when the updater starts, 1 s into the run) on the edge of the measured
			// window, and the late group's start (8 s) must fall before warmup + duration even
			// though the run ends once the notice was delivered.
			s: sample{file: "fleets/broadcast-retained.yaml", edit: func(spec map[string]any) {
				w := spec["workload"].(map[string]any)
				w["warmup"], w["duration"] = "0s", "20s"
			}},
			check: func(t *testing.T, r *results.Result) {
				online, late := mustGroup(t, r, "online"), mustGroup(t, r, "late")
				if online.Expected != 500 || online.Received != 500 {
					t.Errorf("online: received %d of %d expected; want the notice at each of the 500 devices", online.Received, online.Expected)
				}
				if late.Retained == nil || late.Retained.Expected != 100 || late.Retained.Received != 100 {
					t.Errorf("late: retained %+v; want 100 of 100 (the notice, retained, at each device that came online after it)", late.Retained)
				}
				if late.Expected != 0 || late.Received != 0 {
					t.Errorf("late: received %d of %d expected; the notice was sent before it joined, so it is retained only", late.Received, late.Expected)
				}
				if p := mustPair(t, r, "updater", "late"); p.Retained != 100 {
					t.Errorf("pair updater → late: retained %d, want 100", p.Retained)
				}
				if r.ObjectivesMet == nil || !*r.ObjectivesMet {
					t.Errorf("objectives %+v not met", r.Objectives)
				}
			},
		},
		{
			// MQTT-SN sensors, MQTT 5 site gateways, HTTP meters and WebSocket dashboards: a
			// gateway per protocol and the broker's WebSocket listener, every group in the one
			// worker pod with its own address. The groups' own networks are taken out: the node has
			// no Chaos Mesh (it pulls no images from a registry), and a group with a network needs
			// its NetworkChaos (the controllers' envtest TestFleetGroupOnItsOwnLink checks those).
			// The dashboards get a placement of their own (any Linux node: this one), so they run
			// in a worker pod of their own and every delivery to them crosses two pods' clocks.
			s: sample{file: "fleets/mixed-fleet.yaml", edit: func(spec map[string]any) {
				for _, g := range []string{"sensors", "site-gateways", "meters"} {
					delete(specGroup(t, spec, g), "network")
				}
				specGroup(t, spec, "dashboards")["placement"] = map[string]any{"nodeSelector": map[string]any{"kubernetes.io/os": "linux"}}
			}},
			check: func(t *testing.T, r *results.Result) {
				dashboards := mustGroup(t, r, "dashboards")
				for _, from := range []string{"sensors", "site-gateways", "meters"} {
					g := mustGroup(t, r, from)
					p := mustPair(t, r, from, "dashboards")
					if g.Sent == 0 || p.Expected != 3*g.Sent {
						t.Errorf("pair %s → dashboards expects %d; %s sent %d to 3 dashboards", from, p.Expected, from, g.Sent)
					}
					// Two pods on one node: the offsets are measured over the pod network, so the
					// correction is within a few milliseconds and so is its uncertainty.
					if c := p.Clock; c == nil || c.Uncorrected || c.UncertaintyMicros <= 0 || c.UncertaintyMicros > 100_000 || abs(c.CorrectionMicros) > 100_000 {
						t.Errorf("pair %s → dashboards crosses two pods: clock %+v, want a measured correction", from, p.Clock)
					}
				}
				if len(r.Workers) != 2 {
					t.Errorf("%d workers, want the shared one and the dashboards' own", len(r.Workers))
				}
				if dashboards.Received == 0 || dashboards.Received != dashboards.Expected {
					t.Errorf("dashboards: received %d of %d expected", dashboards.Received, dashboards.Expected)
				}
			},
			pods: func(t *testing.T, mb *v1alpha1.MessagingBenchmark) {
				var pods corev1.PodList
				if err := c.List(context.Background(), &pods, client.InNamespace(mb.Namespace),
					client.MatchingLabels{v1alpha1.LabelBenchmark: mb.Name, v1alpha1.LabelComponent: v1alpha1.ComponentGateway}); err != nil {
					t.Fatal(err)
				}
				modes := map[string]int{}
				for _, p := range pods.Items {
					modes[p.Labels[v1alpha1.LabelGateway]]++
				}
				if len(pods.Items) != 2 || modes["mqtt-sn"] != 1 || modes["http"] != 1 {
					t.Errorf("gateway pods by mode %v, want one mqtt-sn and one http", modes)
				}
			},
		},
		{
			// MQTT 5 request/response, the service in worker pods of its own: requests cross two
			// pods one way, and every answer comes back; the round trip is the asking pod's own.
			s: sample{file: "fleets/request-response.yaml", edit: func(spec map[string]any) {
				specGroup(t, spec, "service")["placement"] = map[string]any{"nodeSelector": map[string]any{"kubernetes.io/os": "linux"}}
			}},
			check: func(t *testing.T, r *results.Result) {
				clients := mustGroup(t, r, "clients")
				q := clients.Requests
				if q == nil || clients.Sent == 0 || q.Expected != clients.Sent || q.Answered != clients.Sent || q.Lost != 0 || q.Duplicates != 0 {
					t.Fatalf("clients sent %d, requests %+v: want every request answered once", clients.Sent, q)
				}
				if q.RoundTrip == nil || q.RoundTrip.Count != clients.Sent || q.RoundTrip.P99Micros <= 0 || q.RoundTrip.P99Micros > 5_000_000 {
					t.Errorf("round trip %+v is not plausible", q.RoundTrip)
				}
				if p := mustPair(t, r, "clients", "service"); p.Clock == nil || p.Clock.Uncorrected {
					t.Errorf("pair clients → service crosses two pods: clock %+v", p.Clock)
				}
			},
		},
	} {
		mb := load(t, tc.s)
		t.Run(mb.Name, func(t *testing.T) {
			parallel(t, mb) // side by side, as the samples: each waits on its schedule
			start := time.Now()
			final, phases := runToEnd(t, mb, 5*time.Minute, nil)
			defer deleteBenchmark(t, final)
			mustSucceed(t, final)
			checkSucceeded(t, final)
			checkCost(t, final)
			checkPods(t, final)
			if tc.pods != nil {
				tc.pods(t, final)
			}
			checkObjectStore(t, final)
			if final.Status.Summary.Lost != 0 {
				t.Errorf("status: lost %d", final.Status.Summary.Lost)
			}
			if len(final.Spec.Objectives) > 0 {
				if c := meta.FindStatusCondition(final.Status.Conditions, v1alpha1.ConditionObjectivesMet); c == nil || c.Status != metav1.ConditionTrue {
					t.Errorf("ObjectivesMet: %+v", c)
				}
			}
			r := storedResult(t, final)
			if len(r.Groups) != len(final.Spec.Groups) || len(r.Pairs) == 0 {
				t.Fatalf("stored result has %d groups (spec %d) and %d pairs", len(r.Groups), len(final.Spec.Groups), len(r.Pairs))
			}
			checkPairs(t, r)
			tc.check(t, r)
			record("%-28s Succeeded in %4.0fs  %v  %s", mb.Name, time.Since(start).Seconds(), phases, fleetLine(r))
		})
	}
}

// checkPairs: on a lossless node at QoS ≥ 1, every pair of groups received exactly what the
// subscription graph calls for, and every subscribing group's figures add up to its pairs'.
func checkPairs(t *testing.T, r *results.Result) {
	t.Helper()
	expected := map[string]int64{}
	for _, p := range r.Pairs {
		if p.Received != p.Expected || p.Lost != 0 {
			t.Errorf("pair %s → %s: expected %d, received %d, lost %d, dup %d", p.From, p.To, p.Expected, p.Received, p.Lost, p.Duplicates)
		}
		if p.Received > 0 && (p.EndToEnd == nil || p.EndToEnd.P99Micros <= 0 || p.EndToEnd.P99Micros > 5_000_000) {
			t.Errorf("pair %s → %s: end-to-end %+v is not plausible", p.From, p.To, p.EndToEnd)
		}
		expected[p.To] += p.Expected
	}
	for _, g := range r.Groups {
		if g.Errors != 0 {
			t.Errorf("group %s: %d errors", g.Name, g.Errors)
		}
		if g.Publishers > 0 && (g.Sent == 0 || g.Acked != g.Sent) {
			t.Errorf("group %s: sent %d, acked %d", g.Name, g.Sent, g.Acked)
		}
		if g.Subscribers == 0 {
			continue
		}
		if deref(g.Lost) != 0 || g.Expected != expected[g.Name] {
			t.Errorf("group %s: expected %d (its pairs: %d), received %d, lost %d", g.Name, g.Expected, expected[g.Name], g.Received, deref(g.Lost))
		}
	}
}

// storedResult reads the run's result.json back from the object store.
func storedResult(t *testing.T, mb *v1alpha1.MessagingBenchmark) *results.Result {
	t.Helper()
	u, err := url.Parse(mb.Status.ResultsURL)
	if err != nil || u.Scheme != "s3" {
		t.Fatalf("resultsURL %q", mb.Status.ResultsURL)
	}
	var r results.Result
	if err := json.Unmarshal(getObject(t, u.Host, strings.TrimPrefix(u.Path, "/")), &r); err != nil {
		t.Fatalf("%s: %v", mb.Status.ResultsURL, err)
	}
	return &r
}

// specGroup is the device group named name in a sample's spec (as a map, for an edit).
func specGroup(t *testing.T, spec map[string]any, name string) map[string]any {
	t.Helper()
	groups, _ := spec["groups"].([]any)
	for _, g := range groups {
		if m, ok := g.(map[string]any); ok && m["name"] == name {
			return m
		}
	}
	t.Fatalf("the sample has no group %s", name)
	return nil
}

func mustGroup(t *testing.T, r *results.Result, name string) *results.GroupResult {
	t.Helper()
	g := r.Group(name)
	if g == nil {
		t.Fatalf("stored result has no group %s", name)
	}
	return g
}

func mustPair(t *testing.T, r *results.Result, from, to string) *results.PairResult {
	t.Helper()
	for i := range r.Pairs {
		if r.Pairs[i].From == from && r.Pairs[i].To == to {
			return &r.Pairs[i]
		}
	}
	t.Fatalf("stored result has no pair %s → %s", from, to)
	return nil
}

func deref(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

// fleetLine is the outcome line's per-pair part: "sensors→backend 500/500 p99 1234µs".
func fleetLine(r *results.Result) string {
	var parts []string
	for _, p := range r.Pairs {
		s := fmt.Sprintf("%s→%s %d/%d", p.From, p.To, p.Received, p.Expected)
		if p.Retained > 0 {
			s += fmt.Sprintf(" +%d retained", p.Retained)
		}
		if p.EndToEnd != nil {
			s += fmt.Sprintf(" p99 %dµs", p.EndToEnd.P99Micros)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
