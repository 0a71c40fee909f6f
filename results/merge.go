package results

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// keepHistogram stores h encoded in r.Histograms under name and returns its summary (nil, and
// nothing stored, when h is empty).
func (r *Result) keepHistogram(name string, h *hdrhistogram.Histogram) (*LatencySummary, error) {
	s := Summarize(h)
	if s == nil {
		return nil, nil
	}
	enc, err := EncodeHistogram(h)
	if err != nil {
		return nil, err
	}
	r.Histograms[name] = enc
	return s, nil
}

// Finalize derives every computed figure from r's raw counts and the given histograms: latency
// summaries and encodings, throughput, wire ratios. Workers call it on their own result; Merge
// calls it on the merged one, so both follow one definition.
func (r *Result) Finalize(hists map[string]*hdrhistogram.Histogram) error {
	r.APIVersion, r.Kind = APIVersion, Kind
	r.Histograms = map[string]string{}
	r.Latency = Latencies{}
	for _, name := range HistogramNames {
		s, err := r.keepHistogram(name, hists[name])
		if err != nil {
			return err
		}
		if s == nil {
			continue
		}
		switch name {
		case HistEndToEnd:
			r.Latency.EndToEnd = s
		case HistPublishAck:
			r.Latency.PublishAck = s
		case HistPublishDelay:
			r.Latency.PublishDelay = s
		case HistConnect:
			r.Latency.Connect = s
		case HistFirstMessage:
			r.Latency.FirstMessage = s
		}
	}
	if err := r.finalizeChurn(hists); err != nil {
		return err
	}
	var payload float64
	r.Throughput = Throughput{}
	if p, err := r.Plan(); err == nil && p != nil {
		payload = float64(p.Groups[0].PayloadBytes)
		r.Throughput.OfferedPerSecond = p.OfferedPerSecond()
	}
	if r.MeasuredSeconds > 0 {
		r.Throughput.SentPerSecond = float64(r.Sent) / r.MeasuredSeconds
		// What crossed in the window, not the window's messages delivered in the drain after it:
		// a rate divides counts and a window that belong together.
		r.Throughput.ReceivedPerSecond = float64(r.ReceivedInWindow) / r.MeasuredSeconds
		r.Throughput.SentBytesPerSecond = float64(r.Sent) * payload / r.MeasuredSeconds
		r.Throughput.ReceivedBytesPerSecond = float64(r.ReceivedInWindow) * payload / r.MeasuredSeconds
		if len(r.Groups) > 0 { // the groups' payloads differ: each group's own bytes
			r.Throughput.SentBytesPerSecond, r.Throughput.ReceivedBytesPerSecond = 0, 0
			for _, g := range r.Groups {
				r.Throughput.SentBytesPerSecond += g.Throughput.SentBytesPerSecond
				r.Throughput.ReceivedBytesPerSecond += g.Throughput.ReceivedBytesPerSecond
			}
		}
	}
	w := &r.Wire
	w.BytesPerMessage, w.ConnectBytes, w.PublishBytesPerMessage = nil, nil, nil
	if r.Received > 0 && w.WindowBytes > 0 {
		w.BytesPerMessage = Float64(float64(w.WindowBytes) / float64(r.Received))
	}
	if w.Connections > 0 {
		w.ConnectBytes = Float64(float64(w.ConnectBytesTotal) / float64(w.Connections))
	}
	if w.PublishMessageCount > 0 {
		w.PublishBytesPerMessage = Float64(float64(w.PublishBytesTotal) / float64(w.PublishMessageCount))
	}
	return nil
}

