package plan_test

import (
	"reflect"
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/plan"
)

// The gateway a group's clients reach the broker through, and that gateway's own settings,
// are the plan's: each sample compiles to the groups its gateway serves, with the MQTT version
// and MQTT-SN mode the gateway holds (defaulted), and none for a protocol without a gateway.
func TestGatewayGroupsAndOptions(t *testing.T) {
	for _, tc := range []struct {
		sample string
		set    []string
		mode   string // the gateway's mode, "" without one
		want   *plan.GatewayOptions
	}{
		{"mqtt-qos1.yaml", nil, "", nil},
		{"kafka-acks1.yaml", nil, "", nil},
		{"broker-emqx-quic.yaml", nil, "", nil}, // EMQX serves QUIC itself
		{"mqtt-sn-qos1.yaml", nil, "mqtt-sn", &plan.GatewayOptions{MQTTVersion: v1alpha1.MQTT311, MQTTSNMode: v1alpha1.GatewayTransparent}},
		{"mqtt-sn-qos1.yaml", []string{"mqttsn.gatewayMode=aggregating", "mqtt.version=5"}, "mqtt-sn",
			&plan.GatewayOptions{MQTTVersion: v1alpha1.MQTT5, MQTTSNMode: v1alpha1.GatewayAggregating}},
		{"http-1-1.yaml", nil, "http", &plan.GatewayOptions{MQTTVersion: v1alpha1.MQTT311}},
		{"http-1-1.yaml", []string{"mqtt.version=5"}, "http", &plan.GatewayOptions{MQTTVersion: v1alpha1.MQTT5}},
		{"mqtt-quic.yaml", nil, "quic", &plan.GatewayOptions{MQTTVersion: v1alpha1.MQTT311}},
	} {
		spec := read(t, tc.sample, tc.set...)
		p, err := plan.Compile(spec, plan.Admitted)
		if err != nil {
			t.Fatalf("%s %v: %v", tc.sample, tc.set, err)
		}
		g := p.Groups[0]
		if g.Gateway != tc.mode || !reflect.DeepEqual(g.GatewayOptions, tc.want) {
			t.Errorf("%s %v: gateway %q options %+v, want %q %+v", tc.sample, tc.set, g.Gateway, g.GatewayOptions, tc.mode, tc.want)
		}
		for _, mode := range []string{"", "mqtt-sn", "http", "quic"} {
			served := p.GatewayGroups(mode)
			switch {
			case mode != "" && mode == tc.mode:
				if len(served) != 1 || served[0].Name != g.Name {
					t.Errorf("%s: the %s gateway serves %d groups, want its one", tc.sample, mode, len(served))
				}
			case len(served) != 0:
				t.Errorf("%s: the %q gateway serves %d groups, want none (the clients use %q)", tc.sample, mode, len(served), tc.mode)
			}
		}
		if n := g.Clients(); n != int(spec.Workload.Publishers)+int(spec.Workload.Subscribers) || n == 0 {
			t.Errorf("%s: %d clients for %d publishers and %d subscribers", tc.sample, n, spec.Workload.Publishers, spec.Workload.Subscribers)
		}
	}
}

// A gateway reading its plan from the wire gets its settings as compiled.
func TestGatewayOptionsTravelTheWire(t *testing.T) {
	p, err := plan.Compile(read(t, "mqtt-sn-qos1.yaml", "mqttsn.gatewayMode=aggregating"), plan.Admitted)
	if err != nil {
		t.Fatal(err)
	}
	data, err := plan.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	q, err := plan.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	got, want := q.GatewayGroups("mqtt-sn"), p.GatewayGroups("mqtt-sn")
	if len(got) != 1 || !reflect.DeepEqual(got[0].GatewayOptions, want[0].GatewayOptions) || !reflect.DeepEqual(got[0].MQTTSN, want[0].MQTTSN) {
		t.Errorf("after the wire: %+v, want %+v", got, want)
	}
}
