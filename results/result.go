// Package results is msgbench's result document (result.json, docs/results.md): its types, JSON
// encoding, latency histograms, and the exact merge of several workers' results.
package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/atomicfile"
)

// Kind and APIVersion of a result document.
const (
	Kind       = "MessagingBenchmarkResult"
	APIVersion = "msgbench.io/v1alpha1"
)

// Result is one benchmark run's result: one worker's, or the merge of all workers'. Figures that
// could not be measured are nil (null in JSON), never zero-as-unknown.
type Result struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	// RunID names this run among the benchmark's runs (locally the folder under
	// <out>/<name>/; on Kubernetes the object's UID).
	RunID       string                           `json:"runID,omitempty"`
	Spec        *v1alpha1.MessagingBenchmarkSpec `json:"spec,omitempty"`
	Environment Environment                      `json:"environment"`
	Phase       string                           `json:"phase"`
	Message     string                           `json:"message"`
	StartTime   time.Time                        `json:"startTime"`
	EndTime     time.Time                        `json:"endTime"`
	// MeasuredSeconds is the length of the window actually measured: from the end of warm-up
	// until publishing stopped (workload.duration when the run went the whole way; shorter when
	// it ended early), or with workload.messages until the last send or delivery. Every rate is
	// over this window.
	MeasuredSeconds float64 `json:"measuredSeconds"`

	// Sent counts messages published in the measured window; Acked those the broker
	// acknowledged (QoS>0); Received every delivery to a subscriber, duplicates included;
	// Expected the deliveries the subscriptions call for (each subscriber of a topic expects
	// every message published to it).
	Sent     int64 `json:"sent"`
	Acked    int64 `json:"acked"`
	Received int64 `json:"received"`
	Expected int64 `json:"expected"`
	// ReceivedInWindow counts deliveries that arrived in the measured window, whenever they
	// were sent (a warm-up message arriving in it too): what crossed in the window, over which
	// the received rate is. ReceivedAfterWindow counts deliveries of the window's messages that
	// arrived after it, in the drain (in Received, not in the rate).
	ReceivedInWindow    int64 `json:"receivedInWindow"`
	ReceivedAfterWindow int64 `json:"receivedAfterWindow"`
	// Lost = Expected − unique deliveries; Duplicates are deliveries of a message already
	// received; OutOfOrder arrived after a later message of the same publisher. Nil for
	// payloads under 16 bytes, which carry no sequence header (Lost is then Expected −
	// Received, floored at 0).
	Lost       *int64 `json:"lost"`
	Duplicates *int64 `json:"duplicates"`
	OutOfOrder *int64 `json:"outOfOrder"`
	// Errors counts failed operations (refused publishes, dropped connections).
	Errors int64 `json:"errors"`
	// Unsent counts messages an open-loop schedule called for in the measured window that could
	// not be sent before it ended (the publisher was still waiting for the link or for an
	// acknowledgement window): k6's dropped iterations. Zero in closed loop.
	Unsent int64 `json:"unsent"`

	// Caveats name conditions of the run that bend part of its figures (the machine too busy
	// for exact link delays, the load generator saturated, CPU steal, the offered load not
	// sustained …); each says what it affects. A run with caveats may still have Succeeded.
	Caveats []Caveat `json:"caveats,omitempty"`

	// Objectives are spec.objectives judged on this result (set once the result is merged:
	// objectives.Apply), and ObjectivesMet whether every one was met; absent without objectives.
	// They never change the phase: a run can measure correctly and miss them.
	Objectives    []ObjectiveResult `json:"objectives,omitempty"`
	ObjectivesMet *bool             `json:"objectivesMet,omitempty"`

	Throughput Throughput `json:"throughput"`
	Latency    Latencies  `json:"latency"`
	Wire       Wire       `json:"wire"`
	Resources  Resources  `json:"resources"`
	// Churn is what devices coming and going did (spec.workload.dutyCycle, reconnectStorm);
	// absent for clients that connect once and stay.
	Churn *Churn `json:"churn,omitempty"`
	// ConnectRamp is the connect rate the clients' first connections achieved; nil before it
	// was measured.
	ConnectRamp *ConnectRamp `json:"connectRamp,omitempty"`
	// Network is the link as applied (profile and per-direction parameters), nil without
	// emulation; with spec.network.timeline its "timeline" holds the steps as they took effect
	// (NetworkStepMark, SetNetworkTimeline).
	Network  any             `json:"network,omitempty"`
	Timeline []TimelinePoint `json:"timeline"`
	// Groups are the figures of each device group of a run with spec.groups, and Pairs the
	// delivery from each publishing group to each subscribing group that receives from it
	// (docs/fleets.md); absent for a run without groups.
	// Energy is what the devices' radios spent (spec.network.radio.energy; docs/energy.md); a
	// group behind a link of its own has its own (groups[].energy). Absent without a model.
	Energy *Energy `json:"energy,omitempty"`

	Groups  []GroupResult   `json:"groups,omitempty"`
	Pairs   []PairResult    `json:"pairs,omitempty"`
	Workers []WorkerSummary `json:"workers"`
	// WorkersStart is how closely several workers started together (Merge sets it from
	// workers[]); nil with one worker.
	WorkersStart *StartSpread `json:"workersStart,omitempty"`
	// Histograms holds each latency figure's HdrHistogram (microseconds), base64 of the
	// compressed V2 encoding, keyed like Latency's fields; merging them is exact.
	Histograms map[string]string `json:"histograms"`
}

