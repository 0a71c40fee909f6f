package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/devicetls"
	sn "github.com/msgbench/msgbench/internal/mqttsn"
)

// Fleet is what a run with spec.groups adds to its groups: the topic groups and, per group,
// which topics it publishes to or which subscription it holds (docs/fleets.md). A flat spec's one
// group has none (Group.Fleet is nil).
type Fleet struct {
	// Index is the group's place in Plan.Groups.
	Index int
	// PublisherBase is the id of the group's publisher 0 among the run's publishers: the
	// publishers of the groups before it. A message's header carries base + index, so a
	// subscriber of any group knows whose message it is.
	PublisherBase int
	// ClientID is the pattern of its clients' ids ({run}, {group}, {index}).
	ClientID string
	// Topics is the topic group it publishes to, or subscribes to topic by topic (nil with a
	// filter).
	Topics *TopicSet
	// Filter is its subscription's topic filter (wildcards allowed), "" with Topics; Share the
	// shared subscription's name ("" for none).
	Filter, Share string
	// Start is when the group's clients connect, from the run's start (0: before it starts,
	// with a flat spec's clients).
	Start time.Duration
	// Retain: its publishers' messages are retained by the broker.
	Retain bool
	// ReplyTo, for a group whose messages are requests (publish.replyTo), is the topic group
	// its devices are answered on, one topic each (device i: topic i).
	ReplyTo *TopicSet
	// Respond: its subscribers answer the requests they get, with answers of AnswerBytes.
	Respond     bool
	AnswerBytes int
	// Placement, when set, runs the group on Kubernetes in worker pods of its own, scheduled
	// so (Plan.Placement).
	Placement *v1alpha1.GroupPlacement
}

// TopicSet is a topic group (spec.topics[]): topic i is Pattern with {index} replaced by i and
// {device} by the client id of device i of group Devices.
type TopicSet struct {
	Name    string
	Pattern string
	Count   int
	// Devices is the index in Plan.Groups of the group whose client ids fill {device}, -1 when
	// the pattern has none.
	Devices int
}

// HeaderBytes is the size of the header msgbench writes at the start of each payload
// (loadgen.HeaderSize): publisher id, sequence number, send time.
const HeaderBytes = 16

// DefaultClientID is a device's client id when its group names none: unique per run and group.
const DefaultClientID = "{run}-{group}-{index}"

// ClientID is the client id of the group's client i in run runID.
func (g *Group) ClientID(i int, runID string) string {
	return expandIdentity(g.Fleet.ClientID, i, g.Name, runID, "")
}

// TopicName is the name of topic i of topic set t in run runID.
func (p *Plan) TopicName(t *TopicSet, i int, runID string) string {
	name := strings.ReplaceAll(t.Pattern, "{index}", strconv.Itoa(i))
	if t.Devices >= 0 {
		name = strings.ReplaceAll(name, "{device}", p.Groups[t.Devices].ClientID(i, runID))
	}
	return name
}

// PublisherTopics says which topics of its topic group publisher i (of the group's
// publishers) sends to: topic first, then first+step, first+2·step, … below count, one message
// each in turn. A group with at least as many publishers as topics gives publisher i topic i mod
// count (step 0: always the same one).
func (g *Group) PublisherTopics(i int) (first, step, count int) {
	n, P := g.Fleet.Topics.Count, int(g.Publishers)
	if n <= P {
		return i % n, 0, n
	}
	return i, P, n
}

// TopicsOf is how many topics publisher i cycles over (1 when it keeps to one).
func (g *Group) TopicsOf(i int) int {
	first, step, n := g.PublisherTopics(i)
	if step == 0 {
		return 1
	}
	return (n - first + step - 1) / step
}

// Subscription is what subscriber i of the group subscribes to, as the broker is asked
// ($share/<name>/<filter> for a shared one), and the filter it matches topics with.
func (p *Plan) Subscription(g *Group, i int, runID string) (subscribe, filter string) {
	f := g.Fleet
	if f.Topics != nil {
		name := p.TopicName(f.Topics, i%f.Topics.Count, runID)
		return name, name
	}
	if f.Share != "" {
		return "$share/" + f.Share + "/" + f.Filter, f.Filter
	}
	return f.Filter, f.Filter
}

