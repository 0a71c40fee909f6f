package plan

import (
	"testing"
	"time"

	"github.com/msgbench/msgbench/netem"
)

func TestSleepHold(t *testing.T) {
	radio := &netem.Radio{InactivityTimer: 20 * time.Second, PromotionDelay: time.Second, PSMAfter: 10 * time.Second}
	link := netem.Link{Up: netem.Impairment{Delay: 200 * time.Millisecond}, Down: netem.Impairment{Delay: 400 * time.Millisecond}}
	sub := func(ka time.Duration, n *Network) Group {
		return Group{Subscribers: 1, MQTT: &MQTTOptions{KeepAlive: ka}, Network: n}
	}
	for _, c := range []struct {
		name string
		p    Plan
		want time.Duration
	}{
		{"no radio", Plan{Groups: []Group{sub(time.Minute, nil)}}, 0},
		{"the run's radio with PSM: keep-alive + promotion + round trip", Plan{Network: Network{Link: link, Radio: radio}, Groups: []Group{sub(time.Minute, nil)}}, time.Minute + time.Second + 600*time.Millisecond},
		{"a group's own, the longest keep-alive", Plan{Groups: []Group{sub(time.Minute, &Network{Link: link, Radio: radio}), sub(4*time.Minute, &Network{Link: link, Radio: radio})}}, 4*time.Minute + 1600*time.Millisecond},
		{"no PSM: paged, not asleep", Plan{Network: Network{Link: link, Radio: &netem.Radio{InactivityTimer: time.Second}}, Groups: []Group{sub(time.Minute, nil)}}, 0},
		{"no keep-alive: nothing wakes it", Plan{Network: Network{Link: link, Radio: radio}, Groups: []Group{sub(0, nil)}}, 0},
		{"publishers only", Plan{Network: Network{Link: link, Radio: radio}, Groups: []Group{{Publishers: 3, MQTT: &MQTTOptions{KeepAlive: time.Minute}}}}, 0},
	} {
		if got := c.p.SleepHold(); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRetransmitHold(t *testing.T) {
	link := netem.Link{Up: netem.Impairment{Delay: 20 * time.Millisecond}, Down: netem.Impairment{Delay: 20 * time.Millisecond}}
	sn := func(qos int32, n *Network) Group {
		return Group{Publishers: 2, QoS: qos, MQTTSN: &MQTTSNOptions{RetryInterval: 10 * time.Second}, Network: n}
	}
	for _, c := range []struct {
		name string
		p    Plan
		want time.Duration
	}{
		{"MQTT-SN QoS 1: T_retry", Plan{Groups: []Group{sn(1, nil)}}, 10 * time.Second},
		{"on its own link: plus a round trip", Plan{Groups: []Group{sn(2, &Network{Link: link})}}, 10*time.Second + 40*time.Millisecond},
		{"QoS 0: nothing is retransmitted", Plan{Groups: []Group{sn(0, nil)}}, 0},
		{"MQTT", Plan{Groups: []Group{{Publishers: 2, QoS: 1, MQTT: &MQTTOptions{}}}}, 0},
	} {
		if got := c.p.RetransmitHold(); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