// Merge combines the results of a run's workers exactly: counts and raw wire sums are added,
// histograms merged (so percentiles equal those of one histogram fed every sample), timelines
// aligned by interval, then every derived figure is computed once more by Finalize.
func Merge(parts []*Result) (*Result, error) {
	if len(parts) == 0 {
		return nil, errors.New("merge: no worker results")
	}
	first := parts[0]
	m := &Result{
		Name:        first.Name,
		Spec:        first.Spec,
		Environment: mergeEnvironment(parts),
		Network:     first.Network,
		Phase:       "Succeeded",
		StartTime:   first.StartTime,
		EndTime:     first.EndTime,
	}
	if len(parts) == 1 {
		m.Groups, m.Pairs = slices.Clone(first.Groups), first.Pairs
	}
	hists := map[string]*hdrhistogram.Histogram{}
	var messages []string
	dupKnown, oooKnown := true, true
	var lost, dups, ooo int64
	timeline := map[int]*TimelinePoint{}
	for i, p := range parts {
		if p.Name != first.Name {
			return nil, fmt.Errorf("merge: part %d is of benchmark %q, not %q", i, p.Name, first.Name)
		}
		if p.Phase == "Failed" {
			m.Phase = "Failed"
		}
		if p.Message != "" {
			messages = append(messages, p.Message)
		}
		if p.StartTime.Before(m.StartTime) {
			m.StartTime = p.StartTime
		}
		if p.EndTime.After(m.EndTime) {
			m.EndTime = p.EndTime
		}
		m.MeasuredSeconds = max(m.MeasuredSeconds, p.MeasuredSeconds)
		m.Sent += p.Sent
		m.Acked += p.Acked
		m.Received += p.Received
		m.ReceivedInWindow += p.ReceivedInWindow
		m.ReceivedAfterWindow += p.ReceivedAfterWindow
		m.Expected += p.Expected
		m.Errors += p.Errors
		m.Unsent += p.Unsent
		for _, c := range p.Caveats {
			m.AddCaveat(c)
		}
		if p.Lost != nil {
			lost += *p.Lost
		}
		if p.Duplicates == nil {
			dupKnown = false
		} else {
			dups += *p.Duplicates
		}
		if p.OutOfOrder == nil {
			oooKnown = false
		} else {
			ooo += *p.OutOfOrder
		}
		mergeWire(&m.Wire, &p.Wire)
		m.Resources.LoadgenCPUSeconds += p.Resources.LoadgenCPUSeconds
		m.Resources.LoadgenStallMicros = max(m.Resources.LoadgenStallMicros, p.Resources.LoadgenStallMicros)
		m.Resources.LoadgenMaxRSSBytes = max(m.Resources.LoadgenMaxRSSBytes, p.Resources.LoadgenMaxRSSBytes)
		if p.Resources.LoadgenBytesPerConnection != nil {
			m.Resources.LoadgenBytesPerConnection = Int64(max(derefInt(m.Resources.LoadgenBytesPerConnection), *p.Resources.LoadgenBytesPerConnection))
		}
		if p.Resources.BrokerCPUSeconds != nil {
			m.Resources.BrokerCPUSeconds = Float64(max(deref(m.Resources.BrokerCPUSeconds), *p.Resources.BrokerCPUSeconds))
		}
		if p.Resources.BrokerMaxRSSBytes != nil {
			m.Resources.BrokerMaxRSSBytes = Int64(max(derefInt(m.Resources.BrokerMaxRSSBytes), *p.Resources.BrokerMaxRSSBytes))
		}
		if p.Resources.GatewayCPUSeconds != nil {
			m.Resources.GatewayCPUSeconds = Float64(max(deref(m.Resources.GatewayCPUSeconds), *p.Resources.GatewayCPUSeconds))
		}
		if p.Resources.GatewayMaxRSSBytes != nil {
			m.Resources.GatewayMaxRSSBytes = Int64(max(derefInt(m.Resources.GatewayMaxRSSBytes), *p.Resources.GatewayMaxRSSBytes))
		}
		for j, tp := range p.Timeline {
			agg := timeline[j]
			if agg == nil {
				agg = &TimelinePoint{T: tp.T}
				timeline[j] = agg
			}
			agg.Sent += tp.Sent
			agg.Received += tp.Received
			agg.Errors += tp.Errors
			if n := agg.EndToEndCount + tp.EndToEndCount; n > 0 {
				agg.EndToEndMeanMicros = (agg.EndToEndMeanMicros*float64(agg.EndToEndCount) + tp.EndToEndMeanMicros*float64(tp.EndToEndCount)) / float64(n)
				agg.EndToEndCount = n
			}
		}
		m.Workers = append(m.Workers, p.Workers...)
		ph, err := p.DecodeHistograms()
		if err != nil {
			return nil, fmt.Errorf("merge: worker part %d: %w", i, err)
		}
		for name, h := range ph {
			if hists[name] == nil {
				hists[name] = NewHistogram()
			}
			if dropped := hists[name].Merge(h); dropped > 0 {
				return nil, fmt.Errorf("merge: histogram %s dropped %d samples", name, dropped)
			}
		}
	}
	m.Lost = Int64(lost)
	if len(parts) > 1 {
		var err error
		if m.Groups, m.Pairs, err = mergeGroups(parts); err != nil {
			return nil, err
		}
		var mixed []string
		for _, pr := range m.Pairs {
			if pr.Clock != nil && pr.Clock.Uncorrected {
				mixed = append(mixed, pr.From+" → "+pr.To)
			}
		}
		if len(mixed) > 0 {
			m.AddCaveat(Caveat{Type: CaveatClocksUncorrected, Message: fmt.Sprintf("the end-to-end latencies of %s mix two workers' clocks: their offsets were not measured (a coordinator's start gives them; docs/measurement.md)", strings.Join(mixed, ", "))})
		}
		if m.Pairs != nil {
			// Each worker counted what its publishers sent (Expected) and what its subscribers
			// got (the pairs' Received): the run lost what the sum of one is short of the other.
			var got int64
			for _, pr := range m.Pairs {
				got += pr.Received
			}
			m.Lost = Int64(max(0, m.Expected-got))
		}
	}
	if dupKnown {
		m.Duplicates = Int64(dups)
	}
	if oooKnown {
		m.OutOfOrder = Int64(ooo)
	}
	m.Message = strings.Join(messages, "; ")
	m.Churn = mergeChurn(parts)
	m.ConnectRamp = mergeConnectRamps(parts)
	idx := make([]int, 0, len(timeline))
	for j := range timeline {
		idx = append(idx, j)
	}
	sort.Ints(idx)
	for _, j := range idx {
		m.Timeline = append(m.Timeline, *timeline[j])
	}
	if marks := mergeNetworkTimelines(parts); marks != nil {
		m.SetNetworkTimeline(marks)
	}
	sort.Slice(m.Workers, func(a, b int) bool { return m.Workers[a].Index < m.Workers[b].Index })
	m.WorkersStart = StartSpreadOf(m.Workers)
	m.mergeEnergySections(parts)
	if err := m.Finalize(hists); err != nil {
		return nil, err
	}
	Judge(m).Apply(m)
	return m, nil
}

