package resources

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/plan"
)

// VerneMQ (vernemq/vernemq): Erlang as vernemq (uid 10000) from /vernemq, configured by
// etc/vernemq.conf (cuttlefish) and etc/vm.args, writing data/ (generated configs, message
// store, metadata) and log/. The image's start script turns DOCKER_VERNEMQ_* variables into
// vernemq.conf lines by editing etc/ in place, which a read-only root forbids, so msgbench
// renders both files and starts the release directly.
//
// The official images hold VerneMQ's binary packages, which are under the VerneMQ EULA: they
// start only with accept_eula = yes, and commercial use needs a paid subscription. msgbench never
// accepts it for the user: spec.broker.config must say accept_eula: "yes" (see verneMQEULA).
const verneMQUID = 10000

// VerneMQConfigKeys are the spec.broker.config keys msgbench passes to VerneMQ: vernemq.conf keys
// of VerneMQ 2.1's schema (vmq_server.schema, vmq.schema; docs.vernemq.com "the vernemq.conf
// file"), exact or, ending in '.', a prefix, plus accept_eula. Listeners, TLS, authentication
// plugins, node name and cookie, and Erlang VM flags (vm.args is msgbench's) are managed
// (VerneMQManagedConfigKeys).
var VerneMQConfigKeys = []string{
	"accept_eula",
	"max_inflight_messages", "max_online_messages", "max_offline_messages", "max_message_size", "max_message_rate",
	"upgrade_outgoing_qos", "retry_interval", "max_client_id_size", "persistent_client_expiration", "max_last_will_delay",
	"max_drain_time", "max_msgs_per_drain_step", "queue_type", "override_max_online_messages",
	"receive_max_client", "receive_max_broker", "topic_alias_max_client", "topic_alias_max_broker", "topic_max_depth",
	"shared_subscription_policy", "suppress_lwt_on_session_takeover", "coordinate_registrations",
	"allow_register_during_netsplit", "allow_publish_during_netsplit", "allow_subscribe_during_netsplit",
	"allow_unsubscribe_during_netsplit", "mqtt_connect_timeout", "systree_enabled", "systree_interval",
	"tcp_listen_options", "listener.max_connections", "listener.nr_of_acceptors",
	"listener.tcp.buffer_sizes", "listener.ssl.buffer_sizes", "listener.tcp.nr_of_acceptors", "listener.ssl.nr_of_acceptors",
	"log.console.level",
}

// VerneMQManagedConfigKeys name, for a clear refusal, the settings msgbench writes itself.
var VerneMQManagedConfigKeys = []string{
	"listener.", "allow_anonymous", "plugins.", "vmq_acl.", "vmq_passwd.", "nodename", "distributed_cookie",
	"erlang.", "log.", "platform_data_dir", "metadata_plugin", "plumtree.", "setup.", "vmq_generic_msg_store.",
}

// verneMQImage is the repository of the official images, whose binaries are under the EULA.
const verneMQImage = "vernemq/vernemq"

// verneMQPod runs VerneMQ from a vernemq.conf and vm.args msgbench renders: plain MQTT on 1883
// always, MQTTS on 8883 with the run's certificate and the spec's TLS version, anonymous access
// with an allow-all ACL, the spec's inflight window, a deep queue, no connection limit.
func verneMQPod(mb *v1alpha1.MessagingBenchmark, p *plan.Plan, cfg Config) (*corev1.ConfigMap, brokerPod, error) {
	conf, err := verneMQConf(mb, p, cfg.BrokerImage(mb))
	if err != nil {
		return nil, brokerPod{}, err
	}
	mounts := []corev1.VolumeMount{
		{Name: "config", MountPath: "/vernemq/etc/vernemq.conf", SubPath: "vernemq.conf", ReadOnly: true},
		{Name: "config", MountPath: "/vernemq/etc/vm.args", SubPath: "vm.args", ReadOnly: true},
		{Name: "config", MountPath: "/vernemq/etc/msgbench", ReadOnly: true},
		{Name: "data", MountPath: "/vernemq/data"},
		{Name: "log", MountPath: "/vernemq/log"},
		{Name: "tmp", MountPath: "/tmp"},
	}
	volumes := []corev1.Volume{configVolume(mb), emptyDir("data"), emptyDir("log"), emptyDir("tmp")}
	if p.Broker.TLS {
		mounts, volumes = withCerts(mb, verneMQCertDir, mounts, volumes)
	}
	return brokerConfigMap(mb, map[string]string{"vernemq.conf": conf, "vm.args": verneMQVMArgs, "vmq.acl": "topic #\n"}), restrictedBrokerPod(verneMQUID, corev1.Container{
		Name:    "vernemq",
		Command: []string{"/vernemq/bin/vernemq", "console", "-noshell", "-noinput"},
		// epmd, which the node starts, listens on loopback only: a single node has no peers.
		Env:          []corev1.EnvVar{{Name: "ERL_EPMD_ADDRESS", Value: "127.0.0.1"}},
		VolumeMounts: mounts,
	}, volumes), nil
}

const verneMQCertDir = "/vernemq/etc/certs"

