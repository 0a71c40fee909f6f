package rabbitmq

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// settings parses rabbitmq.conf into key -> values (in order; comments and blank lines skipped).
func settings(t *testing.T, conf string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, l := range strings.Split(conf, "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		k, v, ok := strings.Cut(l, " = ")
		if !ok {
			t.Fatalf("line %q is not key = value", l)
		}
		out[k] = append(out[k], v)
	}
	return out
}

func TestRender(t *testing.T) {
	files, err := Config{Port: 1883, MaxInflight: 64}.Render()
	if err != nil {
		t.Fatal(err)
	}
	if files[PluginsFile] != "[rabbitmq_mqtt].\n" {
		t.Errorf("enabled_plugins %q", files[PluginsFile])
	}
	s := settings(t, files[ConfFile])
	for k, want := range map[string]string{
		"listeners.tcp":                     "none",
		"mqtt.listeners.tcp.default":        "1883",
		"mqtt.prefetch":                     "64", // the inflight window towards subscribers
		"mqtt.allow_anonymous":              "true",
		"loopback_users":                    "none",
		"vm_memory_high_watermark.relative": "0.8",
		"log.file":                          "false",
	} {
		if got := s[k]; len(got) != 1 || got[0] != want {
			t.Errorf("%s = %v, want %s", k, got, want)
		}
	}
	for k := range s {
		if strings.HasPrefix(k, "ssl_options.") || strings.HasPrefix(k, "mqtt.listeners.ssl") || k == "total_memory_available_override_value" {
			t.Errorf("%s set without TLS or a memory limit", k)
		}
	}

	files, err = Config{MaxInflight: 0}.Render()
	if err != nil {
		t.Fatal(err)
	}
	s = settings(t, files[ConfFile])
	if s["mqtt.prefetch"][0] != "20" || s["mqtt.listeners.tcp"][0] != "none" {
		t.Errorf("defaults: prefetch %v (want 20), mqtt.listeners.tcp %v (want none)", s["mqtt.prefetch"], s["mqtt.listeners.tcp"])
	}
}

func TestRenderTLS(t *testing.T) {
	for version, want := range map[string]string{"1.2": "tlsv1.2", "1.3": "tlsv1.3", "": "tlsv1.3"} {
		files, err := Config{Port: 1883, BindAddress: "127.0.0.1", TLSPort: 8883, CAFile: "/c/ca.crt", CertFile: "/c/tls.crt", KeyFile: "/c/tls.key", TLSVersion: version}.Render()
		if err != nil {
			t.Fatal(err)
		}
		s := settings(t, files[ConfFile])
		for k, v := range map[string]string{
			"mqtt.listeners.tcp.default": "127.0.0.1:1883",
			"mqtt.listeners.ssl.default": "127.0.0.1:8883",
			"ssl_options.cacertfile":     "/c/ca.crt",
			"ssl_options.certfile":       "/c/tls.crt",
			"ssl_options.keyfile":        "/c/tls.key",
			"ssl_options.verify":         "verify_none",
			"ssl_options.versions.1":     want,
		} {
			if got := s[k]; len(got) != 1 || got[0] != v {
				t.Errorf("TLS %q: %s = %v, want %s", version, k, got, v)
			}
		}
	}
}

