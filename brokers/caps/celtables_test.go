package caps_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/msgbench/msgbench/brokers/artemis"
	"github.com/msgbench/msgbench/brokers/kafka"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/brokers/rabbitmq"
	"github.com/msgbench/msgbench/config/crd"
	"github.com/msgbench/msgbench/controllers/resources"
)

// TestAdmissionRulesListTheGoTables holds every broker's spec.broker.config key rule in the
// CRD (the API server's, and msgbench run's, admission) equal to the Go table the operator's
// builders and the local runs check, key for key: a key added to one and not the other fails
// here.
func TestAdmissionRulesListTheGoTables(t *testing.T) {
	var c apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(crd.MessagingBenchmark, &c); err != nil {
		t.Fatal(err)
	}
	rules := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].XValidations
	for _, tc := range []struct {
		broker string
		form   string // "all": the keys allowed; "exists": the keys refused
		keys   []string
	}{
		{"mosquitto", "exists", mosquitto.RefusedKeys()},
		{"mosquitto", "all", mosquitto.KnownKeys()},
		{"kafka", "exists", kafka.ManagedPrefixes()},
		{"artemis", "exists", starsAsPrefixes(artemis.ManagedKeys)},
		{"rabbitmq", "exists", rabbitmq.ManagedKeys},
		{"emqx", "all", resources.EMQXConfigKeys},
		{"nanomq", "all", resources.NanoMQConfigKeys},
		{"hivemq-ce", "all", resources.HiveMQConfigKeys},
		{"vernemq", "all", resources.VerneMQConfigKeys},
	} {
		head := "self.broker.type != '" + tc.broker + "' || !has(self.broker.config) || self.broker.config.all(k, "
		if tc.form == "exists" {
			head = "self.broker.type != '" + tc.broker + "' || !has(self.broker.config) || !self.broker.config.exists(k, "
		}
		var found []string
		n := 0
		for _, r := range rules {
			if rest, ok := strings.CutPrefix(r.Rule, head); ok {
				found, n = celKeys(rest), n+1
			}
		}
		if n != 1 {
			t.Errorf("%s: %d rules begin %q, want 1", tc.broker, n, head)
			continue
		}
		want := slices.Clone(tc.keys)
		slices.Sort(want)
		slices.Sort(found)
		if !slices.Equal(found, want) {
			t.Errorf("%s: the CEL rule lists\n%v,\nthe Go table\n%v\n(only in CEL %v, only in Go %v)", tc.broker, found, want, minus(found, want), minus(want, found))
		}
	}
}

var (
	listRE       = regexp.MustCompile(`\[([^\]]*)\]`)
	literalRE    = regexp.MustCompile(`'([^']*)'`)
	startsWithRE = regexp.MustCompile(`k\.startsWith\('([^']+)'\)`)
)

// celKeys are the keys a rule names: the string literals of its lists and of its
// k.startsWith('…') calls (not the '.' of p.endsWith('.'), which is how a list marks prefixes).
func celKeys(rule string) []string {
	var keys []string
	for _, l := range listRE.FindAllStringSubmatch(rule, -1) {
		for _, q := range literalRE.FindAllStringSubmatch(l[1], -1) {
			keys = append(keys, q[1])
		}
	}
	for _, p := range startsWithRE.FindAllStringSubmatch(rule, -1) {
		keys = append(keys, p[1])
	}
	return keys
}

// starsAsPrefixes is Artemis's table as the rule writes it: "acceptor.ssl*" is the prefix
// acceptor.ssl.
func starsAsPrefixes(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, strings.TrimSuffix(k, "*"))
	}
	return out
}

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