// NetworkStepMark is one step of spec.network.timeline as it took effect: the result's
// network.timeline.
type NetworkStepMark struct {
	// At is when the step took effect, in seconds since the measured window began (the
	// timeline's t = 0); Planned is when spec.network.timeline asked for it.
	At      float64 `json:"at"`
	Planned float64 `json:"planned"`
	// Step is the index in spec.network.timeline; absent for the return to spec.network's link
	// when a step's for ended.
	Step *int `json:"step,omitempty"`
	// Description says what the step did: "outage", "profile lte, delay 300ms", "end of
	// timeline[0]: back to spec.network".
	Description string `json:"description"`
}

// SetNetworkTimeline records the steps as they took effect under the result's network (which
// it creates when the run's base link was unimpaired), sorted by planned time, and marks each
// on the timeline point of the interval it took effect in.
func (r *Result) SetNetworkTimeline(marks []NetworkStepMark) {
	marks = append([]NetworkStepMark(nil), marks...)
	sort.SliceStable(marks, func(a, b int) bool { return marks[a].Planned < marks[b].Planned })
	r.setNetwork("timeline", marks)
	for i := range r.Timeline {
		r.Timeline[i].Network = ""
	}
	for _, mk := range marks {
		prev := 0.0
		for i := range r.Timeline {
			p := &r.Timeline[i]
			if (mk.At > prev || i == 0) && mk.At <= p.T {
				if p.Network != "" {
					p.Network += "; "
				}
				p.Network += mk.Description
				break
			}
			prev = p.T
		}
	}
}

// SetNetworkRadio records network.radio: spec.network.radio's numbers as the local emulator
// applied them and what the radio states did (promotions, pagings, PSM wake-ups, hold time).
func (r *Result) SetNetworkRadio(radio map[string]any) { r.setNetwork("radio", radio) }

// SetNetworkPackets records network.packets: what the local emulator did to the packets of each
// direction over the whole run (sent, delivered, lost, loss bursts, duplicated, …).
func (r *Result) SetNetworkPackets(packets map[string]any) { r.setNetwork("packets", packets) }

// setNetwork sets one key of the result's network map, on a copy: the workers' results may share
// the map.
func (r *Result) setNetwork(key string, value any) {
	n := map[string]any{}
	if old, ok := r.Network.(map[string]any); ok {
		for k, v := range old {
			n[k] = v
		}
	}
	n[key] = value
	r.Network = n
}

// NetworkTimeline returns network.timeline (nil without one), also from a result read back
// from JSON.
func (r *Result) NetworkTimeline() []NetworkStepMark {
	n, ok := r.Network.(map[string]any)
	if !ok || n["timeline"] == nil {
		return nil
	}
	if marks, ok := n["timeline"].([]NetworkStepMark); ok {
		return marks
	}
	data, err := json.Marshal(n["timeline"])
	if err != nil {
		return nil
	}
	var marks []NetworkStepMark
	if json.Unmarshal(data, &marks) != nil {
		return nil
	}
	return marks
}