// mergeNetworkTimelines joins the parts' network.timeline: one mark per step (by planned time
// and description), at the latest time any part saw it take effect — a step has taken effect
// for the run once it has for every part. Nil when no part has one.
func mergeNetworkTimelines(parts []*Result) []NetworkStepMark {
	var out []NetworkStepMark
	seen := map[string]int{}
	for _, p := range parts {
		for _, mk := range p.NetworkTimeline() {
			key := fmt.Sprintf("%g|%s", mk.Planned, mk.Description)
			if i, ok := seen[key]; ok {
				out[i].At = max(out[i].At, mk.At)
				continue
			}
			seen[key] = len(out)
			out = append(out, mk)
		}
	}
	return out
}

func mergeWire(dst, src *Wire) {
	dst.BytesSent += src.BytesSent
	dst.BytesReceived += src.BytesReceived
	dst.Connections += src.Connections
	dst.ConnectBytesTotal += src.ConnectBytesTotal
	dst.PublishBytesTotal += src.PublishBytesTotal
	dst.PublishMessageCount += src.PublishMessageCount
	dst.WindowBytes += src.WindowBytes
	dst.BytesDuringWindow += src.BytesDuringWindow
	addPtr(&dst.SegmentsSent, src.SegmentsSent)
	addPtr(&dst.SegmentsReceived, src.SegmentsReceived)
	addPtr(&dst.Retransmits, src.Retransmits)
	addPtr(&dst.DatagramsSent, src.DatagramsSent)
	addPtr(&dst.DatagramsReceived, src.DatagramsReceived)
	addPtr(&dst.TLSHandshakes, src.TLSHandshakes)
	addPtr(&dst.TLSResumed, src.TLSResumed)
	addPtr(&dst.ZeroRTT, src.ZeroRTT)
}

func addPtr(dst **int64, src *int64) {
	if src == nil {
		return
	}
	if *dst == nil {
		*dst = Int64(0)
	}
	**dst += *src
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func derefInt(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// mergeEnergySections sets the merged result's energy: the run's over every worker's devices,
// each group's from the worker that ran it, with the merged counts' messages.
func (r *Result) mergeEnergySections(parts []*Result) {
	run := make([]*Energy, len(parts))
	for i, p := range parts {
		run[i] = p.Energy
	}
	r.Energy = mergeEnergy(run, r.EnergyMessages(""))
	for i := range r.Groups {
		if g := &r.Groups[i]; g.Energy != nil {
			g.Energy = mergeEnergy([]*Energy{g.Energy}, r.EnergyMessages(g.Name))
		}
	}
}