// TestRenderExtra: spec.broker.config keys are appended, replace msgbench's default of their
// family, and keys msgbench manages are refused naming the field and the key.
func TestRenderExtra(t *testing.T) {
	files, err := Config{Port: 1883, MemoryLimitBytes: 1 << 30, Extra: map[string]string{
		"vm_memory_high_watermark.absolute":        "2GB",
		"mqtt.max_session_expiry_interval_seconds": "60",
		"log.console.level":                        "info",
	}}.Render()
	if err != nil {
		t.Fatal(err)
	}
	s := settings(t, files[ConfFile])
	if _, ok := s["vm_memory_high_watermark.relative"]; ok {
		t.Error("msgbench's relative watermark kept beside spec.broker.config's absolute one")
	}
	for k, want := range map[string]string{
		"vm_memory_high_watermark.absolute":        "2GB",
		"mqtt.max_session_expiry_interval_seconds": "60",
		"log.console.level":                        "info",
		"total_memory_available_override_value":    "1073741824",
	} {
		if got := s[k]; len(got) != 1 || got[0] != want {
			t.Errorf("%s = %v, want [%s]", k, got, want)
		}
	}

	for _, key := range []string{"listeners.tcp.default", "mqtt.listeners.ssl.default", "ssl_options.versions.1", "mqtt.prefetch",
		"loopback_users.guest", "mqtt.allow_anonymous", "default_user", "log.file", "cluster_formation.peer_discovery_backend"} {
		_, err := Config{Extra: map[string]string{key: "x"}}.Render()
		if err == nil || !strings.Contains(err.Error(), "spec.broker.config."+key+": managed by msgbench") {
			t.Errorf("%s: %v, want a refusal naming spec.broker.config and the key", key, err)
		}
	}
	for _, extra := range []map[string]string{{"a b": "1"}, {"k": "1\nlisteners.tcp.default = 5672"}, {"k=v": "1"}} {
		if _, err := (Config{Extra: extra}).Render(); err == nil || !strings.Contains(err.Error(), "spec.broker.config") {
			t.Errorf("%q: %v, want a refusal", extra, err)
		}
	}
	// Keys that only start like a managed one are the user's.
	if _, err := (Config{Extra: map[string]string{"log.file.level": "debug", "log.file.rotation.count": "1"}}).Render(); err != nil {
		t.Errorf("unmanaged keys refused: %v", err)
	}
}

// TestNotInstalled: without RabbitMQ, Start says how to install it, before anything starts.
func TestNotInstalled(t *testing.T) {
	t.Setenv(BinaryEnv, filepath.Join(t.TempDir(), "missing"))
	_, err := Start(context.Background(), Options{})
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "hack/apt-packages.sh rabbitmq-server") {
		t.Errorf("Start without RabbitMQ: %v", err)
	}
	// A wrong spec.broker.config is the first thing said, installed or not.
	_, err = Start(context.Background(), Options{Extra: map[string]string{"listeners.tcp.default": "5672"}})
	if err == nil || !strings.Contains(err.Error(), `spec.broker.config.listeners.tcp.default: managed by msgbench`) {
		t.Errorf("Start with a managed key: %v", err)
	}
}

// TestCheckConfigRefusesUnknownKeys: a key no schema of the node or its MQTT plugins defines
// stops RabbitMQ at boot, so it is refused naming the field; keys one version knows and the
// other does not are judged by the broker's version.
func TestCheckConfigRefusesUnknownKeys(t *testing.T) {
	for _, tc := range []struct {
		key, version, want string // want "" accepts
	}{
		{"foo.bar", "", "spec.broker.config.foo.bar: not a rabbitmq.conf key"},
		{"foo.bar", "3.10.8", "spec.broker.config.foo.bar: not a rabbitmq.conf key of RabbitMQ 3.10"},
		{"management.tcp.port", "4.1.4", "spec.broker.config.management.tcp.port: not a rabbitmq.conf key"}, // plugin not enabled
		{"mqtt.exchange", "3.10.8", ""},
		{"mqtt.exchange", "4.1.4", ""},
		{"vm_memory_high_watermark.relative", "", ""},
		{"mqtt.max_session_expiry_interval_seconds", "4.1.4", ""},
		{"mqtt.max_session_expiry_interval_seconds", "3.10.8", "RabbitMQ 4.1 knows this key but RabbitMQ 3.10"},
		{"mqtt.max_session_expiry_interval_seconds", "", ""},
		{"auth_backends.1", "3.10.8", ""}, // a $num segment
		{"auth_backends.1.x.y", "3.10.8", "not a rabbitmq.conf key"},
		{"web_mqtt.cowboy_opts.max_keepalive", "4.1.4", ""},
		{"mqtt.allow_anonymous", "", "spec.broker.config.mqtt.allow_anonymous: managed by msgbench"},
	} {
		err := CheckConfig(map[string]string{tc.key: "1"}, tc.version)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s on %q: refused: %v", tc.key, tc.version, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s on %q: got %v, want %q", tc.key, tc.version, err, tc.want)
		}
	}
	// msgbench's own settings are keys of both versions.
	files, err := Config{Port: 1, TLSPort: 2, WSPort: 3, WSSPort: 4, BindAddress: "127.0.0.1", MemoryLimitBytes: 1}.Render()
	if err != nil {
		t.Fatal(err)
	}
	for k := range settings(t, files[ConfFile]) {
		if knownIn(k) != in3|in4 {
			t.Errorf("msgbench writes %s, which not both 3.10 and 4.1 know", k)
		}
	}
}
