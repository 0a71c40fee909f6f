package complete_test

import (
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/results/complete"
)

// part is one worker's result of 100 messages sent and received in a 10 s window.
func part(t *testing.T, spec *v1alpha1.MessagingBenchmarkSpec, worker int, cpu float64) *results.Result {
	t.Helper()
	hists := map[string]*hdrhistogram.Histogram{}
	for _, n := range results.HistogramNames {
		hists[n] = results.NewHistogram()
		for i := range 100 {
			results.RecordMicros(hists[n], int64(1000+i))
		}
	}
	p := &results.Result{Name: "b", Spec: spec, Phase: "Succeeded", MeasuredSeconds: 10, Sent: 100, Received: 100, ReceivedInWindow: 100,
		Expected: 100, Lost: results.Int64(0), Duplicates: results.Int64(0), OutOfOrder: results.Int64(0),
		Resources: results.Resources{LoadgenCPUSeconds: cpu},
		Workers:   []results.WorkerSummary{{Index: worker, Sent: 100, Received: 100}}}
	if err := p.Finalize(hists); err != nil {
		t.Fatal(err)
	}
	return p
}

func spec(objectives ...string) *v1alpha1.MessagingBenchmarkSpec {
	s := &v1alpha1.MessagingBenchmarkSpec{Protocol: v1alpha1.ProtocolMQTT, QoS: 1, Objectives: objectives}
	s.Workload = v1alpha1.WorkloadSpec{Publishers: 2, Subscribers: 2, Topics: 2, Rate: 20, PayloadBytes: 64}
	return s
}

// One pipeline for both runners: the runner's observations are added to the merged result,
// caveats before the objectives judge it, and in-process workers' shared CPU is counted once.
func TestCompleteAddsTheRunnersShareThenJudgesObjectives(t *testing.T) {
	s := spec("received >= 150")
	parts := []*results.Result{part(t, s, 0, 2), part(t, s, 1, 3)}
	caveat := results.Caveat{Type: results.CaveatConcurrentRuns, Message: "another run shared the nodes"}
	var sawObjectives bool
	run := complete.Run{
		Mode:        "kubernetes",
		Network:     map[string]any{"profile": "lte"},
		Timeline:    []results.NetworkStepMark{{At: 1.01, Planned: 1, Description: "outage"}},
		Environment: func(e *results.Environment) { e.Broker = "mosquitto 2.0.18" },
		Caveats: func(m *results.Result) []results.Caveat {
			sawObjectives = m.ObjectivesMet != nil
			return []results.Caveat{caveat}
		},
	}
	m, err := complete.Complete(parts, run)
	if err != nil {
		t.Fatal(err)
	}
	if m.Received != 200 || m.Environment.Mode != "kubernetes" || m.Environment.Broker != "mosquitto 2.0.18" {
		t.Errorf("received %d, environment %+v", m.Received, m.Environment)
	}
	if n, ok := m.Network.(map[string]any); !ok || n["profile"] != "lte" || n["timeline"] == nil {
		t.Errorf("network %#v: want the runner's link with the timeline as applied", m.Network)
	}
	if len(m.Caveats) == 0 || m.Caveats[len(m.Caveats)-1] != caveat || sawObjectives {
		t.Errorf("caveats %+v (objectives judged before them: %v)", m.Caveats, sawObjectives)
	}
	if m.ObjectivesMet == nil || !*m.ObjectivesMet || len(m.Objectives) != 1 {
		t.Errorf("objectives %+v met %v: want received >= 150 judged on the merged 200", m.Objectives, m.ObjectivesMet)
	}
	if m.Resources.LoadgenCPUSeconds != 5 {
		t.Errorf("separate processes: CPU %v, want the sum 5", m.Resources.LoadgenCPUSeconds)
	}
	shared, err := complete.Complete([]*results.Result{part(t, s, 0, 2), part(t, s, 1, 3)}, complete.Run{SharedProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	if shared.Resources.LoadgenCPUSeconds != 3 {
		t.Errorf("one shared process: CPU %v, want the largest count 3", shared.Resources.LoadgenCPUSeconds)
	}
}

// The workers' own link description wins over the runner's (they measured through it), and an
// objective that cannot be judged, or parts of different runs, are errors naming what.
func TestCompleteKeepsTheWorkersNetworkAndRefusesBadInput(t *testing.T) {
	s := spec()
	p := part(t, s, 0, 1)
	p.Network = map[string]any{"profile": "nb-iot", "emulator": "msgbench user-space link"}
	m, err := complete.Complete([]*results.Result{p}, complete.Run{Network: map[string]any{"profile": "lte"}})
	if err != nil {
		t.Fatal(err)
	}
	if n := m.Network.(map[string]any); n["profile"] != "nb-iot" {
		t.Errorf("network %v: the workers' description was replaced", n)
	}
	if _, err := complete.Complete([]*results.Result{part(t, spec("nonsense >= 1"), 0, 1)}, complete.Run{}); err == nil || !strings.Contains(err.Error(), "spec.objectives[0]") {
		t.Errorf("unparsable objective: %v", err)
	}
	other := part(t, s, 1, 1)
	other.Name = "c"
	if _, err := complete.Complete([]*results.Result{part(t, s, 0, 1), other}, complete.Run{}); err == nil || !strings.Contains(err.Error(), "merging the workers' results") {
		t.Errorf("parts of two runs: %v", err)
	}
}
