package mqttsn

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/internal/mqtt"
	"github.com/msgbench/msgbench/plan"
)

// sampleGroups are the mqtt-sn gateway's groups of the mqtt-sn-qos1 sample's compiled plan, with
// set's fields changed.
func sampleGroups(t *testing.T, set ...string) []plan.Group {
	t.Helper()
	mb, err := manifest.ReadFile(filepath.Join("../../config/samples", "mqtt-sn-qos1.yaml"), set...)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Compile(&mb.Spec, plan.Admitted)
	if err != nil {
		t.Fatal(err)
	}
	return p.GatewayGroups("mqtt-sn")
}

// The gateway's configuration is its groups' typed options: the MQTT-SN timers and keep-alive,
// the gateway's mode and MQTT version, the groups' topics as predefined ids, every client
// admitted.
func TestConfigFromGroups(t *testing.T) {
	groups := sampleGroups(t, "mqttsn.gatewayMode=aggregating", "mqtt.version=5", "mqttsn.retryInterval=3s",
		"mqttsn.maxRetries=0", "mqtt.keepAliveSeconds=30", "workload.publishers=7000", "workload.subscribers=6000", "workload.topics=3")
	if len(groups) != 1 {
		t.Fatalf("%d mqtt-sn groups", len(groups))
	}
	c, err := ConfigFromGroups(groups)
	if err != nil {
		t.Fatal(err)
	}
	g := groups[0]
	if c.Mode != Aggregating || c.MQTTVersion != mqtt.V5 || c.RetryInterval != 3*time.Second || c.MaxRetries != -1 ||
		c.KeepAlive != 30*time.Second || c.MaxClients != 13000 {
		t.Errorf("config %+v", c)
	}
	if len(c.Predefined) != 3 || c.Predefined[1] != g.TopicName(0) || c.Predefined[3] != g.TopicName(2) || c.topicPrefix != g.TopicPrefix || c.topicCount != 3 {
		t.Errorf("predefined %v, fast path %q × %d", c.Predefined, c.topicPrefix, c.topicCount)
	}

	// Defaulted: transparent, MQTT 3.1.1, 5 retries, a default client bound; the sample's retry
	// interval.
	groups = sampleGroups(t)
	c, err = ConfigFromGroups(groups)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Defaults(); err != nil {
		t.Fatal(err)
	}
	if c.Mode != Transparent || c.MQTTVersion != mqtt.V311 || c.MaxRetries != 5 || c.RetryInterval != groups[0].MQTTSN.RetryInterval || c.MaxClients != defaultMaxClients {
		t.Errorf("defaulted config %+v", c)
	}

	// No groups: the gateway's own defaults.
	if c, err := ConfigFromGroups(nil); err != nil || c.Mode != "" || c.Predefined != nil || c.MaxClients != 0 {
		t.Errorf("without groups: %+v, %v", c, err)
	}
}

// Two groups share one gateway: their clients add up, their topics are one table, and what the
// gateway holds once must agree.
func TestConfigFromSeveralGroups(t *testing.T) {
	a := sampleGroups(t, "workload.publishers=6000", "workload.subscribers=6000", "workload.topics=2")[0]
	b := sampleGroups(t, "workload.publishers=1", "workload.subscribers=1", "workload.topics=5")[0]
	b.Name = "meters"
	c, err := ConfigFromGroups([]plan.Group{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxClients != 12002 || len(c.Predefined) != 5 || c.topicCount != 5 {
		t.Errorf("two groups: %d clients admitted, %d predefined topics, fast path %d", c.MaxClients, len(c.Predefined), c.topicCount)
	}
	for _, tc := range []struct {
		set  string
		want string
	}{
		{"mqttsn.gatewayMode=aggregating", "spec.mqttsn.gatewayMode"},
		{"mqtt.version=5", "spec.mqtt.version"},
		{"mqttsn.retryInterval=2s", "spec.mqttsn.retryInterval"},
		{"workload.topicPrefix=other/", "predefined topic id 1"},
	} {
		other := sampleGroups(t, tc.set)[0]
		other.Name = "meters"
		if _, err := ConfigFromGroups([]plan.Group{a, other}); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `"meters"`) {
			t.Errorf("%s: %v, want an error naming %s and the group", tc.set, err, tc.want)
		}
	}
	http := a
	http.MQTTSN = nil
	if _, err := ConfigFromGroups([]plan.Group{http}); err == nil || !strings.Contains(err.Error(), "no MQTT-SN options") {
		t.Errorf("a group without MQTT-SN options: %v", err)
	}
}