// MatchTopic reports whether an MQTT topic filter matches a topic name (MQTT 3.1.1 §4.7): +
// matches one level, # the parent level and every level below; a topic starting with $ is
// matched only by a filter that names its first level.
func MatchTopic(filter, topic string) bool {
	if strings.HasPrefix(topic, "$") && (strings.HasPrefix(filter, "+") || strings.HasPrefix(filter, "#")) {
		return false
	}
	for {
		f, frest, fmore := strings.Cut(filter, "/")
		if f == "#" {
			return true
		}
		t, trest, tmore := strings.Cut(topic, "/")
		if f != "+" && f != t {
			return false
		}
		if !fmore || !tmore {
			// "a/#" matches "a" too: the # stands for the parent level and below.
			return fmore == tmore || (!tmore && frest == "#")
		}
		filter, topic = frest, trest
	}
}

// checkFilter refuses a topic filter MQTT does not allow (MQTT 3.1.1 §4.7.1): # only alone and
// last, + only alone in its level.
func checkFilter(filter string) error {
	levels := strings.Split(filter, "/")
	for i, l := range levels {
		switch {
		case l == "#" && i != len(levels)-1:
			return fmt.Errorf("%q: # must be the filter's last level", filter)
		case l != "#" && strings.Contains(l, "#"), l != "+" && strings.Contains(l, "+"):
			return fmt.Errorf("%q: a wildcard (+, #) must fill a whole level", filter)
		}
	}
	if strings.HasPrefix(filter, "$share/") {
		return fmt.Errorf("%q: name the shared subscription with share, not in the filter", filter)
	}
	return nil
}

