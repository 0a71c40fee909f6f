package manifest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/caps"
	"github.com/msgbench/msgbench/plan"
)

// TestCELRulesAgreeWithTheGoTables holds the rules the CRD and the Go code both state equal,
// case by case: the QoS each protocol has (plan.ProtocolQoS; the CRD's spec.qos bounds and its
// "-1 only for mqtt-sn" rule), MQTT-SN's payload limit and the topic id types QoS -1 needs
// (plan.MQTTSNMaxPayload, plan.ConnectionlessTopicIDTypes), and what a broker cannot do whatever
// its version (caps.MaxQoS; caps.MQTT5Since, which no CEL rule may state). The cases are
// generated from the tables and the CRD's enums: every protocol with every broker it can use,
// every QoS from one below the lowest range to one above the highest, every topic id type, the
// payload limit and one byte more, MQTT 3.1.1 and 5. Each is admitted by the generated CRD with
// every rule, through the API server's own schema and CEL libraries, and compiled by
// plan.Compile (then caps.Check, version unknown): both must accept or both refuse, and where a
// CEL rule refuses, the Go check gives its message. A rule added on one side only fails here.
func TestCELRulesAgreeWithTheGoTables(t *testing.T) {
	t.Parallel()
	full, _, err := buildSchema("MessagingBenchmark", false) // every rule, as the API server has them
	if err != nil {
		t.Fatal(err)
	}
	spec := v1SpecSchema(t)
	protocols := enum[v1alpha1.Protocol](t, spec, "protocol")
	brokers := enum[v1alpha1.BrokerType](t, spec, "broker", "type")
	topicIDTypes := enum[v1alpha1.MQTTSNTopicIDType](t, spec, "mqttsn", "topicIdType")

	// The table names every protocol the CRD has, and the schema bounds spec.qos by their union.
	var lo, hi int32 = 1 << 30, -1 << 30
	for p, r := range plan.ProtocolQoS {
		if !slices.Contains(protocols, p) {
			t.Errorf("plan.ProtocolQoS has %s, which the CRD's spec.protocol does not", p)
		}
		lo, hi = min(lo, r.Min), max(hi, r.Max)
	}
	for _, p := range protocols {
		if _, ok := plan.ProtocolQoS[p]; !ok {
			t.Errorf("the CRD's spec.protocol has %s, which plan.ProtocolQoS does not", p)
		}
	}
	q := spec.Properties["qos"]
	if q.Minimum == nil || q.Maximum == nil || int32(*q.Minimum) != lo || int32(*q.Maximum) != hi {
		t.Errorf("the CRD bounds spec.qos by %v..%v; the union of plan.ProtocolQoS is %d..%d", q.Minimum, q.Maximum, lo, hi)
	}
	for b := range caps.MaxQoS {
		if !slices.Contains(brokers, b) {
			t.Errorf("caps.MaxQoS has %s, which the CRD's spec.broker.type does not", b)
		}
	}
	for b := range caps.MQTT5Since {
		if !slices.Contains(brokers, b) {
			t.Errorf("caps.MQTT5Since has %s, which the CRD's spec.broker.type does not", b)
		}
	}

	cases, mismatches := 0, 0
	for _, p := range protocols {
		for _, b := range brokers {
			// Which broker a protocol can use is another rule (both sides hold it elsewhere).
			kafka := p == v1alpha1.ProtocolKafka
			if kafka && b != v1alpha1.BrokerKafka && b != v1alpha1.BrokerExternal || !kafka && b == v1alpha1.BrokerKafka {
				continue
			}
			tids := []v1alpha1.MQTTSNTopicIDType{""}
			if p == v1alpha1.ProtocolMQTTSN {
				tids = append(tids, topicIDTypes...)
			}
			versions := []v1alpha1.MQTTVersion{v1alpha1.MQTT311, v1alpha1.MQTT5}
			for qos := lo - 1; qos <= hi+1; qos++ {
				for _, tid := range tids {
					for _, payload := range []int32{plan.MQTTSNMaxPayload, plan.MQTTSNMaxPayload + 1} {
						for _, v := range versions {
							c := ruleCase{p, b, qos, tid, payload, v}
							cases++
							if msg := c.check(t, full); msg != "" {
								mismatches++
								if mismatches <= 20 {
									t.Error(msg)
								}
							}
						}
					}
				}
			}
		}
	}
	if mismatches > 20 {
		t.Errorf("… %d mismatches in all", mismatches)
	}
	if cases < 500 {
		t.Errorf("only %d cases", cases)
	}
	t.Logf("%d cases", cases)
}

