package plan_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/plan"
)

// MQTT-SN as deployed: a gateway's own predefined topic ids, a source port per client, an
// external gateway. Each bad setting is refused before anything starts, naming its field.
func TestMQTTSNAsDeployed(t *testing.T) {
	spec := read(t, "mqtt-sn-qos1.yaml", "mqttsn.topicIdType=predefined", "workload.topics=2", "workload.topicPrefix=site/")
	spec.MQTTSN.PredefinedTopicIDs = map[string]int32{"site/0": 100, "site/1": 7}
	port := int32(20000)
	spec.MQTTSN.SourcePort = &port
	spec.Broker.Type, spec.Broker.External = v1alpha1.BrokerExternal, &v1alpha1.ExternalBroker{Address: "127.0.0.1:1883"}
	spec.Gateway.External = &v1alpha1.ExternalGateway{Address: "127.0.0.1:10000"}
	p, err := plan.Compile(spec, plan.Local)
	if err != nil {
		t.Fatal(err)
	}
	g := &p.Groups[0]
	if id, err := g.MQTTSN.PredefinedID("site/0", 0); id != 100 || err != nil {
		t.Errorf("site/0: id %d (%v), want the map's 100", id, err)
	}
	if got := []int{g.MQTTSN.ClientPort(g, false, 0), g.MQTTSN.ClientPort(g, false, 1), g.MQTTSN.ClientPort(g, true, 0)}; got[0] != 20000 || got[1] != 20001 || got[2] != 20000+int(g.Publishers) {
		t.Errorf("source ports %v: want publishers from 20000, then the subscribers", got)
	}
	if g.ExternalGateway != "127.0.0.1:10000" || len(p.GatewayModes()) != 0 || p.Gateway() != "" || p.ExternalGateway() != "127.0.0.1:10000" {
		t.Errorf("external gateway %q, modes %v: msgbench starts none, its clients go to the external one", g.ExternalGateway, p.GatewayModes())
	}

	for _, tc := range []struct {
		name, want string
		edit       func(s *v1alpha1.MessagingBenchmarkSpec)
	}{
		{"an id twice", `spec.mqttsn.predefinedTopicIds: "site/0" and "site/1" have the same id 7`,
			func(s *v1alpha1.MessagingBenchmarkSpec) { s.MQTTSN.PredefinedTopicIDs["site/0"] = 7 }},
		{"a topic without an id", `spec.mqttsn.predefinedTopicIds: topic "site/1" (of spec.workload.topics) has no id`,
			func(s *v1alpha1.MessagingBenchmarkSpec) { delete(s.MQTTSN.PredefinedTopicIDs, "site/1") }},
		{"a reserved id", `spec.mqttsn.predefinedTopicIds: "site/0" has id 65535`,
			func(s *v1alpha1.MessagingBenchmarkSpec) { s.MQTTSN.PredefinedTopicIDs["site/0"] = 0xFFFF }},
		{"ports past 65535", "spec.mqttsn.sourcePort: ",
			func(s *v1alpha1.MessagingBenchmarkSpec) { p := int32(65535); s.MQTTSN.SourcePort = &p }},
		{"an external gateway nobody uses", "spec.gateway.external: no group goes through a gateway",
			func(s *v1alpha1.MessagingBenchmarkSpec) { s.Protocol = v1alpha1.ProtocolMQTT; s.QoS = 1 }},
	} {
		s := spec.DeepCopy()
		tc.edit(s)
		if _, err := plan.Compile(s, plan.Local); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// An HTTP endpoint of the user's own: its request template compiled, its address where the
// clients go (no gateway of msgbench's), and each mistake refused naming its field.
func TestHTTPEndpointTemplate(t *testing.T) {
	body := `{"id": "{device}", "n": {seq}, "data": "{payload:base64}"}`
	spec := read(t, "http-2-tls.yaml", "workload.subscribers=0", "tls.enabled=false")
	spec.HTTP.Endpoint = &v1alpha1.HTTPEndpointSpec{Method: "PUT", URL: "https://ingest.local:8443/v1/{group}/{device}?topic={topic}&n={seq}",
		Headers: map[string]string{"Authorization": "Bearer t-{device}"}, Body: &body, AcceptedStatuses: []int32{201, 202}}
	p, err := plan.Compile(spec, plan.Kubernetes)
	if err != nil {
		t.Fatal(err)
	}
	g := &p.Groups[0]
	e := g.HTTP.Endpoint
	if e == nil || e.Address != "ingest.local:8443" || !e.Secure || g.ExternalGateway != e.Address || len(p.GatewayModes()) != 0 {
		t.Fatalf("endpoint %+v, group's address %q, gateways %v", e, g.ExternalGateway, p.GatewayModes())
	}
	if !e.Accepted(202) || e.Accepted(200) || !e.URL.Has(plan.RequestGroup) || !e.Body.Has(plan.RequestPayloadBase64) {
		t.Errorf("endpoint %+v: accepted statuses or placeholders wrong", e)
	}
	// The workers read the plan as JSON (the operator's ConfigMap): the endpoint arrives whole.
	js, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back plan.Plan
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if b := back.Groups[0].HTTP.Endpoint; b == nil || !reflect.DeepEqual(*b, *e) {
		t.Errorf("the endpoint through JSON: %+v, want %+v", b, e)
	}
	// A JSON body's braces are text: "{" before a quote is not a placeholder.
	if n := len(e.Body); n != 7 || e.Body[0].Text != `{"id": "` || e.Body[6].Text != `"}` {
		t.Errorf("body parts %+v", e.Body)
	}
	for _, tc := range []struct {
		name, want string
		edit       func(s *v1alpha1.MessagingBenchmarkSpec)
	}{
		{"a misspelt placeholder", "spec.http.endpoint.body: {devcie} is not a placeholder here",
			func(s *v1alpha1.MessagingBenchmarkSpec) { b := `{"id": "{devcie}"}`; s.HTTP.Endpoint.Body = &b }},
		{"a placeholder in the host", "spec.http.endpoint.url: the host",
			func(s *v1alpha1.MessagingBenchmarkSpec) { s.HTTP.Endpoint.URL = "https://{device}.local/x" }},
		{"subscribers", "spec.workload.subscribers: an HTTP endpoint of your own",
			func(s *v1alpha1.MessagingBenchmarkSpec) { s.Workload.Subscribers = 1 }},
		{"HTTP/3 in the clear", "spec.http.endpoint.url: HTTP/3",
			func(s *v1alpha1.MessagingBenchmarkSpec) {
				s.HTTP.Version = v1alpha1.HTTP3
				s.HTTP.Endpoint.URL = "http://ingest.local/x"
			}},
		{"Host set by hand", "spec.http.endpoint.headers: Host is set by msgbench",
			func(s *v1alpha1.MessagingBenchmarkSpec) { s.HTTP.Endpoint.Headers = map[string]string{"Host": "x"} }},
		{"another protocol", "spec.http.endpoint: no group speaks http",
			func(s *v1alpha1.MessagingBenchmarkSpec) { s.Protocol = v1alpha1.ProtocolMQTT }},
	} {
		s := spec.DeepCopy()
		tc.edit(s)
		if _, err := plan.Compile(s, plan.Kubernetes); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