// Caveat is one condition that bends part of a measurement.
type Caveat struct {
	// Type names the condition (CaveatEmulatorLate, …), stable for scripts.
	Type string `json:"type"`
	// Message says what was seen, with numbers, and which figures it affects.
	Message string `json:"message"`
	// Worker is the worker that saw it (-1 or absent: the run as a whole).
	Worker *int `json:"worker,omitempty"`
	// Value is the measured quantity and Limit the tolerance it passed, in the unit the
	// message names.
	Value *float64 `json:"value,omitempty"`
	Limit *float64 `json:"limit,omitempty"`
}

// Caveat types.
const (
	// CaveatEmulatorLate: the user-space link emulator delivered packets later than the link's
	// delay by more than its tolerance (the machine was too busy); latencies include it.
	CaveatEmulatorLate = "EmulatorLate"
	// CaveatLoadGeneratorSaturated: a load-generator process used nearly all of a core or of
	// the machine; it may be the bottleneck rather than the broker.
	CaveatLoadGeneratorSaturated = "LoadGeneratorSaturated"
	// CaveatCPUSteal: the hypervisor took CPU time from this machine during the window.
	CaveatCPUSteal = "CPUSteal"
	// CaveatRetransmits: TCP retransmitted segments on a link that loses nothing (loopback or
	// an emulated link without loss): a sign of overflowing socket buffers or queues.
	CaveatRetransmits = "Retransmits"
	// CaveatOfferedLoadNotSustained: an open-loop run could not send at the rate it asked for.
	CaveatOfferedLoadNotSustained = "OfferedLoadNotSustained"
	// CaveatNotSteadyState: the end-to-end latency climbed through the window: a growing
	// backlog, not a steady state.
	CaveatNotSteadyState = "NotSteadyState"
	// CaveatEndedEarly: the measured window was shorter than workload.duration.
	CaveatEndedEarly = "EndedEarly"
	// CaveatConcurrentRuns: the run belongs to a suite whose spec.concurrency let other runs
	// measure at the same time, possibly on the same nodes.
	CaveatConcurrentRuns = "ConcurrentRuns"
	// CaveatClocksUncorrected: a pair of device groups ran in two workers whose clock offsets
	// were not known, so its latencies mix two clocks.
	CaveatClocksUncorrected = "ClocksUncorrected"
	// CaveatRadioAccountedOnly: the devices' radio states were accounted from what their
	// sockets wrote and read (on Kubernetes), not applied to their packets.
	CaveatRadioAccountedOnly = "RadioAccountedOnly"
)

// Environment says where and with what the run happened: what a reader needs to judge and
// repeat it.
type Environment struct {
	Mode            string `json:"mode"` // local or kubernetes
	MsgbenchVersion string `json:"msgbenchVersion"`
	MsgbenchCommit  string `json:"msgbenchCommit,omitempty"`
	Broker          string `json:"broker"`
	Gateway         string `json:"gateway,omitempty"`
	Host            string `json:"host"`
	GoVersion       string `json:"goVersion,omitempty"`
	CPUs            int    `json:"cpus,omitempty"`
	CPUModel        string `json:"cpuModel,omitempty"`
	Kernel          string `json:"kernel,omitempty"`
	// Protocol is the protocol as spoken, version included: "MQTT 3.1.1", "MQTT 5.0",
	// "MQTT-SN 1.2", "HTTP/2", "HTTP/3", "MQTT 3.1.1 over QUIC", "Kafka".
	Protocol string `json:"protocol,omitempty"`
	// TLSVersion, TLSGroup and TLSCipherSuite are what the clients' handshakes negotiated
	// ("TLS 1.3", "X25519MLKEM768", "TLS_AES_128_GCM_SHA256"), empty without TLS. TLSGroup is
	// empty for a resumed handshake without key exchange (docs/tls.md).
	TLSVersion     string `json:"tlsVersion,omitempty"`
	TLSGroup       string `json:"tlsGroup,omitempty"`
	TLSCipherSuite string `json:"tlsCipherSuite,omitempty"`
	// Discovery is how the MQTT-SN clients found their gateway (spec.mqttsn.discovery); nil when
	// they were given its address.
	Discovery *Discovery `json:"mqttsnDiscovery,omitempty"`
}