// compileFleet turns spec.groups and spec.topics into the plan's groups: each group compiles as
// a flat spec of its own (its view: the spec with the group's settings in the flat fields), so
// every rule of the one-group form holds for it, and its errors are renamed to name the group.
func compileFleet(spec *v1alpha1.MessagingBenchmarkSpec, p *Plan, target Target) error {
	index := map[string]int{}
	for i, g := range spec.Groups {
		index[g.Name] = i
	}
	sets := map[string]*TopicSet{}
	for _, t := range spec.Topics {
		ts := &TopicSet{Name: t.Name, Pattern: t.Pattern, Count: 1, Devices: -1}
		if t.Count != nil {
			ts.Count = int(*t.Count)
		}
		if t.Devices != "" {
			d, ok := index[t.Devices]
			if !ok {
				return fmt.Errorf("spec.topics[%s].devices: no group %q in spec.groups", t.Name, t.Devices)
			}
			ts.Devices, ts.Count = d, int(spec.Groups[d].Count)
		}
		sets[t.Name] = ts
	}
	p.Groups = p.Groups[:0]
	base := 0
	var idFields []string // where each group's client id pattern was written
	// The groups holding each shared subscription name: the first of two that share one is
	// refused (the CRD's rule names it so).
	shares := map[string][]string{}
	for _, g := range spec.Groups {
		if g.Subscribe != nil && g.Subscribe.Share != "" {
			shares[g.Subscribe.Share] = append(shares[g.Subscribe.Share], g.Name)
		}
	}
	for i := range spec.Groups {
		dg := &spec.Groups[i]
		view := GroupView(spec, dg)
		g := flatGroup(view)
		g.Name = dg.Name
		if err := compileOptions(view, &g); err != nil {
			return renameGroupErr(dg.Name, err)
		}
		if target != Admitted {
			if err := devicetls.Check(view, p.TLSPath(g)); err != nil {
				return renameGroupErr(dg.Name, err)
			}
		}
		field := "spec.groups[" + dg.Name + "]"
		f := &Fleet{Index: i, PublisherBase: base}
		idField, err := compileIdentity(spec, dg, &g, target)
		if err != nil {
			return err
		}
		idFields = append(idFields, idField)
		if g.Identity != nil {
			f.ClientID = g.Identity.ClientID
		}
		if dg.Start != nil {
			f.Start = dg.Start.Duration
		}
		if dg.Network != nil && len(dg.Network.Timeline) > 0 {
			return fmt.Errorf("%s.network.timeline: a group's own link has no timeline yet; use spec.network's (for every client)", field)
		}
		if dg.Network != nil && view.Impaired() {
			n, err := compileNetwork(view, target)
			if err != nil {
				return renameGroupErr(dg.Name, err)
			}
			g.Network = &n
		}
		if f.ClientID == "" {
			f.ClientID = DefaultClientID
		}
		f.Placement = dg.Placement
		switch {
		case dg.Publish != nil:
			ts, ok := sets[dg.Publish.Topics]
			if !ok {
				return fmt.Errorf("%s.publish.topics: no topic group %q in spec.topics", field, dg.Publish.Topics)
			}
			if dg.Publish.PayloadBytes < HeaderBytes {
				return fmt.Errorf("%s.publish.payloadBytes: %d; a device group's messages carry msgbench's %d-byte header, which tells a subscriber of any group whose message it is", field, dg.Publish.PayloadBytes, HeaderBytes)
			}
			if g.Protocol != v1alpha1.ProtocolMQTT && ts.Count > int(dg.Count) {
				return fmt.Errorf("%s.publish.topics: topic group %s has %d topics for %d devices, so each device would cycle over several, which only MQTT clients do; give the group a device per topic", field, ts.Name, ts.Count, dg.Count)
			}
			if g.MQTTSN != nil && g.MQTTSN.TopicIDType != sn.TopicNormal {
				return fmt.Errorf("%s.mqttsn.topicIdType: a device group's MQTT-SN devices register their topics by name (normal); predefined and short topic ids name a flat spec's numbered topics", field)
			}
			if dg.Publish.Retain && g.Protocol != v1alpha1.ProtocolMQTT {
				return fmt.Errorf("%s.publish.retain: retained messages are published by MQTT groups only", field)
			}
			pl, err := compilePayload(dg, &g, f.ClientID)
			if err != nil {
				return err
			}
			if g.Payload = pl; pl != nil {
				g.PayloadBytes = int32(pl.MaxBytes)
			}
			f.Topics = ts
			f.Retain = dg.Publish.Retain
			if rt := dg.Publish.ReplyTo; rt != "" {
				if f.ReplyTo, err = replyTopics(field, dg, &g, sets[rt], rt); err != nil {
					return err
				}
			}
			g.Topics = int32(ts.Count)
			base += int(g.Publishers)
			switch {
			case dg.Publish.Interval != nil:
				g.Load.Rate = float64(dg.Count) / dg.Publish.Interval.Seconds()
			case dg.Publish.Rate != nil:
				g.Load.Rate = float64(*dg.Publish.Rate)
			}
			if m := dg.Publish.Messages; m > 0 && m < int64(dg.Count) {
				return fmt.Errorf("%s.publish.messages: %d is fewer than the group's %d devices; each sends at least one", field, m, dg.Count)
			}
			if m := dg.Publish.Messages; m > 0 && inWarmup(dg, m, p.Timing.Warmup) {
				return fmt.Errorf("%s.publish.messages: %d messages at %.6g msg/s all go out during the %s warm-up: nothing would be measured", field, m, g.Load.Rate, p.Timing.Warmup)
			}
		case dg.Subscribe != nil:
			s := dg.Subscribe
			if g.Protocol != v1alpha1.ProtocolMQTT {
				return fmt.Errorf("%s.protocol: a subscribing group speaks mqtt (over tcp or websocket); devices on %s publish", field, g.Protocol)
			}
			if s.Topics != "" {
				ts, ok := sets[s.Topics]
				if !ok {
					return fmt.Errorf("%s.subscribe.topics: no topic group %q in spec.topics", field, s.Topics)
				}
				if ts.Count > int(dg.Count) {
					return fmt.Errorf("%s.subscribe.topics: topic group %s has %d topics for %d devices, and a device holds one subscription: subscribe with a filter, or give the group a device per topic", field, s.Topics, ts.Count, dg.Count)
				}
				f.Topics = ts
				g.Topics = int32(ts.Count)
			} else {
				if err := checkFilter(s.Filter); err != nil {
					return fmt.Errorf("%s.subscribe.filter: %w", field, err)
				}
				f.Filter, f.Share = s.Filter, s.Share
				g.Topics = 1
				if others := slices.DeleteFunc(slices.Clone(shares[s.Share]), func(n string) bool { return n == dg.Name }); s.Share != "" && len(others) > 0 {
					return fmt.Errorf("%s.subscribe.share: %q is group %s's shared subscription too; give each group its own", field, s.Share, strings.Join(others, ", "))
				}
			}
		}
		if dg.Subscribe != nil && dg.Subscribe.Respond != nil {
			if g.MQTT == nil || g.MQTT.Version != v1alpha1.MQTT5 {
				return fmt.Errorf("%s.subscribe.respond: answering requests takes MQTT 5 (Response Topic and Correlation Data are MQTT 5 properties); set mqtt.version: \"5\"", field)
			}
			f.Respond, f.AnswerBytes = true, int(dg.Subscribe.Respond.PayloadBytes)
		}
		g.Fleet = f
		p.Groups = append(p.Groups, g)
	}
	if base == 0 {
		return fmt.Errorf("spec.groups: no group publishes (each one subscribes), so the run would measure nothing; give at least one group publish")
	}
	if target != Admitted && len(p.Groups) > 1 {
		if err := checkUniqueIDs(p, idFields); err != nil {
			return err
		}
	}
	// A subscriber takes the largest message any group publishes (an MQTT 5 client announces
	// its maximum packet size from it).
	var largest int32
	for _, g := range p.Groups {
		if g.Publishers > 0 {
			largest = max(largest, g.PayloadBytes)
		}
	}
	for i := range p.Groups {
		if p.Groups[i].Publishers == 0 {
			p.Groups[i].PayloadBytes = largest
		}
	}
	// The run ends after its messages when every publishing group has a message count; a group
	// with one in a run of a duration stops after its messages (a broadcast).
	quota := true
	for _, g := range p.Groups {
		if g.Publishers > 0 && g.Load.Messages == 0 {
			quota = false
		}
	}
	if quota {
		// The run ends once the messages were sent and delivered and its late groups joined.
		p.Timing.Duration = 0
		return nil
	}
	// Otherwise a group joins before the run's end.
	for _, g := range p.Groups {
		if end := p.Timing.Warmup + p.Timing.Duration; g.Fleet.Start >= end {
			return fmt.Errorf("spec.groups[%s].start: %s is not before the run's end (warmup + duration, %s)", g.Name, g.Fleet.Start, end)
		}
	}
	return nil
}

