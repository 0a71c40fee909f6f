package loadgen_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/loadgen"
)

func dur(d time.Duration) metav1.Duration { return metav1.Duration{Duration: d} }

// 20 publisher devices wake once a second for 2 s (no warm-up), 2 messages a wake, QoS 1: each
// wakes exactly twice in the window, so 40 connects, 40 clean disconnects, 80 messages, all
// acknowledged and delivered to the one subscriber that stays. (It ran 4 s, 80 wakes: the counts'
// exactness does not depend on the length; TestChurnSchedule checks the wake count's arithmetic.)
func TestDutyCycleExactCounts(t *testing.T) {
	t.Parallel() // its own broker
	b := startMosquitto(t, "")
	spec := baseSpec()
	spec.Workload.Publishers, spec.Workload.Subscribers, spec.Workload.Topics = 20, 1, 1
	spec.Workload.Warmup, spec.Workload.Duration = dur(0), dur(2*time.Second)
	spec.Workload.DutyCycle = &v1alpha1.DutyCycleSpec{Period: dur(time.Second), MessagesPerWake: 2}
	res := run(t, spec, loadgen.Options{Address: b.Addr})
	c := res.Churn
	if c == nil {
		t.Fatal("no churn section")
	}
	t.Logf("churn %+v; sent %d acked %d received %d expected %d lost %d", *c, res.Sent, res.Acked, res.Received, res.Expected, *res.Lost)
	if c.ExpectedWakes != 40 || c.Wakes != 40 || c.ExpectedMessages != 80 {
		t.Errorf("wakes %d of %d expected, %d messages expected; want 40 of 40, 80", c.Wakes, c.ExpectedWakes, c.ExpectedMessages)
	}
	if c.ExpectedConnects == nil || *c.ExpectedConnects != 41 || c.Connects != 41 { // 40 wakes + the subscriber
		t.Errorf("connects %d of %v; want 41 of 41", c.Connects, c.ExpectedConnects)
	}
	if c.Disconnects != 40 {
		t.Errorf("disconnects %d, want 40", c.Disconnects)
	}
	if res.Sent != 80 || res.Acked != 80 || res.Expected != 80 || res.Received != 80 || *res.Lost != 0 || *res.Duplicates != 0 {
		t.Errorf("sent %d acked %d expected %d received %d lost %d dups %d; want 80 each, none lost", res.Sent, res.Acked, res.Expected, res.Received, *res.Lost, *res.Duplicates)
	}
	if res.Wire.Connections != 41 {
		t.Errorf("wire connections %d, want 41 (every wake's)", res.Wire.Connections)
	}
}

// Sleeping subscribers with persistent sessions get every message the broker queued while they
// slept: deliveries equal what was published, and part of them come from the queue with the
// sleep in their latency.
func TestSleepingSubscribersGetQueuedMessages(t *testing.T) {
	t.Parallel() // its own broker
	b := startMosquitto(t, "")
	spec := baseSpec()
	off := false
	spec.MQTT.CleanSession = &off
	spec.Workload.Publishers, spec.Workload.Subscribers, spec.Workload.Topics = 4, 4, 1
	spec.Workload.Warmup, spec.Workload.Duration = dur(0), dur(2*time.Second)
	spec.Workload.DutyCycle = &v1alpha1.DutyCycleSpec{Period: dur(time.Second), MessagesPerWake: 1, Subscribers: true, Awake: &metav1.Duration{Duration: 200 * time.Millisecond}}
	res := run(t, spec, loadgen.Options{Address: b.Addr})
	c := res.Churn
	t.Logf("churn %+v; sent %d received %d expected %d lost %d", *c, res.Sent, res.Received, res.Expected, *res.Lost)
	if res.Sent != 8 || res.Expected != 32 || res.Received != 32 || *res.Lost != 0 {
		t.Errorf("sent %d expected %d received %d lost %d; want 8 sent, 32 delivered, none lost", res.Sent, res.Expected, res.Received, *res.Lost)
	}
	if c.SubscriberWakes != c.ExpectedSubscriberWakes || c.ExpectedSubscriberWakes != 8 {
		t.Errorf("subscriber wakes %d of %d, want 8 of 8", c.SubscriberWakes, c.ExpectedSubscriberWakes)
	}
	if c.Connects != *c.ExpectedConnects {
		t.Errorf("connects %d of %d expected", c.Connects, *c.ExpectedConnects)
	}
	if c.QueuedDeliveries == 0 || c.QueuedDeliveries == res.Received || c.QueuedEndToEnd == nil || c.QueuedEndToEnd.MaxMicros < 100_000 {
		t.Errorf("queued deliveries %d of %d (%+v): want some, not all, with the sleep in their latency", c.QueuedDeliveries, res.Received, c.QueuedEndToEnd)
	}
}

