// Package rabbitmq runs RabbitMQ with its MQTT plugin for a benchmark: the rabbitmq.conf and
// enabled_plugins msgbench writes (shared by the operator's ConfigMap and local runs) and a local
// broker process.
//
// The same files serve RabbitMQ 3.10 (Debian's package, local runs and the e2e image) and 4.x
// (the official image), so they use only settings both versions know: an unknown key stops
// RabbitMQ at boot (mqtt.default_user, for one, exists in 3.10 but not in 4.x).
package rabbitmq

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Names of the files Render writes.
const (
	ConfFile    = "rabbitmq.conf"
	PluginsFile = "enabled_plugins"
)

// Config is what msgbench needs from a RabbitMQ broker.
type Config struct {
	// Port of the plain MQTT listener (0: none). BindAddress restricts it (empty: all).
	Port        int
	BindAddress string

	// TLSPort of the MQTTS listener (0: none), with the PEM files and the TLS version ("1.2"
	// or "1.3") it accepts.
	TLSPort    int
	CAFile     string
	CertFile   string
	KeyFile    string
	TLSVersion string

	// WSPort and WSSPort are the MQTT-over-WebSocket listeners of the rabbitmq_web_mqtt plugin
	// (0: none; the plugin is enabled only with one), WSS with TLSPort's files, at WebSocketPath
	// (the plugin's default is /ws).
	WSPort, WSSPort int
	WebSocketPath   string

	// MaxInflight is the benchmark's mqtt.inflight; it becomes mqtt.prefetch, the most
	// unacknowledged QoS 1 messages RabbitMQ sends each subscriber (default 10, which would
	// cap a subscriber below the publishers' window).
	MaxInflight int

	// MemoryLimitBytes, when set, is the memory RabbitMQ computes its watermark from (a
	// container's limit: RabbitMQ would otherwise take the node's whole memory).
	MemoryLimitBytes int64

	// Extra holds spec.broker.config: more rabbitmq.conf keys. A key here replaces msgbench's
	// default for it (or for its family: vm_memory_high_watermark.*, disk_free_limit.*).
	Extra map[string]string
}

// managedKeys are the rabbitmq.conf keys msgbench sets from the spec, with why; an entry ending
// in "." covers every key under it.
var managedKeys = []struct{ key, why string }{
	{"listeners", "msgbench opens only the MQTT listeners"},
	{"listeners.", "msgbench opens only the MQTT listeners"},
	{"mqtt.listeners", "msgbench opens the listeners the benchmark needs"},
	{"mqtt.listeners.", "msgbench opens the listeners the benchmark needs"},
	{"ssl_options.", "TLS files and versions come from spec.tls"},
	{"web_mqtt.tcp.", "msgbench opens the listeners the benchmark needs"},
	{"web_mqtt.ssl.", "msgbench opens the listeners the benchmark needs"},
	{"web_mqtt.ws_path", "set spec.mqtt.webSocketPath"},
	{"mqtt.allow_anonymous", "the benchmark's clients log in anonymously"},
	{"mqtt.vhost", "the benchmark's clients use the default vhost"},
	{"mqtt.default_user", "the benchmark's clients log in anonymously as guest"},
	{"mqtt.default_pass", "the benchmark's clients log in anonymously as guest"},
	{"anonymous_login_user", "the benchmark's clients log in anonymously as guest"},
	{"anonymous_login_pass", "the benchmark's clients log in anonymously as guest"},
	{"loopback_users", "the benchmark's clients connect as guest from other hosts"},
	{"loopback_users.", "the benchmark's clients connect as guest from other hosts"},
	{"default_user", "the benchmark's clients log in anonymously as guest"},
	{"default_pass", "the benchmark's clients log in anonymously as guest"},
	{"default_vhost", "the benchmark's clients use the default vhost"},
	{"default_permissions.", "the benchmark's clients need guest's permissions"},
	{"mqtt.prefetch", "set spec.mqtt.inflight"},
	{"cluster_formation.", "msgbench runs one node"},
	{"log.file", "logs go to the console"},
	{"log.dir", "logs go to the console"},
}

// ManagedKeys are the keys spec.broker.config cannot set (an entry ending in "." covers every
// key under it), for the API's admission rule.
var ManagedKeys = func() []string {
	var out []string
	for _, m := range managedKeys {
		out = append(out, m.key)
	}
	return out
}()

// managed returns why key is msgbench's, or "".
func managed(key string) string {
	for _, m := range managedKeys {
		if key == m.key || (strings.HasSuffix(m.key, ".") && strings.HasPrefix(key, m.key)) {
			return m.why
		}
	}
	return ""
}

