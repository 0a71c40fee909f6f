package results

// ConnectRamp is how fast a run opened its clients' first connections: the subscribers' ramp
// before the start plus the publishers' after it (reconnections are not part of it).
type ConnectRamp struct {
	// Connections is how many connection attempts the ramps finished (failed ones included).
	Connections int64 `json:"connections"`
	// Seconds is the time the ramps took: from each ramp's start until its last attempt
	// finished, the subscribers' and the publishers' added. Merged: the slowest worker's, as
	// workers ramp side by side.
	Seconds float64 `json:"seconds"`
	// PerSecond is Connections / Seconds: the connect rate achieved.
	PerSecond float64 `json:"perSecond"`
	// TargetPerSecond is spec.workload.connectRate summed over the workers; 0 asked for all at
	// once (at most loadgen's concurrency limit in flight).
	TargetPerSecond int64 `json:"targetPerSecond"`
}

// NewConnectRamp computes PerSecond.
func NewConnectRamp(connections int64, seconds float64, target int64) *ConnectRamp {
	r := &ConnectRamp{Connections: connections, Seconds: seconds, TargetPerSecond: target}
	if seconds > 0 {
		r.PerSecond = float64(connections) / seconds
	}
	return r
}

// mergeConnectRamps adds the workers' connections over the slowest worker's time; nil when no
// part has a ramp.
func mergeConnectRamps(parts []*Result) *ConnectRamp {
	var n, target int64
	var secs float64
	any := false
	for _, p := range parts {
		if p.ConnectRamp == nil {
			continue
		}
		any = true
		n += p.ConnectRamp.Connections
		target += p.ConnectRamp.TargetPerSecond
		secs = max(secs, p.ConnectRamp.Seconds)
	}
	if !any {
		return nil
	}
	return NewConnectRamp(n, secs, target)
}
