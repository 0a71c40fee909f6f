package mosquitto

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/msgbench/msgbench/internal/similar"
)

// knownKeys are the mosquitto.conf keys Mosquitto 2.0.11 reads (Debian's package, local runs and
// the image the operator runs): every top-level token src/conf.c (tag v2.0.11) compares a line's
// first word with, which is what mosquitto.conf(5) documents plus the aliases it accepts
// (maximum_qos, retained_persistence, plugin, plugin_opt_*, addresses). Any other key stops
// Mosquitto at start ("Unknown configuration variable"). An entry ending in '_' is a prefix.
var knownKeys = []string{
	"acl_file", "allow_anonymous", "allow_duplicate_messages", "allow_zero_length_clientid",
	"auth_opt_", "auth_plugin", "auth_plugin_deny_special_chars", "auto_id_prefix",
	"autosave_interval", "autosave_on_changes", "bind_address", "bind_interface", "cafile",
	"capath", "certfile", "check_retain_source", "ciphers", "ciphers_tls1.3", "clientid_prefixes",
	"connection_messages", "crlfile", "dhparamfile", "http_dir", "include_dir", "keyfile",
	"listener", "log_dest", "log_facility", "log_timestamp", "log_timestamp_format", "log_type",
	"max_connections", "max_inflight_bytes", "max_inflight_messages", "max_keepalive",
	"max_packet_size", "max_qos", "max_queued_bytes", "max_queued_messages", "max_topic_alias",
	"maximum_qos", "memory_limit", "message_size_limit", "mount_point", "password_file",
	"per_listener_settings", "persistence", "persistence_file", "persistence_location",
	"persistent_client_expiration", "pid_file", "plugin", "plugin_opt_", "port", "protocol",
	"psk_file", "psk_hint", "queue_qos0_messages", "require_certificate", "retain_available",
	"retained_persistence", "retry_interval", "set_tcp_nodelay", "socket_domain", "sys_interval",
	"tls_engine", "tls_engine_kpass_sha1", "tls_keyform", "tls_version", "upgrade_outgoing_qos",
	"use_identity_as_username", "use_subject_as_username", "use_username_as_clientid", "user",
	"websockets_headers_size", "websockets_log_level",
}

// bridgeKeys are the keys of a bridge section, which begins with a connection line; Mosquitto
// refuses them anywhere else. msgbench runs one broker with no bridge (and writes
// spec.broker.config in key order, so no section could be formed).
var bridgeKeys = []string{
	"address", "addresses", "bridge_alpn", "bridge_attempt_unsubscribe", "bridge_bind_address",
	"bridge_cafile", "bridge_capath", "bridge_certfile", "bridge_identity", "bridge_insecure",
	"bridge_keyfile", "bridge_max_packet_size", "bridge_outgoing_retain", "bridge_protocol_version",
	"bridge_psk", "bridge_require_ocsp", "bridge_tls_version", "cleansession", "clientid",
	"connection", "idle_timeout", "keepalive_interval", "local_cleansession", "local_clientid",
	"local_password", "local_username", "notification_topic", "notifications",
	"notifications_local_only", "password", "remote_clientid", "remote_password", "remote_username",
	"restart_timeout", "round_robin", "start_type", "threshold", "topic", "try_private", "username",
}

// accessKeys decide who may connect and publish; msgbench's clients connect anonymously, with no
// credentials, and publish and subscribe anywhere, so msgbench writes allow_anonymous true and
// no password, ACL, PSK or plugin. An entry ending in '_' is a prefix.
var accessKeys = []string{"allow_anonymous", "password_file", "acl_file", "psk_file", "auth_plugin", "plugin", "auth_opt_", "plugin_opt_"}

// KnownKeys are the mosquitto.conf keys spec.broker.config may hold (an entry ending in '_' is
// a prefix), and RefusedKeys the ones msgbench manages or that change who may connect: the two
// lists the CRD's admission rules repeat (brokers/caps holds them equal).
func KnownKeys() []string { return slices.Clone(knownKeys) }

// RefusedKeys are the keys spec.broker.config cannot set (see KnownKeys).
func RefusedKeys() []string {
	out := slices.Clone(accessKeys)
	for k := range managedKeys {
		out = append(out, k)
	}
	return out
}

func matches(key string, list []string) bool {
	for _, p := range list {
		if key == p || (strings.HasSuffix(p, "_") && strings.HasPrefix(key, p) && len(key) > len(p)) {
			return true
		}
	}
	return false
}

// CheckConfig refuses a spec.broker.config key Mosquitto does not know, one msgbench manages
// (listeners, TLS files, access) and a bridge's, naming the field and what to do. Local runs
// (before the broker starts) and the operator (before it creates anything) call it, and Render.
func CheckConfig(extra map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		field := "spec.broker.config." + k
		if why, ok := managedKeys[k]; ok {
			return fmt.Errorf("%s: managed by msgbench (%s); remove it", field, why)
		}
		if matches(k, accessKeys) {
			return fmt.Errorf("%s: managed by msgbench: the benchmark's clients connect anonymously and may publish and subscribe "+
				"to every topic, so msgbench writes allow_anonymous true and no password file, ACL, PSK or plugin; remove it", field)
		}
		if matches(k, bridgeKeys) {
			return fmt.Errorf("%s: a bridge setting, valid only after a connection line; msgbench runs one Mosquitto with no bridge; remove it", field)
		}
		if !matches(k, knownKeys) {
			hint := ""
			if s := closest(k, append(append([]string(nil), knownKeys...), bridgeKeys...)); s != "" {
				hint = fmt.Sprintf("; did you mean %s", s)
			}
			return fmt.Errorf("%s: not a mosquitto.conf key (Mosquitto 2.0 would refuse to start: \"Unknown configuration variable\")%s. "+
				"See mosquitto.conf(5) and docs/brokers.md", field, hint)
		}
		if v := extra[k]; strings.ContainsAny(v, "\r\n") {
			return fmt.Errorf("%s: the value spans lines; a mosquitto.conf setting is one line", field)
		}
	}
	return nil
}

// closest is the key within edit distance 3 of k (at most a third of k), or "".
func closest(k string, keys []string) string {
	best, bestD := "", min(3, len(k)/3)+1
	for _, c := range keys {
		c = strings.TrimSuffix(c, "_")
		if d := similar.Distance(k, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}