// Discovery is what the MQTT-SN clients' gateway discovery did (SEARCHGW → GWINFO, MQTT-SN 1.2
// §6.1; docs/results.md). Its time is one client's first SEARCHGW sent → the first GWINFO it
// received; it is also part of the client's connect latency, which starts before it.
type Discovery struct {
	// Searched are the addresses SEARCHGW was sent to (host:port).
	Searched []string `json:"searched"`
	// Gateways are the gateways found: "gateway 1 at 198.18.0.2:40123", the id from GWINFO and
	// the address the client connected to.
	Gateways []string `json:"gateways"`
	// Found is how many searches found a gateway: one per connection (a client that connects
	// again searches again); Searches how many SEARCHGW they sent in all (retransmissions
	// included).
	Found    int64 `json:"found"`
	Searches int64 `json:"searches"`
	// MinMicros, MeanMicros and MaxMicros are the discovery time over the searches that found a
	// gateway; TotalMicros its sum, which merging workers adds up.
	MinMicros   int64   `json:"minMicros"`
	MeanMicros  float64 `json:"meanMicros"`
	MaxMicros   int64   `json:"maxMicros"`
	TotalMicros int64   `json:"totalMicros"`
}

// Add records one client's discovery: micros from its first SEARCHGW to GWINFO, after
// searches SEARCHGW, finding gateway, having searched searched.
func (d *Discovery) Add(searched, gateway string, searches int, micros int64) {
	if d.Found == 0 || micros < d.MinMicros {
		d.MinMicros = micros
	}
	d.MaxMicros = max(d.MaxMicros, micros)
	d.Found++
	d.Searches += int64(searches)
	d.TotalMicros += micros
	d.MeanMicros = float64(d.TotalMicros) / float64(d.Found)
	if !contains(d.Searched, searched) {
		d.Searched = append(d.Searched, searched)
	}
	if !contains(d.Gateways, gateway) {
		d.Gateways = append(d.Gateways, gateway)
	}
}

// Merge adds o's clients to d's.
func (d *Discovery) Merge(o *Discovery) {
	if o == nil || o.Found == 0 && o.Searches == 0 {
		return
	}
	if d.Found == 0 || o.Found > 0 && o.MinMicros < d.MinMicros {
		d.MinMicros = o.MinMicros
	}
	d.MaxMicros = max(d.MaxMicros, o.MaxMicros)
	d.Found += o.Found
	d.Searches += o.Searches
	d.TotalMicros += o.TotalMicros
	if d.Found > 0 {
		d.MeanMicros = float64(d.TotalMicros) / float64(d.Found)
	}
	for _, s := range o.Searched {
		if !contains(d.Searched, s) {
			d.Searched = append(d.Searched, s)
		}
	}
	for _, g := range o.Gateways {
		if !contains(d.Gateways, g) {
			d.Gateways = append(d.Gateways, g)
		}
	}
}

// Throughput over the measured window.
type Throughput struct {
	// OfferedPerSecond is the rate the open-loop schedule asked for (workload.rate), 0 in
	// closed loop; SentPerSecond below it means the offered load was not sustained.
	OfferedPerSecond       float64 `json:"offeredPerSecond,omitempty"`
	SentPerSecond          float64 `json:"sentPerSecond"`
	ReceivedPerSecond      float64 `json:"receivedPerSecond"`
	SentBytesPerSecond     float64 `json:"sentBytesPerSecond"`     // payload bytes
	ReceivedBytesPerSecond float64 `json:"receivedBytesPerSecond"` // payload bytes
}

// Latencies are the latency figures of measurement.md; nil when not measured.
type Latencies struct {
	EndToEnd     *LatencySummary `json:"endToEnd"`
	PublishAck   *LatencySummary `json:"publishAck"`
	PublishDelay *LatencySummary `json:"publishDelay"`
	Connect      *LatencySummary `json:"connect"`
	FirstMessage *LatencySummary `json:"firstMessage"`
}

