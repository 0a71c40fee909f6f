package results

import (
	"fmt"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histograms of the churn section, in Result.Histograms beside the latency figures'.
const (
	// HistQueuedEndToEnd is the end-to-end latency of deliveries from a queued session (the
	// sleep included).
	HistQueuedEndToEnd = "queuedEndToEnd"
	// HistReconnect is the connect latency of the reconnections after a reconnect storm's drop.
	HistReconnect = "reconnect"
)

// Churn is what devices coming and going did (spec.workload.dutyCycle, reconnectStorm):
// result.churn, absent for clients that connect once and stay. Every count is summed over
// workers; docs/results.md defines each.
type Churn struct {
	// Connects counts every connection the clients opened over the whole run (warm-up, drain,
	// reconnections included); ExpectedConnects what the schedule calls for (nil when it
	// cannot be known beforehand: a reconnect storm's retries). Disconnects counts clean
	// disconnects (DISCONNECT sent) before the end of the run.
	Connects         int64  `json:"connects"`
	ExpectedConnects *int64 `json:"expectedConnects,omitempty"`
	Disconnects      int64  `json:"disconnects"`

	// Wakes counts publisher wakes in the measured window and ExpectedWakes those the
	// duty cycle's phases put in it; each sent messagesPerWake messages.
	Wakes         int64 `json:"wakes"`
	ExpectedWakes int64 `json:"expectedWakes"`
	// ExpectedMessages is expectedWakes × messagesPerWake: what sent must be.
	ExpectedMessages int64 `json:"expectedMessages,omitempty"`
	// LateWakes counts measured wakes whose connection began more than 10 ms after the
	// intended wake time (the device before it in its own cycle still busy, or the machine).
	LateWakes int64 `json:"lateWakes"`
	// SubscriberWakes and ExpectedSubscriberWakes count sleeping subscribers' scheduled wakes
	// over the run; CollectWakes the wakes after the end that fetched what was still queued.
	SubscriberWakes         int64 `json:"subscriberWakes,omitempty"`
	ExpectedSubscriberWakes int64 `json:"expectedSubscriberWakes,omitempty"`
	CollectWakes            int64 `json:"collectWakes,omitempty"`
	// QueuedDeliveries counts measured deliveries from a queued session: received by a sleeping
	// subscriber on a resumed session, of a message stamped before that session's connect
	// began (published while the subscriber slept). QueuedEndToEnd is their latency.
	QueuedDeliveries int64           `json:"queuedDeliveries,omitempty"`
	QueuedEndToEnd   *LatencySummary `json:"queuedEndToEnd,omitempty"`

	// Storm is the reconnect storm's figures; nil without one.
	Storm *Storm `json:"storm,omitempty"`
}

// Storm is a reconnect storm's figures (spec.workload.reconnectStorm).
type Storm struct {
	// AtSeconds is when the connections dropped, in seconds since the run began (warm-up
	// included): the slowest worker's, as planned plus its lateness.
	AtSeconds float64 `json:"atSeconds"`
	// Dropped counts the connections dropped; Reconnected the clients back (connected, and
	// subscribers subscribed again); NotBack those never back by the end of the run.
	Dropped     int64 `json:"dropped"`
	Reconnected int64 `json:"reconnected"`
	NotBack     int64 `json:"notBack"`
	// RecoverySeconds is from the drop until the last client was back (the slowest worker's).
	RecoverySeconds float64 `json:"recoverySeconds"`
	// ReconnectsPerSecond is Reconnected / RecoverySeconds: with spread 0 the rate the broker
	// took the reconnections at, its connect-rate ceiling.
	ReconnectsPerSecond float64 `json:"reconnectsPerSecond"`
	// FailedAttempts counts reconnection attempts that failed (each was retried: Retries counts
	// the attempts after a client's first).
	FailedAttempts int64 `json:"failedAttempts"`
	Retries        int64 `json:"retries"`
	// InFlightAtDrop counts publishes unacknowledged when their connection dropped (QoS ≥ 1),
	// or interrupted by the drop (any QoS); Resent those published again after reconnecting
	// (all of them at QoS ≥ 1; at QoS 0 only an interrupted one). A resent message the broker
	// had already taken is delivered twice: a duplicate.
	InFlightAtDrop int64 `json:"inFlightAtDrop"`
	Resent         int64 `json:"resent"`
	// PersistentSessions is whether the subscribers resumed sessions the broker kept
	// (cleanSession false at QoS ≥ 1): then nothing may be lost. LostAtDrop is the run's lost
	// deliveries, all of them the drop's on a path that loses nothing else: with clean sessions
	// what the broker routed to a subscriber while it was away (it discards it), at QoS 0 also
	// what the dropped sockets still held.
	PersistentSessions bool  `json:"persistentSessions"`
	LostAtDrop         int64 `json:"lostAtDrop"`
	// Reconnect is the connect latency of the successful reconnections.
	Reconnect *LatencySummary `json:"reconnect,omitempty"`
}

// finalizeChurn encodes and summarizes the churn histograms (Finalize calls it).
func (r *Result) finalizeChurn(hists map[string]*hdrhistogram.Histogram) error {
	if r.Churn == nil {
		return nil
	}
	r.Churn.QueuedEndToEnd = nil
	if r.Churn.Storm != nil {
		r.Churn.Storm.Reconnect = nil
		s := r.Churn.Storm
		s.ReconnectsPerSecond = 0
		if s.RecoverySeconds > 0 {
			s.ReconnectsPerSecond = float64(s.Reconnected) / s.RecoverySeconds
		}
	}
	for _, name := range []string{HistQueuedEndToEnd, HistReconnect} {
		s, err := r.keepHistogram(name, hists[name])
		if err != nil {
			return err
		}
		if s == nil {
			continue
		}
		switch {
		case name == HistQueuedEndToEnd:
			r.Churn.QueuedEndToEnd = s
		case r.Churn.Storm != nil:
			r.Churn.Storm.Reconnect = s
		}
	}
	return nil
}

// mergeChurn sums the workers' churn sections (nil when none has one); the storm's times are the
// slowest worker's, and Finalize derives the rest.
func mergeChurn(parts []*Result) *Churn {
	var m *Churn
	for _, p := range parts {
		c := p.Churn
		if c == nil {
			continue
		}
		if m == nil {
			m = &Churn{}
			if c.ExpectedConnects != nil {
				m.ExpectedConnects = Int64(0)
			}
		}
		m.Connects += c.Connects
		if m.ExpectedConnects != nil && c.ExpectedConnects != nil {
			*m.ExpectedConnects += *c.ExpectedConnects
		} else {
			m.ExpectedConnects = nil
		}
		m.Disconnects += c.Disconnects
		m.Wakes += c.Wakes
		m.ExpectedWakes += c.ExpectedWakes
		m.ExpectedMessages += c.ExpectedMessages
		m.LateWakes += c.LateWakes
		m.SubscriberWakes += c.SubscriberWakes
		m.ExpectedSubscriberWakes += c.ExpectedSubscriberWakes
		m.CollectWakes += c.CollectWakes
		m.QueuedDeliveries += c.QueuedDeliveries
		if s := c.Storm; s != nil {
			if m.Storm == nil {
				m.Storm = &Storm{}
			}
			ms := m.Storm
			ms.AtSeconds = max(ms.AtSeconds, s.AtSeconds)
			ms.RecoverySeconds = max(ms.RecoverySeconds, s.RecoverySeconds)
			ms.Dropped += s.Dropped
			ms.Reconnected += s.Reconnected
			ms.NotBack += s.NotBack
			ms.FailedAttempts += s.FailedAttempts
			ms.Retries += s.Retries
			ms.InFlightAtDrop += s.InFlightAtDrop
			ms.Resent += s.Resent
			ms.LostAtDrop += s.LostAtDrop
			ms.PersistentSessions = s.PersistentSessions
		}
	}
	return m
}

// churnSummary is the summary's churn row: "connects 84 of 84, 80 disconnects; wakes 80 of 80
// (0 late); storm at 2.00 s: 40 dropped, all back in 31 ms (1290/s), 0 failed attempts".
func churnSummary(c *Churn) string {
	if c == nil {
		return ""
	}
	var parts []string
	conn := fmt.Sprintf("connects %d", c.Connects)
	if c.ExpectedConnects != nil {
		conn += fmt.Sprintf(" of %d", *c.ExpectedConnects)
	}
	parts = append(parts, conn+fmt.Sprintf(", %d disconnects", c.Disconnects))
	if c.ExpectedWakes > 0 || c.Wakes > 0 {
		parts = append(parts, fmt.Sprintf("wakes %d of %d (%d late), %d messages expected", c.Wakes, c.ExpectedWakes, c.LateWakes, c.ExpectedMessages))
	}
	if c.ExpectedSubscriberWakes > 0 || c.SubscriberWakes > 0 {
		q := fmt.Sprintf("subscriber wakes %d of %d + %d to collect, %d queued deliveries", c.SubscriberWakes,
			c.ExpectedSubscriberWakes, c.CollectWakes, c.QueuedDeliveries)
		if c.QueuedEndToEnd != nil {
			q += fmt.Sprintf(" (p50 %s)", micros(c.QueuedEndToEnd.P50Micros))
		}
		parts = append(parts, q)
	}
	if s := c.Storm; s != nil {
		back := fmt.Sprintf("all back in %s", secs(s.RecoverySeconds))
		if s.NotBack > 0 {
			back = fmt.Sprintf("%d not back", s.NotBack)
		}
		st := fmt.Sprintf("storm at %.2f s: %d dropped, %s (%.0f/s), %d failed attempts, %d in flight at the drop, %d resent, %d lost at the drop",
			s.AtSeconds, s.Dropped, back, s.ReconnectsPerSecond, s.FailedAttempts, s.InFlightAtDrop, s.Resent, s.LostAtDrop)
		if s.Reconnect != nil {
			st += fmt.Sprintf("; reconnect p50 %s p99 %s", micros(s.Reconnect.P50Micros), micros(s.Reconnect.P99Micros))
		}
		parts = append(parts, st)
	}
	return strings.Join(parts, "; ")
}

func micros(us int64) string {
	if us >= 10000 {
		return fmt.Sprintf("%.0f ms", float64(us)/1000)
	}
	return fmt.Sprintf("%.2f ms", float64(us)/1000)
}

func secs(s float64) string {
	if s < 1 {
		return fmt.Sprintf("%.0f ms", s*1000)
	}
	return fmt.Sprintf("%.2f s", s)
}
