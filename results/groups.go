package results

// GroupResult is one device group's figures in a run with spec.groups (docs/fleets.md): what
// its publishers sent, what its subscribers received of what the subscriptions call for, their
// latencies and their sockets' bytes. Definitions as the run's own (docs/results.md), over the
// group's clients only.
type GroupResult struct {
	Name        string `json:"name"`
	Protocol    string `json:"protocol"`
	QoS         int32  `json:"qos"`
	Publishers  int    `json:"publishers"`
	Subscribers int    `json:"subscribers"`
	// Sent, Acked, Unsent: its publishers' measured messages. Received, Expected, Lost,
	// Duplicates, OutOfOrder: its subscribers' deliveries, from every group that publishes to
	// what they subscribe to.
	Sent       int64  `json:"sent"`
	Acked      int64  `json:"acked"`
	Unsent     int64  `json:"unsent"`
	Received   int64  `json:"received"`
	Expected   int64  `json:"expected"`
	Lost       *int64 `json:"lost"`
	Duplicates *int64 `json:"duplicates"`
	OutOfOrder *int64 `json:"outOfOrder"`
	Errors     int64  `json:"errors"`
	// Retained counts the retained messages its subscriptions brought, apart from the others:
	// expected is one per topic a subscription matched on which this run's retained message had
	// surely arrived (acknowledged; written, at QoS 0) when it subscribed. Nil when none.
	Retained *RetainedFigures `json:"retained,omitempty"`
	// BeforeJoining counts deliveries to a group that joins late (spec.groups[].start) of
	// messages sent before every member had subscribed: neither expected nor received.
	BeforeJoining int64 `json:"beforeJoining,omitempty"`
	// Throughput is over the run's measured window (measuredSeconds); its payload bytes are the
	// group's payload size.
	Throughput Throughput `json:"throughput"`
	// Latency: endToEnd of the messages its subscribers received; publishAck and publishDelay of
	// its publishers; connect of its clients.
	Latency Latencies `json:"latency"`
	Wire    GroupWire `json:"wire"`
	// Network describes the group's own link (spec.groups[].network) as resolved; absent when
	// its clients take the run's.
	Network map[string]any `json:"network,omitempty"`
}

// GroupWire is what a group's sockets carried, both ways, over the whole run.
type GroupWire struct {
	BytesSent     int64 `json:"bytesSent"`
	BytesReceived int64 `json:"bytesReceived"`
	Connections   int64 `json:"connections"`
	// ConnectBytes is the mean bytes a connection took until usable (handshakes, CONNECT and
	// CONNACK).
	ConnectBytes *float64 `json:"connectBytes"`
}

// RetainedFigures are the retained messages a group's new subscriptions should have brought and
// those that came.
type RetainedFigures struct {
	Expected int64 `json:"expected"`
	Received int64 `json:"received"`
}

// PairResult is the delivery from one publishing group to one subscribing group: what the
// subscriptions call for, what arrived once, lost (expected − received once), duplicates,
// reordering and the end-to-end latency, for the messages of From's publishers at To's
// subscribers only.
type PairResult struct {
	From       string `json:"from"`
	To         string `json:"to"`
	Expected   int64  `json:"expected"`
	Received   int64  `json:"received"`
	Lost       int64  `json:"lost"`
	Duplicates int64  `json:"duplicates"`
	OutOfOrder int64  `json:"outOfOrder"`
	// Retained counts the retained messages of From's publishers that To's new subscriptions
	// brought (not in Received).
	Retained int64           `json:"retained,omitempty"`
	EndToEnd *LatencySummary `json:"endToEnd"`
}

// Group returns the group named name, nil when there is none.
func (r *Result) Group(name string) *GroupResult {
	for i := range r.Groups {
		if r.Groups[i].Name == name {
			return &r.Groups[i]
		}
	}
	return nil
}