// A reconnect storm drops every client at 1 s; all come back, recovery is measured, and with
// persistent sessions at QoS 1 nothing is lost: what was in flight is resent.
func TestReconnectStormAllBack(t *testing.T) {
	t.Parallel() // its own broker
	b := startMosquitto(t, "")
	spec := baseSpec()
	off := false
	spec.MQTT.CleanSession = &off
	spec.Workload.Publishers, spec.Workload.Subscribers, spec.Workload.Topics = 10, 10, 2
	spec.Workload.Rate = 500
	spec.Workload.Warmup, spec.Workload.Duration = dur(500*time.Millisecond), dur(2*time.Second)
	spec.Workload.ReconnectStorm = &v1alpha1.ReconnectStormSpec{At: dur(time.Second)}
	res := run(t, spec, loadgen.Options{Address: b.Addr})
	c := res.Churn
	if c == nil || c.Storm == nil {
		t.Fatal("no storm figures")
	}
	s := c.Storm
	t.Logf("churn %+v storm %+v reconnect %+v; sent %d acked %d received %d expected %d lost %d dups %d", *c, *s, s.Reconnect, res.Sent, res.Acked, res.Received, res.Expected, *res.Lost, *res.Duplicates)
	if s.Dropped != 20 || s.Reconnected != 20 || s.NotBack != 0 {
		t.Errorf("dropped %d reconnected %d not back %d; want 20, 20, 0", s.Dropped, s.Reconnected, s.NotBack)
	}
	if s.RecoverySeconds <= 0 || s.ReconnectsPerSecond <= 0 || s.Reconnect == nil || s.Reconnect.Count != 20 {
		t.Errorf("recovery %v s, %v/s, reconnect latency %+v: want all measured", s.RecoverySeconds, s.ReconnectsPerSecond, s.Reconnect)
	}
	if c.Connects != 40 || *c.ExpectedConnects != 40 {
		t.Errorf("connects %d of %d, want 40 of 40", c.Connects, *c.ExpectedConnects)
	}
	if *res.Lost != 0 || res.Expected != 5*res.Sent || res.Acked != res.Sent || s.Resent != s.InFlightAtDrop { // 5 subscribers a topic
		t.Errorf("lost %d, expected %d sent %d acked %d, resent %d of %d in flight: want nothing lost", *res.Lost, res.Expected, res.Sent, res.Acked, s.Resent, s.InFlightAtDrop)
	}
	if want := int64(500 * 2); res.Sent != want {
		t.Errorf("sent %d, want %d (the open-loop schedule goes on after the reconnect)", res.Sent, want)
	}
}

// A storm after every publisher's last publish (1 msg/s each, the last at 1 s and 1.5 s, the
// drop at 1.7 s): the drain takes the new sessions, and nothing fails or is lost.
func TestReconnectStormAfterTheLastPublish(t *testing.T) {
	t.Parallel() // its own broker
	b := startMosquitto(t, "")
	spec := baseSpec()
	off := false
	spec.MQTT.CleanSession = &off
	spec.Workload.Rate = 2
	spec.Workload.Warmup, spec.Workload.Duration = dur(0), dur(2*time.Second)
	spec.Workload.ReconnectStorm = &v1alpha1.ReconnectStormSpec{At: dur(1700 * time.Millisecond)}
	res := run(t, spec, loadgen.Options{Address: b.Addr})
	s := res.Churn.Storm
	if s.Dropped != 4 || s.Reconnected != 4 || res.Errors != 0 || res.Message != "" || *res.Lost != 0 || res.Sent != 4 || res.Acked != 4 {
		t.Errorf("storm %+v; sent %d acked %d lost %d errors %d (%s): want all 4 back, 4 sent and acknowledged", *s, res.Sent, res.Acked, *res.Lost, res.Errors, res.Message)
	}
}

