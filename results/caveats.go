package results

import (
	"fmt"
	"time"
)

// Tolerances of the caveats (docs/results.md states them).
const (
	// SaturationShare: a load generator using this share of its cores (or the load generator
	// and the broker together, of the machine's) may itself be the bottleneck.
	SaturationShare = 0.9
	// StealShare: CPU steal above this share of the machine's CPU time in the window.
	StealShare = 0.02
	// EmulatorLateFloor and EmulatorLateShare: the link emulator may be late by the larger of
	// 2 ms and 5 % of the round trip before its delays stop being the link's.
	EmulatorLateFloor = 2 * time.Millisecond
	EmulatorLateShare = 0.05
)

// SaturationCaveat is set when, over measured seconds, the load generator's process used at
// least SaturationShare of its cores, or with the broker on the same machine (brokerCPU known,
// sameMachine) both together used that share of the machine's cores: then the load generator
// competed with what it measures. Nil otherwise.
func SaturationCaveat(loadgenCPU float64, brokerCPU *float64, measured float64, cores int, sameMachine bool) *Caveat {
	if measured <= 0 || cores <= 0 {
		return nil
	}
	capacity := float64(cores) * measured
	if share := loadgenCPU / capacity; share >= SaturationShare {
		return &Caveat{Type: CaveatLoadGeneratorSaturated, Value: Float64(100 * share), Limit: Float64(100 * SaturationShare),
			Message: fmt.Sprintf("the load generator used %.0f %% of its %d cores during the window: it may be the bottleneck, not the broker; "+
				"split the load over more workers (workers.replicas) or machines", 100*share, cores)}
	}
	if brokerCPU != nil && sameMachine {
		if share := (loadgenCPU + *brokerCPU) / capacity; share >= SaturationShare {
			return &Caveat{Type: CaveatLoadGeneratorSaturated, Value: Float64(100 * share), Limit: Float64(100 * SaturationShare),
				Message: fmt.Sprintf("the load generator (%.1f CPU-s) and the broker (%.1f CPU-s) together used %.0f %% of this machine's %d cores: "+
					"they competed for CPU, so the broker's figures are lower than it alone would reach", loadgenCPU, *brokerCPU, 100*share, cores)}
		}
	}
	return nil
}

// StealCaveat is set when the hypervisor took at least StealShare of the machine's CPU time
// (steal and total as /proc/stat counts them, over the window).
func StealCaveat(steal, total time.Duration) *Caveat {
	if total <= 0 {
		return nil
	}
	share := float64(steal) / float64(total)
	if share < StealShare {
		return nil
	}
	return &Caveat{Type: CaveatCPUSteal, Value: Float64(100 * share), Limit: Float64(100 * StealShare),
		Message: fmt.Sprintf("the hypervisor took %.1f %% of this machine's CPU time during the window (CPU steal, %.2f s): "+
			"latencies and rates include waits for a CPU that another guest held", 100*share, steal.Seconds())}
}

// RetransmitCaveat is set when TCP retransmitted segments on a path that loses nothing
// (loopback, or an emulated link without loss); queueDrops counts the emulator's own drops
// (-1: no emulator).
func RetransmitCaveat(retransmits int64, lossless bool, queueDrops int64) *Caveat {
	if retransmits <= 0 || !lossless {
		return nil
	}
	why := "loopback loses nothing, so a socket buffer or the broker's backlog overflowed"
	if queueDrops > 0 {
		why = fmt.Sprintf("the emulated link has no loss; its queue dropped %d packets (the offered load exceeded its bandwidth)", queueDrops)
	} else if queueDrops == 0 {
		why = "the emulated link has no loss and dropped nothing, so a socket buffer overflowed"
	}
	return &Caveat{Type: CaveatRetransmits, Value: Float64(float64(retransmits)),
		Message: fmt.Sprintf("TCP retransmitted %d segments on a path that loses nothing: %s; latency tails include the retransmission timeouts", retransmits, why)}
}

// EmulatorLateCaveat is set when the user-space link emulator sent packets later than their
// departure time by more than the larger of EmulatorLateFloor and EmulatorLateShare of the
// round trip: the machine was too busy for the emulated delays to be exact.
func EmulatorLateCaveat(maxLate time.Duration, late, packets uint64, rtt time.Duration) *Caveat {
	limit := max(EmulatorLateFloor, time.Duration(EmulatorLateShare*float64(rtt)))
	if maxLate <= limit {
		return nil
	}
	return &Caveat{Type: CaveatEmulatorLate, Value: Float64(float64(maxLate) / 1e6), Limit: Float64(float64(limit) / 1e6),
		Message: fmt.Sprintf("the link emulator sent %d of %d packets 1 ms or more after their due time, up to %s late (tolerance %s): "+
			"the machine was too busy for exact link delays; latencies include the lateness", late, packets, maxLate.Round(time.Millisecond), limit)}
}
