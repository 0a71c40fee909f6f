package plan_test

import (
	"strings"
	"testing"

	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/plan"
)

func TestMatchTopic(t *testing.T) {
	for _, c := range []struct {
		filter, topic string
		want          bool
	}{
		{"devices/+/telemetry", "devices/s-1/telemetry", true},
		{"devices/+/telemetry", "devices/s-1/commands", false},
		{"devices/+/telemetry", "devices/a/b/telemetry", false},
		{"devices/#", "devices/a/b/telemetry", true},
		{"devices/#", "devices", true}, // # is the parent level too (MQTT 3.1.1 §4.7.1.2)
		{"devices/+", "devices", false},
		{"+/+", "a/b", true},
		{"+", "a/b", false},
		{"#", "a/b/c", true},
		{"#", "$SYS/load", false}, // $ topics are not matched by a leading wildcard
		{"$SYS/#", "$SYS/load", true},
		{"a/b", "a/b", true},
		{"a/b", "a/b/", false},
		{"a/+/", "a/x/", true},
	} {
		if got := plan.MatchTopic(c.filter, c.topic); got != c.want {
			t.Errorf("MatchTopic(%q, %q) = %v, want %v", c.filter, c.topic, got, c.want)
		}
	}
}

// The fan-in sample compiles to its two groups: 2,000 sensors, each publishing to its own
// topic, and a shared subscription of two consumers that takes the sensors' payload size.
func TestFleetCompiles(t *testing.T) {
	p, err := plan.Compile(read(t, "fleets/telemetry-fan-in.yaml"), plan.Local)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Groups) != 2 {
		t.Fatalf("%d groups", len(p.Groups))
	}
	s, b := p.Groups[0], p.Groups[1]
	if s.Name != "sensors" || s.Publishers != 2000 || s.Subscribers != 0 || s.Topics != 2000 || s.Load.Rate != 200 || s.PayloadBytes != 64 ||
		s.Fleet.PublisherBase != 0 || s.Fleet.Topics.Name != "telemetry" || s.Fleet.Topics.Devices != 0 || s.Interval().Seconds() != 10 {
		t.Errorf("sensors: %+v fleet %+v", s, s.Fleet)
	}
	if b.Name != "backend" || b.Publishers != 0 || b.Subscribers != 2 || b.Fleet.Filter != "devices/+/telemetry" || b.Fleet.Share != "backend" || b.PayloadBytes != 64 {
		t.Errorf("backend: %+v fleet %+v", b, b.Fleet)
	}
	if got := p.TopicName(s.Fleet.Topics, 7, "r1"); got != "devices/sensor-7/telemetry" {
		t.Errorf("topic 7: %q", got)
	}
	if sub, filter := p.Subscription(&b, 1, "r1"); sub != "$share/backend/devices/+/telemetry" || filter != "devices/+/telemetry" {
		t.Errorf("backend's subscription: %q, %q", sub, filter)
	}
	if p.OfferedPerSecond() != 200 || p.Publishers() != 2000 {
		t.Errorf("offered %v, publishers %d", p.OfferedPerSecond(), p.Publishers())
	}
	for _, target := range []plan.Target{plan.Kubernetes, plan.Admitted} {
		if _, err := plan.Compile(read(t, "fleets/telemetry-fan-in.yaml"), target); err != nil {
			t.Errorf("%s: %v", target, err)
		}
	}
}

// A publisher with more topics than its group has devices cycles over its own: publisher i of
// P takes topics i, i+P, …; with fewer topics, publisher i keeps to topic i mod count.
func TestPublisherTopics(t *testing.T) {
	p, err := plan.Compile(read(t, "fleets/telemetry-fan-in.yaml", "groups[sensors].count=3", "topics[telemetry].pattern=t/{device}"), plan.Local)
	if err != nil {
		t.Fatal(err)
	}
	g := p.Groups[0]
	g.Fleet = &plan.Fleet{Topics: &plan.TopicSet{Count: 8}}
	for i, want := range [][3]int{{0, 3, 8}, {1, 3, 8}, {2, 3, 8}} {
		first, step, n := g.PublisherTopics(i)
		if [3]int{first, step, n} != want {
			t.Errorf("publisher %d: %d, %d, %d", i, first, step, n)
		}
	}
	if g.TopicsOf(0) != 3 || g.TopicsOf(1) != 3 || g.TopicsOf(2) != 2 {
		t.Errorf("topics of each: %d %d %d", g.TopicsOf(0), g.TopicsOf(1), g.TopicsOf(2))
	}
	g.Fleet.Topics.Count = 2
	if first, step, _ := g.PublisherTopics(2); first != 0 || step != 0 || g.TopicsOf(2) != 1 {
		t.Errorf("2 topics, publisher 2: first %d step %d", first, step)
	}
}

// A bad group is refused before anything starts, naming the group and its field: by the CRD's
// rules (admission) or by the compile.
func TestBadGroupsAreRefusedNamingTheGroup(t *testing.T) {
	for _, c := range []struct {
		set  []string
		want string
	}{
		{[]string{"groups[sensors].publish.payloadBytes=8"}, "spec.groups[sensors].publish.payloadBytes: Invalid value: payloadBytes: at least 16"},
		{[]string{"groups[sensors].publish.messages=10"}, "spec.groups[sensors].publish.messages: Invalid value: publish.messages: fewer than the group's devices"},
		{[]string{"groups[backend].subscribe.filter=devices/#/telemetry"}, "spec.groups[backend].subscribe.filter"},
		{[]string{"groups[backend].subscribe.filter=devices/a+/telemetry"}, "must fill a whole level"},
		{[]string{"groups[sensors].publish.rate=100"}, "rate: set interval (each device's period) or rate"},
		{[]string{"groups[sensors].publish.topics=nothing"}, "spec.groups[sensors].publish.topics: no topic group of that name in spec.topics"},
		{[]string{"workload.publishers=4"}, "spec.workload: with spec.groups"},
		{[]string{"workers.replicas=2"}, "spec.workers.replicas: a run with spec.groups runs in one worker"},
		{[]string{"protocol=kafka"}, "spec.protocol: device groups speak mqtt, mqtt-sn or http"},
		{[]string{"groups[backend].protocol=mqtt-sn"}, "spec.groups[backend].protocol: a subscribing group speaks mqtt"},
		{[]string{"groups[sensors].protocol=http", "tls.enabled=true"}, "spec.tls.enabled: TLS with device groups on several protocols"},
		{[]string{"groups[sensors].protocol=mqtt-sn", "groups[sensors].mqttsn.topicIdType=predefined"}, "spec.groups[sensors].mqttsn.topicIdType"},
		{[]string{"groups[sensors].protocol=mqtt-sn", "groups[sensors].publish.payloadBytes=70000"}, "spec.groups[sensors].publish.payloadBytes"},
		{[]string{"groups[backend].qos=3"}, "spec.groups[backend].qos: Invalid value: 3"},
		{[]string{"topics[telemetry].devices=nobody"}, "spec.topics[telemetry].devices: no device group of that name in spec.groups"},
		{[]string{"groups[sensors].clientID=sensor"}, "clientID"},
		{[]string{"groups[sensor].count=5"}, `spec.groups has no item named "sensor" (it has sensors, backend)`},
	} {
		mb, err := manifest.ReadFile("../config/samples/fleets/telemetry-fan-in.yaml", c.set...)
		if err == nil {
			_, err = plan.Compile(&mb.Spec, plan.Local)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.set, err, c.want)
		}
	}
}