// In a closed loop at QoS 1 every publisher has its inflight window full when the storm drops
// it: those publishes are resent on the new session, and nothing is lost (a resent message the
// broker had already taken is a duplicate, counted). The subscribers are dropped too: the broker
// resends each one's unacknowledged deliveries on its persistent session (at most Mosquitto's
// max_inflight_messages, 20, each), whose PUBACK the drop may have cut after the client counted
// them, so those are duplicates as well.
func TestReconnectStormResendsWhatWasInFlight(t *testing.T) {
	t.Parallel() // its own broker
	b := startMosquitto(t, "")
	spec := baseSpec()
	off := false
	spec.MQTT.CleanSession = &off
	spec.Workload.Publishers, spec.Workload.Subscribers, spec.Workload.Topics = 4, 4, 4
	spec.Workload.Warmup, spec.Workload.Duration = dur(200*time.Millisecond), dur(1200*time.Millisecond)
	spec.Workload.ReconnectStorm = &v1alpha1.ReconnectStormSpec{At: dur(700 * time.Millisecond)}
	res := run(t, spec, loadgen.Options{Address: b.Addr})
	s := res.Churn.Storm
	t.Logf("storm %+v; sent %d acked %d received %d lost %d dups %d", *s, res.Sent, res.Acked, res.Received, *res.Lost, *res.Duplicates)
	if s.InFlightAtDrop == 0 || s.Resent != s.InFlightAtDrop || s.Reconnected != 8 {
		t.Errorf("in flight %d, resent %d, reconnected %d: want the full windows resent, all 8 back", s.InFlightAtDrop, s.Resent, s.Reconnected)
	}
	const brokerInflight = 20 // mosquitto's max_inflight_messages default
	if redelivered := int64(spec.Workload.Subscribers * brokerInflight); *res.Lost != 0 || res.Acked != res.Sent || res.Received != res.Sent+*res.Duplicates || *res.Duplicates > s.Resent+redelivered {
		t.Errorf("sent %d acked %d received %d lost %d duplicates %d (resent %d, at most %d redelivered): want nothing lost, duplicates only of resent or redelivered messages",
			res.Sent, res.Acked, res.Received, *res.Lost, *res.Duplicates, s.Resent, redelivered)
	}
}

// With clean sessions (the default) the broker discards what is published to a subscriber until
// it has subscribed again: the storm runs, every client comes back, and whatever was lost is
// counted as lost at the drop, the run's every loss (at QoS 1 and at QoS 0).
func TestReconnectStormCleanSessions(t *testing.T) {
	t.Parallel() // its own brokers
	for _, qos := range []int32{1, 0} {
		t.Run(fmt.Sprintf("qos%d", qos), func(t *testing.T) {
			t.Parallel() // its own broker
			b := startMosquitto(t, "")
			spec := baseSpec()
			spec.QoS = qos
			spec.Workload.Publishers, spec.Workload.Subscribers, spec.Workload.Topics = 4, 4, 2
			spec.Workload.Rate = 400
			spec.Workload.Warmup, spec.Workload.Duration = dur(200*time.Millisecond), dur(1200*time.Millisecond)
			spec.Workload.ReconnectStorm = &v1alpha1.ReconnectStormSpec{At: dur(700 * time.Millisecond)}
			res := run(t, spec, loadgen.Options{Address: b.Addr})
			s := res.Churn.Storm
			t.Logf("qos %d: storm %+v; sent %d received %d expected %d lost %d dups %d", qos, *s, res.Sent, res.Received, res.Expected, *res.Lost, *res.Duplicates)
			if s.Reconnected != 8 || s.NotBack != 0 || s.PersistentSessions || s.LostAtDrop != *res.Lost || res.Churn.QueuedDeliveries != 0 {
				t.Errorf("qos %d: storm %+v, lost %d, queued %d: want all 8 back, no persistent session, every loss the drop's, nothing queued", qos, *s, *res.Lost, res.Churn.QueuedDeliveries)
			}
			if unique := res.Received - *res.Duplicates; unique+*res.Lost != res.Expected {
				t.Errorf("qos %d: %d unique + %d lost != %d expected", qos, unique, *res.Lost, res.Expected)
			}
		})
	}
}