// LatencySummary summarises one histogram, in microseconds.
type LatencySummary struct {
	Count      int64   `json:"count"`
	MinMicros  int64   `json:"minMicros"`
	MeanMicros float64 `json:"meanMicros"`
	P50Micros  int64   `json:"p50Micros"`
	P90Micros  int64   `json:"p90Micros"`
	P95Micros  int64   `json:"p95Micros"`
	P99Micros  int64   `json:"p99Micros"`
	P999Micros int64   `json:"p999Micros"`
	MaxMicros  int64   `json:"maxMicros"`
}

// Wire figures: what the clients' sockets carried, below TLS.
type Wire struct {
	BytesSent     int64 `json:"bytesSent"`
	BytesReceived int64 `json:"bytesReceived"`
	// BytesPerMessage = WindowBytes / Received: the whole cost of moving one message of the
	// measured window (both directions, every socket, protocol and TLS overhead), with bytes and
	// messages from the same window: the warm-up's bytes are not divided by the window's
	// messages. Nil when the window never opened.
	BytesPerMessage *float64 `json:"bytesPerMessage"`
	// ConnectBytes is the mean bytes per client exchanged until its session was usable.
	ConnectBytes *float64 `json:"connectBytes"`
	// PublishBytesPerMessage is bytes written by publisher sockets from their first measured
	// message until the last one was acknowledged, per message sent: the steady-state cost on
	// the device's uplink.
	PublishBytesPerMessage *float64 `json:"publishBytesPerMessage"`
	SegmentsSent           *int64   `json:"segmentsSent"`
	SegmentsReceived       *int64   `json:"segmentsReceived"`
	Retransmits            *int64   `json:"retransmits"`
	DatagramsSent          *int64   `json:"datagramsSent"`
	DatagramsReceived      *int64   `json:"datagramsReceived"`
	// TLSHandshakes counts the clients' completed TLS handshakes over the whole run (QUIC's
	// included; every connection, reconnections too); TLSResumed those that resumed the same
	// client's earlier session (spec.tls.resumption); ZeroRTT those whose 0-RTT data the server
	// accepted (spec.quic.zeroRTT). Nil without TLS. docs/tls.md says when clients reconnect.
	TLSHandshakes *int64 `json:"tlsHandshakes,omitempty"`
	TLSResumed    *int64 `json:"tlsResumed,omitempty"`
	ZeroRTT       *int64 `json:"zeroRTT,omitempty"`

	// Raw sums the ratios are computed from, kept so that merging workers is exact.
	Connections         int64 `json:"connections"`
	ConnectBytesTotal   int64 `json:"connectBytesTotal"`
	PublishBytesTotal   int64 `json:"publishBytesTotal"`
	PublishMessageCount int64 `json:"publishMessageCount"`
	// WindowBytes is what every socket carried both ways from the measured window's start to
	// the end of the drain: BytesPerMessage's numerator, from the same window as Received.
	WindowBytes int64 `json:"windowBytes"`
	// BytesDuringWindow is what every socket carried both ways from the measured window's start
	// to its end: the per-second wire figure's numerator.
	BytesDuringWindow int64 `json:"bytesDuringWindow"`
}

// Resources used. CPU is counted over the measured window; RSS is the process's peak. Merged:
// the load generator's CPU summed over workers, RSS the largest worker's; the broker's and
// gateway's (which every worker reads) the largest reading. The broker's and gateway's are null
// where msgbench cannot read them: an external broker, a Strimzi Kafka, an in-process gateway
// (its CPU is the load generator's), several gateway replicas (docs/results.md).
type Resources struct {
	LoadgenCPUSeconds  float64 `json:"loadgenCPUSeconds"`
	LoadgenMaxRSSBytes int64   `json:"loadgenMaxRSSBytes"`
	// LoadgenBytesPerConnection is the Go memory (live heap and goroutine stacks, after a
	// garbage collection) each client a worker held costs: at the end with every client still
	// connected, less before the first connect, over the clients (merged: the largest worker's);
	// null for duty cycles, whose devices are not all connected at once.
	LoadgenBytesPerConnection *int64 `json:"loadgenBytesPerConnection,omitempty"`
	// LoadgenStallMicros is the longest the load generator's own process was late to wake up
	// during the window (a probe sleeping 10 ms at a time; merged: the largest worker's): the
	// machine's scheduling and Go's GC, never the broker's or the link's stall. The unsent
	// allowance covers it (plan.Plan.StallAllowance and the verdict).
	LoadgenStallMicros int64    `json:"loadgenStallMicros,omitempty"`
	BrokerCPUSeconds   *float64 `json:"brokerCPUSeconds"`
	BrokerMaxRSSBytes  *int64   `json:"brokerMaxRSSBytes"`
	GatewayCPUSeconds  *float64 `json:"gatewayCPUSeconds,omitempty"`
	GatewayMaxRSSBytes *int64   `json:"gatewayMaxRSSBytes,omitempty"`
}