// ruleCase is one spec the tables decide.
type ruleCase struct {
	protocol v1alpha1.Protocol
	broker   v1alpha1.BrokerType
	qos      int32
	topicID  v1alpha1.MQTTSNTopicIDType // "" unset
	payload  int32
	version  v1alpha1.MQTTVersion
}

func (c ruleCase) String() string {
	return fmt.Sprintf("protocol %s, broker %s, qos %d, topicIdType %q, payloadBytes %d, mqtt.version %s", c.protocol, c.broker, c.qos, c.topicID, c.payload, c.version)
}

// object is the case as a manifest, otherwise valid.
func (c ruleCase) object() map[string]any {
	broker := map[string]any{"type": string(c.broker)}
	switch c.broker {
	case v1alpha1.BrokerExternal:
		broker["external"] = map[string]any{"address": "broker.example:1883"}
	case v1alpha1.BrokerVerneMQ:
		broker["config"] = map[string]any{"accept_eula": "yes"}
	}
	spec := map[string]any{
		"protocol": string(c.protocol),
		"qos":      int64(c.qos),
		"broker":   broker,
		"workload": map[string]any{"payloadBytes": int64(c.payload)},
	}
	if c.protocol != v1alpha1.ProtocolKafka {
		spec["mqtt"] = map[string]any{"version": string(c.version)}
	}
	if c.topicID != "" {
		spec["mqttsn"] = map[string]any{"topicIdType": string(c.topicID)}
	}
	return map[string]any{"apiVersion": v1alpha1.GroupVersion.String(), "kind": "MessagingBenchmark",
		"metadata": map[string]any{"name": "rules"}, "spec": spec}
}

// check admits the case through the CRD and compiles it in Go, and says how they disagree ("":
// they agree).
func (c ruleCase) check(t *testing.T, s *schema) string {
	obj := c.object()
	defaulting.Default(obj, s.structural)
	schemaErrs := validation.ValidateCustomResource(nil, obj, s.validator)
	celErrs, _ := s.cel.Validate(context.Background(), nil, s.structural, obj, nil, celconfig.RuntimeCELCostBudget)
	var cel []string
	for _, e := range celErrs {
		cel = append(cel, e.Detail)
	}
	crdRefused := len(schemaErrs) > 0 || len(cel) > 0

	var goErr error
	var mb v1alpha1.MessagingBenchmark
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &mb); err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	if p, err := plan.Compile(&mb.Spec, plan.Kubernetes); err != nil {
		goErr = err
	} else {
		goErr = caps.Check(c.broker, "", p)
	}

	switch {
	case crdRefused && goErr == nil:
		return fmt.Sprintf("%s: the CRD refuses it (%v%v), Go accepts it", c, schemaErrs.ToAggregate(), cel)
	case !crdRefused && goErr != nil:
		return fmt.Sprintf("%s: Go refuses it (%v), the CRD accepts it", c, goErr)
	case goErr == nil || len(schemaErrs) > 0 || len(cel) == 0:
		// Both accept; or the schema's bounds refuse it (spec.qos outside the union of the
		// ranges, with the schema's own wording), before its CEL rules mean anything.
		return ""
	case !slices.Contains(cel, goErr.Error()):
		return fmt.Sprintf("%s: the CRD refuses it with\n\t%s\nGo with\n\t%v", c, strings.Join(cel, "\n\t"), goErr)
	}
	return ""
}

// v1SpecSchema is the generated CRD's spec schema.
func v1SpecSchema(t *testing.T) apiextensionsv1.JSONSchemaProps {
	t.Helper()
	var c apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(crds["MessagingBenchmark"], &c); err != nil {
		t.Fatal(err)
	}
	return c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
}

// enum is the enum of the field at path below s.
func enum[T ~string](t *testing.T, s apiextensionsv1.JSONSchemaProps, path ...string) []T {
	t.Helper()
	for _, p := range path {
		s = s.Properties[p]
	}
	var out []T
	for _, e := range s.Enum {
		var v string
		if err := json.Unmarshal(e.Raw, &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, T(v))
	}
	if len(out) == 0 {
		t.Fatalf("spec.%s has no enum", strings.Join(path, "."))
	}
	return out
}