// inWarmup reports whether a publishing group's m messages all go out during the warm-up, at its
// interval (count / interval) or rate: m ≤ rate × warmup. In whole milliseconds, as the CRD's rule
// computes it (CEL's durations give milliseconds), so that both draw the line at the same place.
func inWarmup(dg *v1alpha1.DeviceGroupSpec, m int64, warmup time.Duration) bool {
	w := float64(warmup.Milliseconds())
	switch pub := dg.Publish; {
	case pub.Interval != nil:
		return float64(m)*float64(pub.Interval.Milliseconds()) <= float64(dg.Count)*w
	case pub.Rate != nil:
		return float64(m)*1000 <= float64(*pub.Rate)*w
	}
	return false
}

// GroupView is the flat spec a device group amounts to: the spec with the group's QoS, MQTT
// settings, clients and load in the flat fields. Compile checks it with the one-group form's
// rules; admission (internal/manifest) checks it against the CRD's.
func GroupView(spec *v1alpha1.MessagingBenchmarkSpec, dg *v1alpha1.DeviceGroupSpec) *v1alpha1.MessagingBenchmarkSpec {
	v := spec.DeepCopy()
	v.Groups, v.Topics = nil, nil
	if dg.QoS != nil {
		v.QoS = *dg.QoS
	}
	if dg.Protocol != "" {
		v.Protocol = dg.Protocol
	}
	if dg.MQTTSN != nil {
		v.MQTTSN = *dg.MQTTSN
	}
	if dg.Network != nil {
		v.Network = *dg.Network
	}
	if dg.HTTP != nil {
		v.HTTP = *dg.HTTP
	}
	if m := dg.MQTT; m != nil {
		if m.Transport != "" {
			v.MQTT.Transport = m.Transport
		}
		if m.Version != "" {
			v.MQTT.Version = m.Version
		}
		if m.CleanSession != nil {
			v.MQTT.CleanSession = m.CleanSession
		}
		if m.KeepAliveSeconds != nil {
			v.MQTT.KeepAliveSeconds = m.KeepAliveSeconds
		}
		if m.Inflight != nil {
			v.MQTT.Inflight = *m.Inflight
		}
	}
	w := &v.Workload
	w.Publishers, w.Subscribers, w.Topics, w.Rate, w.Messages = 0, 0, 1, 0, 0
	if pub := dg.Publish; pub != nil {
		w.Publishers, w.PayloadBytes, w.Messages = dg.Count, pub.PayloadBytes, pub.Messages
	}
	if dg.Subscribe != nil {
		w.Subscribers = dg.Count
	}
	return v
}

// groupFields renames a flat spec's field, as a group view's error names it, to the group's own.
var groupFields = []struct{ flat, group string }{
	{"spec.workload.payloadBytes", "publish.payloadBytes"},
	{"spec.workload.messages", "publish.messages"},
	{"spec.workload.publishers", "count"},
	{"spec.workload.subscribers", "count"},
	{"spec.qos", "qos"},
	{"spec.mqtt.", "mqtt."},
	{"spec.network", "network"},
}

