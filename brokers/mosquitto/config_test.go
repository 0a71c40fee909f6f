package mosquitto

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/msgbench/msgbench/config/crd"
)

func TestCheckConfigRefusesUnknownManagedAndBridgeKeys(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want string // "" accepts
	}{
		{"max_queued_messages", ""},
		{"persistence", ""},
		{"retain_available", ""},
		{"ciphers_tls1.3", ""},
		{"maximum_qos", ""}, // an alias conf.c accepts
		{"foo_bar", "spec.broker.config.foo_bar: not a mosquitto.conf key"},
		{"max_inflight_mesages", "did you mean max_inflight_messages"},
		{"allow_anonymous", "spec.broker.config.allow_anonymous: managed by msgbench"},
		{"password_file", "spec.broker.config.password_file: managed by msgbench"},
		{"auth_opt_db_host", "spec.broker.config.auth_opt_db_host: managed by msgbench"},
		{"listener", "spec.broker.config.listener: managed by msgbench"},
		{"connection", "spec.broker.config.connection: a bridge setting"},
		{"bridge_cafile", "spec.broker.config.bridge_cafile: a bridge setting"},
	} {
		err := CheckConfig(map[string]string{tc.key: "1"})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.key, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want %q", tc.key, err, tc.want)
		}
		// Render, which the operator and local runs call, refuses the same keys.
		if _, rerr := (Config{Port: 1883, Extra: map[string]string{tc.key: "1"}}).Render(); (rerr == nil) != (err == nil) {
			t.Errorf("%s: Render and CheckConfig disagree: %v / %v", tc.key, rerr, err)
		}
	}
	if err := CheckConfig(map[string]string{"persistence": "true\nlistener 1"}); err == nil || !strings.Contains(err.Error(), "spans lines") {
		t.Errorf("a value with a line break: %v", err)
	}
}

// TestTablesAreDisjoint keeps each key in one class: known and accepted, managed, or a bridge's.
func TestTablesAreDisjoint(t *testing.T) {
	for _, k := range bridgeKeys {
		if matches(k, knownKeys) {
			t.Errorf("%s is both a bridge key and a known global key", k)
		}
	}
	for k := range managedKeys {
		if !matches(k, knownKeys) {
			t.Errorf("managed key %s is not a known key", k)
		}
	}
	for _, k := range accessKeys {
		if !slices.Contains(knownKeys, k) {
			t.Errorf("access key %s is not a known key", k)
		}
	}
}

// TestAdmissionRuleListsTheManagedKeys holds the CRD's CEL rule for Mosquitto's managed keys
// (admission, on Kubernetes and locally) equal to this package's table, which the operator and
// local runs check.
func TestAdmissionRuleListsTheManagedKeys(t *testing.T) {
	var c apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(crd.MessagingBenchmark, &c); err != nil {
		t.Fatal(err)
	}
	var rule []string
	for _, r := range c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].XValidations {
		rule = regexp.MustCompile(`^self\.broker\.type != 'mosquitto' \|\| !has\(self\.broker\.config\) \|\| !self\.broker\.config\.exists\(k, k in \[([^\]]*)\](.*)$`).FindStringSubmatch(r.Rule)
		if rule != nil {
			break
		}
	}
	if rule == nil {
		t.Fatal("the CRD has no Mosquitto managed-key rule")
	}
	var inCEL []string
	for _, q := range strings.Split(rule[1], ",") {
		inCEL = append(inCEL, strings.Trim(strings.TrimSpace(q), "'"))
	}
	for _, p := range regexp.MustCompile(`k\.startsWith\('([^']+)'\)`).FindAllStringSubmatch(rule[2], -1) {
		inCEL = append(inCEL, p[1])
	}
	var want []string
	for k := range managedKeys {
		want = append(want, k)
	}
	want = append(want, accessKeys...)
	slices.Sort(inCEL)
	slices.Sort(want)
	if !slices.Equal(inCEL, want) {
		t.Errorf("CEL rule lists %v,\nthe Go tables %v", inCEL, want)
	}
}

// TestAdmissionRuleListsTheKnownKeys holds the CRD's CEL rule of Mosquitto's known keys equal to
// knownKeys (it is written from it): admission refuses an unknown or bridge key, naming it.
func TestAdmissionRuleListsTheKnownKeys(t *testing.T) {
	var c apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(crd.MessagingBenchmark, &c); err != nil {
		t.Fatal(err)
	}
	var rule []string
	for _, r := range c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].XValidations {
		rule = regexp.MustCompile(`^self\.broker\.type != 'mosquitto' \|\| !has\(self\.broker\.config\) \|\| self\.broker\.config\.all\(k, k in \[([^\]]*)\](.*)$`).FindStringSubmatch(r.Rule)
		if rule != nil {
			break
		}
	}
	if rule == nil {
		t.Fatal("the CRD has no Mosquitto known-key rule")
	}
	var inCEL []string
	for _, q := range strings.Split(rule[1], ",") {
		inCEL = append(inCEL, strings.Trim(strings.TrimSpace(q), "'"))
	}
	for _, p := range regexp.MustCompile(`k\.startsWith\('([^']+)'\)`).FindAllStringSubmatch(rule[2], -1) {
		inCEL = append(inCEL, p[1])
	}
	want := slices.Clone(knownKeys)
	slices.Sort(inCEL)
	slices.Sort(want)
	if !slices.Equal(inCEL, want) {
		t.Errorf("CEL rule lists %v,\nknownKeys %v", inCEL, want)
	}
}
