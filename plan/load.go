package plan

import (
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// Timing is the run's clock, the same for every group: when the measured window opens and how
// long it lasts.
type Timing struct {
	// Warmup is spec.workload.warmup: publishing from the start, not measured (0 is no warm-up).
	Warmup time.Duration
	// Duration is spec.workload.duration: the measured window; 0 when the run ends after
	// Load.Messages instead.
	Duration time.Duration
	// TimelineInterval is spec.workload.timelineInterval, the result timeline's bucket (1 s when
	// unset or below 100 ms).
	TimelineInterval time.Duration
	// Timeout is spec.timeout: the most the whole run may take (0: the operator's default).
	Timeout time.Duration
}

// Load is a group's load model: how fast and how much its publishers send, how fast its clients
// connect and how they come and go.
type Load struct {
	// Rate is spec.workload.rate: messages per second over all the group's publishers (open
	// loop); 0 is a closed loop, each publisher sending as fast as its acknowledgements allow.
	Rate float64
	// Messages is spec.workload.messages: the group sends this many in all, then the run ends
	// (0: until Timing.Duration ends).
	Messages int64
	// ConnectRate is spec.workload.connectRate: connections per second per worker (0: no ramp).
	ConnectRate int32
	// DutyCycle is spec.workload.dutyCycle: devices that wake, publish and sleep; nil when they
	// stay connected.
	DutyCycle *DutyCycle
	// ReconnectStorm is spec.workload.reconnectStorm: every connection drops at once; nil when
	// none is asked for.
	ReconnectStorm *ReconnectStorm
}

// DutyCycle is spec.workload.dutyCycle, defaulted.
type DutyCycle struct {
	Period          time.Duration
	MessagesPerWake int32
	// Subscribers sleep too, each connected for Awake per period.
	Subscribers bool
	Awake       time.Duration
}

// ReconnectStorm is spec.workload.reconnectStorm, defaulted.
type ReconnectStorm struct {
	// At is when the connections drop, from the start of the run (warm-up included).
	At time.Duration
	// Spread spreads the reconnects uniformly over this time (0: all at once).
	Spread time.Duration
}

func compileTiming(spec *v1alpha1.MessagingBenchmarkSpec) Timing {
	w := &spec.Workload
	t := Timing{Warmup: w.Warmup.Duration, TimelineInterval: w.TimelineInterval.Duration, Timeout: spec.Timeout.Duration}
	if w.Messages == 0 {
		t.Duration = w.Duration.Duration
	}
	if t.TimelineInterval < 100*time.Millisecond {
		t.TimelineInterval = time.Second
	}
	return t
}

func compileLoad(w *v1alpha1.WorkloadSpec) Load {
	l := Load{Rate: float64(w.Rate), Messages: w.Messages, ConnectRate: w.ConnectRate}
	if dc := w.DutyCycle; dc != nil {
		l.DutyCycle = &DutyCycle{Period: dc.Period.Duration, MessagesPerWake: max(1, dc.MessagesPerWake), Subscribers: dc.Subscribers}
		if dc.Awake != nil {
			l.DutyCycle.Awake = dc.Awake.Duration
		}
	}
	if rs := w.ReconnectStorm; rs != nil {
		l.ReconnectStorm = &ReconnectStorm{At: rs.At.Duration}
		if rs.Spread != nil {
			l.ReconnectStorm.Spread = rs.Spread.Duration
		}
	}
	return l
}

// OfferedPerSecond is the open-loop load the run offers, in messages per second over every
// group: what the verdict judges the messages sent against (0: every group runs a closed loop).
func (p *Plan) OfferedPerSecond() float64 {
	var rate float64
	for _, g := range p.Groups {
		rate += g.Load.Rate
	}
	return rate
}

// Publishers is how many publishers the run has, over every group.
func (p *Plan) Publishers() int {
	n := 0
	for _, g := range p.Groups {
		n += int(g.Publishers)
	}
	return n
}

// Messages is the run's message count over every group (0: the run lasts Timing.Duration).
func (p *Plan) Messages() int64 {
	var n int64
	for _, g := range p.Groups {
		n += g.Load.Messages
	}
	return n
}
