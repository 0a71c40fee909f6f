// Package complete finishes a run the one way the operator and `msgbench run` share: merge the
// workers' results exactly (judging the merged counts), add what the run itself observed around
// the workers (the link as applied, the timeline's steps, the radio, the path's caveats), then
// apply spec.objectives last, so that they judge the figures a reader will see. Storing the
// result stays with each runner (a ConfigMap and object store, or a run folder).
package complete

import (
	"fmt"

	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/results/objectives"
)

// Run is what the runner observed of a run beside its workers' results.
type Run struct {
	// Mode is the result's environment.mode (local, kubernetes); empty keeps the workers'.
	Mode string
	// Network is the result's network section when the workers recorded none (on Kubernetes
	// they measure through a link Chaos Mesh applies; its numbers are the operator's).
	Network any
	// Timeline is spec.network.timeline's steps as they took effect; nil without a timeline.
	Timeline []results.NetworkStepMark
	// Radio and Packets are the emulated link's radio states and packet counts (local runs).
	Radio, Packets map[string]any
	// SharedProcess says the workers ran in one process (local runs): each counted that
	// process's CPU, so the run's load-generator CPU is the largest count, not their sum.
	SharedProcess bool
	// Caveats are the runner's caveats of the merged result (the path's, concurrent runs').
	Caveats func(*results.Result) []results.Caveat
	// Environment completes the merged environment (the broker as the runner started it).
	Environment func(*results.Environment)
	// Energy adds the devices' energy to the merged result (local runs with
	// spec.network.radio.energy: the emulator saw every packet of every device).
	Energy func(*results.Result)
}

// Complete merges parts and finishes the result as run describes. An error is a result that
// cannot be made (parts of different runs, objectives that cannot be evaluated); a run that
// failed is a result whose phase says so.
func Complete(parts []*results.Result, run Run) (*results.Result, error) {
	merged, err := results.Merge(parts)
	if err != nil {
		return nil, fmt.Errorf("merging the workers' results: %w", err)
	}
	if run.SharedProcess {
		merged.Resources.LoadgenCPUSeconds = maxCPU(parts)
	}
	if run.Mode != "" {
		merged.Environment.Mode = run.Mode
	}
	if run.Environment != nil {
		run.Environment(&merged.Environment)
	}
	if run.Network != nil && merged.Network == nil {
		merged.Network = run.Network
	}
	if run.Timeline != nil {
		merged.SetNetworkTimeline(run.Timeline)
	}
	if run.Radio != nil {
		merged.SetNetworkRadio(run.Radio)
	}
	if run.Packets != nil {
		merged.SetNetworkPackets(run.Packets)
	}
	if run.Caveats != nil {
		for _, c := range run.Caveats(merged) {
			merged.AddCaveat(c)
		}
	}
	if run.Energy != nil { // before the objectives, which may judge it
		run.Energy(merged)
	}
	if err := objectives.Apply(merged); err != nil { // its errors name spec.objectives[i]
		return nil, err
	}
	return merged, nil
}

// maxCPU is the largest load-generator CPU any part counted.
func maxCPU(parts []*results.Result) float64 {
	cpu := parts[0].Resources.LoadgenCPUSeconds
	for _, p := range parts[1:] {
		cpu = max(cpu, p.Resources.LoadgenCPUSeconds)
	}
	return cpu
}
