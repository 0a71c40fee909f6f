package plan_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/plan"
)

// spec.mqttsn.discovery compiled once: its defaults (radius 1, T_SEARCHGW 5 s, 30 s), the
// address SEARCHGW goes to (the gateway's, or the one given with the gateway's port when it
// has none), per device group, through JSON to the workers; each mistake a Go client could
// make (the CRD refuses them too) refused naming the field.
func TestMQTTSNDiscovery(t *testing.T) {
	spec := read(t, "mqtt-sn-qos1.yaml")
	if p, err := plan.Compile(spec, plan.Local); err != nil || p.Groups[0].MQTTSN.Discovery != nil {
		t.Fatalf("no spec.mqttsn.discovery: %v, %+v; want no search", err, p.Groups[0].MQTTSN)
	}
	spec.MQTTSN.Discovery = &v1alpha1.MQTTSNDiscoverySpec{}
	p, err := plan.Compile(spec, plan.Kubernetes)
	if err != nil {
		t.Fatal(err)
	}
	d := p.Groups[0].MQTTSN.Discovery
	want := &plan.MQTTSNDiscovery{Radius: 1, Interval: 5 * time.Second, Timeout: 30 * time.Second}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("defaults %+v, want %+v", d, want)
	}
	js, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back plan.Plan
	if err := json.Unmarshal(js, &back); err != nil || !reflect.DeepEqual(back.Groups[0].MQTTSN.Discovery, want) {
		t.Errorf("through JSON: %+v (%v), want %+v", back.Groups[0].MQTTSN.Discovery, err, want)
	}

	for _, tc := range []struct{ address, gateway, want string }{
		{"", "mb-gateway.ns.svc:1885", "mb-gateway.ns.svc:1885"}, // on Kubernetes: the gateway's Service
		{"255.255.255.255", "127.0.0.1:40000", "255.255.255.255:40000"},
		{"192.168.1.255:1885", "127.0.0.1:40000", "192.168.1.255:1885"},
		{"ff02::1", "[::1]:40000", "[ff02::1]:40000"},
		{"[ff02::1]", "[::1]:40000", "[ff02::1]:40000"},
		{"[ff02::1]:1885", "[::1]:40000", "[ff02::1]:1885"},
		{"gateways.lan", "10.0.0.1:1885", "gateways.lan:1885"},
	} {
		got, err := (&plan.MQTTSNDiscovery{Address: tc.address}).SearchAddress(tc.gateway)
		if err != nil || got != tc.want {
			t.Errorf("address %q, gateway %s: %q (%v), want %q", tc.address, tc.gateway, got, err, tc.want)
		}
	}

	r := int32(3)
	spec.Groups = nil
	spec.MQTTSN.Discovery = &v1alpha1.MQTTSNDiscoverySpec{Address: "198.18.0.3", Radius: &r,
		Interval: metav1.Duration{Duration: 200 * time.Millisecond}, Timeout: metav1.Duration{Duration: time.Second}}
	p, err = plan.Compile(spec, plan.Local)
	if err != nil {
		t.Fatal(err)
	}
	want = &plan.MQTTSNDiscovery{Address: "198.18.0.3", Radius: 3, Interval: 200 * time.Millisecond, Timeout: time.Second}
	if d := p.Groups[0].MQTTSN.Discovery; !reflect.DeepEqual(d, want) {
		t.Errorf("given %+v, want %+v", d, want)
	}

	for _, tc := range []struct {
		name, want string
		ds         v1alpha1.MQTTSNDiscoverySpec
	}{
		{"radius 256", "spec.mqttsn.discovery.radius: 256", v1alpha1.MQTTSNDiscoverySpec{Radius: ptr(int32(256))}},
		{"radius -1", "spec.mqttsn.discovery.radius: -1", v1alpha1.MQTTSNDiscoverySpec{Radius: ptr(int32(-1))}},
		{"interval below 0", "spec.mqttsn.discovery.interval", v1alpha1.MQTTSNDiscoverySpec{Interval: metav1.Duration{Duration: -time.Second}}},
		{"timeout below 0", "spec.mqttsn.discovery.timeout", v1alpha1.MQTTSNDiscoverySpec{Timeout: metav1.Duration{Duration: -time.Second}}},
		{"port 0", `spec.mqttsn.discovery.address: "255.255.255.255:0": port "0"`, v1alpha1.MQTTSNDiscoverySpec{Address: "255.255.255.255:0"}},
		{"port past 65535", `port "65536"`, v1alpha1.MQTTSNDiscoverySpec{Address: "gw.lan:65536"}},
		{"no host", `spec.mqttsn.discovery.address: ":1885"`, v1alpha1.MQTTSNDiscoverySpec{Address: ":1885"}},
		{"two colons", `spec.mqttsn.discovery.address: "a:b:c"`, v1alpha1.MQTTSNDiscoverySpec{Address: "a:b:c"}},
	} {
		s := spec.DeepCopy()
		s.MQTTSN.Discovery = &tc.ds
		if _, err := plan.Compile(s, plan.Local); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// A device group's own spec.groups[].mqttsn.discovery: its devices search, with its address.
func TestMQTTSNDiscoveryPerGroup(t *testing.T) {
	spec := read(t, "fleets/mixed-fleet.yaml")
	for i := range spec.Groups {
		if spec.Groups[i].Name == "sensors" {
			spec.Groups[i].MQTTSN = &v1alpha1.MQTTSNSpec{Discovery: &v1alpha1.MQTTSNDiscoverySpec{Address: "255.255.255.255"}}
		}
	}
	p, err := plan.Compile(spec, plan.Local)
	if err != nil {
		t.Fatal(err)
	}
	seen := false
	for _, g := range p.Groups {
		if g.MQTTSN == nil {
			continue
		}
		seen = true
		if d := g.MQTTSN.Discovery; d == nil || d.Address != "255.255.255.255" || d.Radius != 1 || d.Interval != plan.DefaultSearchInterval {
			t.Errorf("group %s: discovery %+v, want the group's address with the defaults", g.Name, d)
		}
	}
	if !seen {
		t.Fatal("no MQTT-SN group in the mixed fleet")
	}
}

func ptr[T any](v T) *T { return &v }