// TimelinePoint counts one interval; T is the interval's end in seconds since the measured
// window began.
type TimelinePoint struct {
	T        float64 `json:"t"`
	Sent     int64   `json:"sent"`
	Received int64   `json:"received"`
	Errors   int64   `json:"errors"`
	// EndToEndMeanMicros is the mean end-to-end latency of the deliveries that arrived in this
	// interval (EndToEndCount of them; absent without any): the trend that tells a steady state
	// from a growing backlog.
	EndToEndMeanMicros float64 `json:"endToEndMeanMicros,omitempty"`
	EndToEndCount      int64   `json:"endToEndCount,omitempty"`
	// Network names the spec.network.timeline steps that took effect in this interval
	// ("outage"; several joined by "; "), empty otherwise.
	Network string `json:"network,omitempty"`
}

// WorkerSummary is one worker's share.
type WorkerSummary struct {
	Index    int   `json:"index"`
	Sent     int64 `json:"sent"`
	Received int64 `json:"received"`
	// StartSkewMicros is how far the worker's actual start was from the agreed start time.
	StartSkewMicros int64 `json:"startSkewMicros"`
	// ClockOffsetMicros is the worker's clock minus the coordinator's, estimated from one control
	// call whose round trip is ControlRTTMicros (the estimate is right to ±half of it); both 0
	// where the workers share the coordinator's clock.
	ClockOffsetMicros int64  `json:"clockOffsetMicros,omitempty"`
	ControlRTTMicros  int64  `json:"controlRTTMicros,omitempty"`
	Phase             string `json:"phase,omitempty"`
	Message           string `json:"message,omitempty"`
	// Groups are the device groups the worker ran, when a run's groups were spread over
	// several workers (each with its own clock; docs/fleets.md).
	Groups []string `json:"groups,omitempty"`
}

// Histogram names, the keys of Result.Histograms.
const (
	HistEndToEnd     = "endToEnd"
	HistPublishAck   = "publishAck"
	HistPublishDelay = "publishDelay"
	HistConnect      = "connect"
	HistFirstMessage = "firstMessage"
)

// HistogramNames lists every latency figure.
var HistogramNames = []string{HistEndToEnd, HistPublishAck, HistPublishDelay, HistConnect, HistFirstMessage}

// WriteFile writes r as indented JSON, creating the folder.
func (r *Result) WriteFile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(data, '\n'), 0o644) // never a truncated result
}

// ReadFile reads a result document.
func ReadFile(path string) (*Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Kind != Kind {
		return nil, fmt.Errorf("%s: kind %q, want %s", path, r.Kind, Kind)
	}
	return &r, nil
}

// Int64 returns a pointer to v.
func Int64(v int64) *int64 { return &v }

// Float64 returns a pointer to v.
func Float64(v float64) *float64 { return &v }

// ObjectiveResult is one objective judged on a result.
type ObjectiveResult struct {
	// Objective as written in spec.objectives.
	Objective string `json:"objective"`
	// Measured is the figure's value in the objective's unit, as text ("62.3ms"); absent when
	// the result has no such figure.
	Measured string `json:"measured,omitempty"`
	Met      bool   `json:"met"`
	// Reason says why it was not met.
	Reason string `json:"reason,omitempty"`
}

// MissedObjectives lists the objectives not met, "objective: reason", joined by "; ".
func MissedObjectives(outs []ObjectiveResult) string {
	var lines []string
	for _, o := range outs {
		if !o.Met {
			lines = append(lines, o.Objective+": "+o.Reason)
		}
	}
	return strings.Join(lines, "; ")
}