// schemaVersions says which RabbitMQ versions' schemas define a key (schema_keys.go).
type schemaVersions uint8

const (
	in3 schemaVersions = 1 << iota // RabbitMQ 3.10.8
	in4                            // RabbitMQ 4.1.4
)

// CheckConfig refuses a spec.broker.config key msgbench manages, and one RabbitMQ would stop at
// boot on ("Conf file attempted to set unknown variable"): a key that no mapping of the node's
// or the enabled MQTT plugins' cuttlefish schemas defines (schema_keys.go). version is the
// broker's ("3.10.8", "4.1.4", from the installed package or the image tag): a 3.x version is
// checked against 3.10.8's schemas, a 4.x one against 4.1.4's, and "" or another major version
// against both together. Keys of other plugins (management.*, prometheus.*) are refused: msgbench
// enables only rabbitmq_mqtt and rabbitmq_web_mqtt, and RabbitMQ refuses keys of plugins it has
// not enabled. Local runs (before the broker starts) and the operator (before it creates
// anything) call it, as they call caps.Check: which keys exist depends on the version, which
// admission does not know (Render checks only what the spec alone decides).
func CheckConfig(extra map[string]string, version string) error {
	want, name := in3|in4, "RabbitMQ 3.10 or 4.1"
	switch {
	case strings.HasPrefix(version, "3."):
		want, name = in3, "RabbitMQ 3.10"
	case strings.HasPrefix(version, "4."):
		want, name = in4, "RabbitMQ 4.1"
	}
	if err := checkKeys(extra); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		field := "spec.broker.config." + k
		known := knownIn(k)
		if known&want != 0 {
			continue
		}
		if known != 0 {
			other := "4.1"
			if known&in3 != 0 {
				other = "3.10"
			}
			return fmt.Errorf("%s: RabbitMQ %s knows this key but %s (the broker here) does not, and would stop at boot; remove it", field, other, name)
		}
		return fmt.Errorf("%s: not a rabbitmq.conf key of %s or of its MQTT plugins (rabbitmq_mqtt, rabbitmq_web_mqtt, the only plugins "+
			"msgbench enables): RabbitMQ would stop at boot (\"unknown variable\"); see https://www.rabbitmq.com/docs/configure and docs/brokers.md", field, name)
	}
	return nil
}

// checkKeys refuses what the spec alone decides, whatever the version (Render checks it): a
// key msgbench manages, one that is not a plain name, a value that spans lines.
func checkKeys(extra map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		field := "spec.broker.config." + k
		if why := managed(k); why != "" {
			return fmt.Errorf("%s: managed by msgbench (%s); remove it", field, why)
		}
		if k == "" || strings.ContainsAny(k, " \t\r\n=#") {
			return fmt.Errorf("spec.broker.config: %q is not a rabbitmq.conf key", k)
		}
		if strings.ContainsAny(extra[k], "\r\n") {
			return fmt.Errorf("%s: the value spans lines; a rabbitmq.conf setting is one line", field)
		}
	}
	return nil
}

// knownIn returns the versions whose schemas define key: a schema segment beginning with '$'
// matches any one segment.
func knownIn(key string) schemaVersions {
	if v, ok := schemaKeys[key]; ok {
		return v
	}
	parts := strings.Split(key, ".")
	var out schemaVersions
	for pattern, v := range schemaKeys {
		if !strings.Contains(pattern, "$") {
			continue
		}
		ps := strings.Split(pattern, ".")
		if len(ps) != len(parts) {
			continue
		}
		ok := true
		for i, p := range ps {
			if parts[i] == "" || (!strings.HasPrefix(p, "$") && p != parts[i]) {
				ok = false
				break
			}
		}
		if ok {
			out |= v
		}
	}
	return out
}

