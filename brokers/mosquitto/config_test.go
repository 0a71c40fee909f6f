package mosquitto

import (
	"slices"
	"strings"
	"testing"
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