// InGroup names g's own field in err, an error about the flat field a one-group spec would have
// (spec.qos, spec.mqtt.version …), when g is a device group; err as it is otherwise.
func InGroup(g *Group, err error) error {
	if err == nil || g.Fleet == nil {
		return err
	}
	return renameGroupErr(g.Name, err)
}

// renameGroupErr names group name's own field in an error its view gave.
func renameGroupErr(name string, err error) error {
	msg := err.Error()
	for _, f := range groupFields {
		if strings.HasPrefix(msg, f.flat) {
			return fmt.Errorf("spec.groups[%s].%s%s", name, f.group, msg[len(f.flat):])
		}
	}
	return fmt.Errorf("spec.groups[%s]: %w", name, err)
}

// Interval is a publishing group's period between one device's messages (0: closed loop).
func (g *Group) Interval() time.Duration {
	if g.Load.Rate <= 0 || g.Publishers == 0 {
		return 0
	}
	return time.Duration(float64(g.Publishers) / g.Load.Rate * float64(time.Second))
}

// checkFleetForm holds, for a spec built in Go (which skips admission), what the CRD's rules
// require of a spec with groups: the one-group form's client fields left out, and what device
// groups do not do yet.
func checkFleetForm(spec *v1alpha1.MessagingBenchmarkSpec) error {
	w := &spec.Workload
	switch {
	case w.Publishers != 1 || w.Subscribers != 1 || w.Topics != 1 || w.PayloadBytes != 256 || w.Rate != 0 || w.Messages != 0:
		return fmt.Errorf("spec.workload: with spec.groups, the clients, their topics, payload and load are each group's (groups[].count, publish, subscribe); leave workload's publishers, subscribers, topics, payloadBytes, rate and messages out (workload keeps the run's warmup, duration and timelineInterval)")
	case w.DutyCycle != nil || w.ReconnectStorm != nil:
		return fmt.Errorf("spec.workload: duty cycles and reconnect storms apply to the one-group form only; a run with spec.groups has none of them yet")
	case !slices.Contains([]v1alpha1.Protocol{v1alpha1.ProtocolMQTT, v1alpha1.ProtocolMQTTSN, v1alpha1.ProtocolHTTP}, spec.Protocol) || spec.Broker.Type == v1alpha1.BrokerKafka:
		return fmt.Errorf("spec.protocol: device groups speak mqtt, mqtt-sn or http to an MQTT broker (docs/fleets.md)")
	case spec.TLSEnabled() && slices.ContainsFunc(spec.Groups, func(g v1alpha1.DeviceGroupSpec) bool { return g.Protocol != "" && g.Protocol != spec.Protocol }):
		return fmt.Errorf("spec.tls.enabled: TLS with device groups on several protocols is not supported yet (each group's own TLS comes with its own gateway's certificate); use one protocol, or no TLS")
	case spec.Impaired() && slices.ContainsFunc(spec.Groups, func(g v1alpha1.DeviceGroupSpec) bool { return g.Network != nil }):
		return fmt.Errorf("spec.network: groups with a network of their own (spec.groups[].network) sit behind their own links; the others reach the broker directly, so leave spec.network out")
	case spec.Workers.Replicas > 1:
		return fmt.Errorf("spec.workers.replicas: a run with spec.groups runs in one worker for now (a topic's publisher and subscriber in two workers need the workers' clock offset, which msgbench does not measure yet)")
	}
	return nil
}

// replyTopics checks a requesting group's publish.replyTo: MQTT 5, and a topic per device, so
// that each device gets only its own answers.
func replyTopics(field string, dg *v1alpha1.DeviceGroupSpec, g *Group, ts *TopicSet, name string) (*TopicSet, error) {
	switch {
	case ts == nil:
		return nil, fmt.Errorf("%s.publish.replyTo: no topic group %q in spec.topics", field, name)
	case g.Protocol != v1alpha1.ProtocolMQTT || g.MQTT == nil || g.MQTT.Version != v1alpha1.MQTT5:
		return nil, fmt.Errorf("%s.publish.replyTo: requests take MQTT 5 (Response Topic and Correlation Data are MQTT 5 properties); set protocol mqtt and mqtt.version: \"5\"", field)
	case ts.Count != int(dg.Count):
		return nil, fmt.Errorf("%s.publish.replyTo: topic group %s has %d topics for the group's %d devices; each device is answered on its own (devices: %s)", field, name, ts.Count, dg.Count, dg.Name)
	case dg.Publish.Retain:
		return nil, fmt.Errorf("%s.publish.retain: a request is not retained", field)
	}
	return ts, nil
}