// Render returns the files RabbitMQ reads: rabbitmq.conf and enabled_plugins. Comments say why
// each setting differs from RabbitMQ's default.
func (c Config) Render() (map[string]string, error) {
	if err := checkKeys(c.Extra); err != nil {
		return nil, err
	}
	inflight := c.MaxInflight
	if inflight <= 0 {
		inflight = 20
	}
	var b strings.Builder
	line := func(comment, format string, args ...any) {
		if comment != "" {
			b.WriteString("# " + comment + "\n")
		}
		fmt.Fprintf(&b, format+"\n", args...)
	}
	// defaults writes msgbench's setting unless spec.broker.config sets a key of its family.
	defaults := func(family, comment, format string, args ...any) {
		for k := range c.Extra {
			if k == family || strings.HasPrefix(k, family+".") {
				return
			}
		}
		line(comment, format, args...)
	}
	b.WriteString("# rabbitmq.conf written by msgbench for one benchmark run\n")
	line("msgbench measures MQTT: no AMQP listener", "listeners.tcp = none")
	if c.Port > 0 {
		line("", "mqtt.listeners.tcp.default = %s", listenerAddress(c.Port, c.BindAddress))
	} else {
		line("", "mqtt.listeners.tcp = none")
	}
	if c.TLSPort > 0 {
		line("", "mqtt.listeners.ssl.default = %s", listenerAddress(c.TLSPort, c.BindAddress))
		line("", "ssl_options.cacertfile = %s", c.CAFile)
		line("", "ssl_options.certfile = %s", c.CertFile)
		line("", "ssl_options.keyfile = %s", c.KeyFile)
		line("clients present no certificate", "ssl_options.verify = verify_none")
		line("", "ssl_options.fail_if_no_peer_cert = false")
		line("", "ssl_options.versions.1 = %s", tlsVersion(c.TLSVersion))
	}
	if c.WSPort > 0 {
		line("MQTT over WebSocket (rabbitmq_web_mqtt)", "web_mqtt.tcp.port = %d", c.WSPort)
		if c.BindAddress != "" {
			line("", "web_mqtt.tcp.ip = %s", c.BindAddress)
		}
	}
	if c.WSSPort > 0 {
		line("", "web_mqtt.ssl.port = %d", c.WSSPort)
		if c.BindAddress != "" {
			line("", "web_mqtt.ssl.ip = %s", c.BindAddress)
		}
		line("", "web_mqtt.ssl.cacertfile = %s", c.CAFile)
		line("", "web_mqtt.ssl.certfile = %s", c.CertFile)
		line("", "web_mqtt.ssl.keyfile = %s", c.KeyFile)
		line("", "web_mqtt.ssl.versions.1 = %s", tlsVersion(c.TLSVersion))
	}
	if c.WSPort > 0 || c.WSSPort > 0 {
		path := c.WebSocketPath
		if path == "" {
			path = "/mqtt"
		}
		line("", "web_mqtt.ws_path = %s", path)
	}
	line("the benchmark's clients connect without credentials, as the guest user, from other pods",
		"mqtt.allow_anonymous = true")
	line("", "loopback_users = none")
	line("", "mqtt.vhost = /")
	line("the benchmark's inflight window also applies towards subscribers (default 10)",
		"mqtt.prefetch = %d", inflight)
	line("thousands of clients connect at once (default backlog 128); setting any option drops the defaults, so nodelay too",
		"mqtt.tcp_listen_options.backlog = 4096")
	line("", "mqtt.tcp_listen_options.nodelay = true")
	if c.MemoryLimitBytes > 0 {
		defaults("total_memory_available_override_value", "the container's memory limit, not the node's memory",
			"total_memory_available_override_value = %d", c.MemoryLimitBytes)
	}
	defaults("vm_memory_high_watermark", "a memory alarm blocks every publisher: allow most of the memory (default 0.4 in 3.10)",
		"vm_memory_high_watermark.relative = 0.8")
	defaults("disk_free_limit", "a disk alarm blocks every publisher; the broker's data is scratch that goes with the run",
		"disk_free_limit.absolute = 16MB")
	line("logs go to the console (kubectl logs, the local broker's log); info logs a line per connection",
		"log.console = true")
	defaults("log.console.level", "", "log.console.level = warning")
	defaults("log.console.use_colors", "plain lines: colour codes would fill the log buffer and kubectl logs", "log.console.use_colors = off")
	defaults("log.console.formatter.single_line", "", "log.console.formatter.single_line = on")
	line("", "log.file = false")
	for _, k := range slices.Sorted(maps.Keys(c.Extra)) {
		fmt.Fprintf(&b, "%s = %s\n", k, c.Extra[k])
	}
	// Only the MQTT plugins: no management UI or Prometheus endpoint using the broker's CPU.
	plugins := "[rabbitmq_mqtt].\n"
	if c.WSPort > 0 || c.WSSPort > 0 {
		plugins = "[rabbitmq_mqtt,rabbitmq_web_mqtt].\n"
	}
	return map[string]string{ConfFile: b.String(), PluginsFile: plugins}, nil
}

// tlsVersion is spec.tls.version in rabbitmq.conf's terms.
func tlsVersion(v string) string {
	if v == "1.2" {
		return "tlsv1.2"
	}
	return "tlsv1.3"
}

// listenerAddress is a listener in rabbitmq.conf's form: a port, or address:port (IPv6
// unbracketed, as RabbitMQ documents it).
func listenerAddress(port int, bind string) string {
	if bind == "" {
		return fmt.Sprint(port)
	}
	return fmt.Sprintf("%s:%d", bind, port)
}