// verneMQVMArgs are the image's vm.args (docker-vernemq files/vm.args) with the crash dump in
// the writable log/ and Erlang distribution bound to loopback.
const verneMQVMArgs = `+P 512000
+e 256000
-env ERL_CRASH_DUMP /vernemq/log/erl_crash.dump
-env ERL_FULLSWEEP_AFTER 0
+Q 512000
+A 64
-setcookie msgbench-vernemq
-name VerneMQ@127.0.0.1
+K true
+W w
+sbwt none
+sbwtdcpu none
+sbwtdio none
-smp enable
+zdbbl 32768
-kernel inet_dist_use_interface {127,0,0,1}
`

// verneMQEULA refuses to run the official image unless the benchmark accepts VerneMQ's EULA
// itself: accepting it is a promise to pay for commercial use, which msgbench cannot make.
func verneMQEULA(mb *v1alpha1.MessagingBenchmark, image string) error {
	accepted := mb.Spec.Broker.Config["accept_eula"]
	if v, ok := mb.Spec.Broker.Config["accept_eula"]; ok && v != "yes" {
		return fmt.Errorf("spec.broker.config.accept_eula: %q; the only value is \"yes\" (leave the key out for an image built from source)", v)
	}
	repo, _, _ := strings.Cut(image, "@") // a digest
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i] // a tag
	}
	repo = strings.TrimPrefix(strings.TrimPrefix(repo, "docker.io/"), "index.docker.io/")
	if repo == verneMQImage && accepted != "yes" {
		return fmt.Errorf("spec.broker.config.accept_eula: the official VerneMQ image %s holds binaries under the VerneMQ EULA (https://vernemq.com/end-user-license-agreement), "+
			"which needs a paid subscription for commercial use; msgbench does not accept it for you: set spec.broker.config accept_eula: \"yes\" to accept it, "+
			"or set spec.broker.image to a VerneMQ image built from source", image)
	}
	return nil
}

// verneMQConf renders vernemq.conf for mb running image.
func verneMQConf(mb *v1alpha1.MessagingBenchmark, p *plan.Plan, image string) (string, error) {
	if err := checkBrokerConfig("VerneMQ", mb.Spec.Broker.Config, VerneMQConfigKeys, VerneMQManagedConfigKeys); err != nil {
		return "", err
	}
	if err := verneMQEULA(mb, image); err != nil {
		return "", err
	}
	c := map[string]string{
		"nodename":           "VerneMQ@127.0.0.1",
		"distributed_cookie": "msgbench-vernemq",
		"allow_anonymous":    "on",
		// Anonymous clients still need an ACL that allows them: without an auth_on_publish
		// plugin VerneMQ refuses every publish.
		"plugins.vmq_passwd":       "off",
		"plugins.vmq_acl":          "on",
		"vmq_acl.acl_file":         "/vernemq/etc/msgbench/vmq.acl",
		"listener.tcp.default":     fmt.Sprintf("0.0.0.0:%d", MQTTPort),
		"listener.vmq.clustering":  "127.0.0.1:44053",
		"listener.max_connections": "infinity",
		"max_inflight_messages":    strconv.Itoa(mqttInflight(mb)),
		"max_online_messages":      strconv.Itoa(brokerQueueLen),
		"max_offline_messages":     strconv.Itoa(brokerQueueLen),
		"max_message_size":         "0", // no limit beyond MQTT's
		"max_message_rate":         "0", // no per-session rate limit
		"log.console":              "console",
		"log.console.level":        "warning",
	}
	if p.Broker.TLS {
		c["listener.ssl.default"] = fmt.Sprintf("0.0.0.0:%d", MQTTSPort)
		c["listener.ssl.cafile"] = verneMQCertDir + "/ca.crt"
		c["listener.ssl.certfile"] = verneMQCertDir + "/tls.crt"
		c["listener.ssl.keyfile"] = verneMQCertDir + "/tls.key"
		c["listener.ssl.tls_version"] = "tlsv" + p.Broker.TLSVersion
		c["listener.ssl.require_certificate"] = "off"
	}
	if brokerWebSocket(mb) {
		if wsPath(mb) != "/mqtt" { // the API refuses it too
			return "", fmt.Errorf("spec.mqtt.webSocketPath: VerneMQ serves MQTT over WebSocket at /mqtt only, not %s", wsPath(mb))
		}
		c["listener.ws.default"] = fmt.Sprintf("0.0.0.0:%d", wsPort(mb))
		if p.Broker.TLS {
			c["listener.wss.default"] = fmt.Sprintf("0.0.0.0:%d", wssPort(mb))
			c["listener.wss.cafile"] = verneMQCertDir + "/ca.crt"
			c["listener.wss.certfile"] = verneMQCertDir + "/tls.crt"
			c["listener.wss.keyfile"] = verneMQCertDir + "/tls.key"
			c["listener.wss.tls_version"] = "tlsv" + p.Broker.TLSVersion
			c["listener.wss.require_certificate"] = "off"
		}
	}
	maps.Copy(c, mb.Spec.Broker.Config) // allowed keys, accept_eula among them
	var b strings.Builder
	b.WriteString("## vernemq.conf rendered by msgbench for one benchmark run: listeners and limits follow from\n")
	b.WriteString("## the spec, spec.broker.config keys are merged in. No HTTP listener.\n")
	for _, k := range slices.Sorted(maps.Keys(c)) {
		fmt.Fprintf(&b, "%s = %s\n", k, c[k])
	}
	return b.String(), nil
}
