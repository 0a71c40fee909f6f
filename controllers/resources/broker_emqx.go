package resources

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// EMQX 5 (emqx/emqx, Apache 2.0 up to 5.8; 5.9 moved to the BSL): the image runs as emqx (uid
// 1000) from /opt/emqx, writes only data/ (generated app.config and vm.args, mnesia) and log/,
// and reads etc/emqx.conf (HOCON) over etc/base.hocon. Its docker images (Debian 12, amd64 and
// arm64) are built with QUIC (quicer/msquic): only BUILD_WITHOUT_QUIC=1 drops it, which
// releases do not set.
const emqxUID = 1000

// EMQXConfigKeys are the spec.broker.config keys msgbench passes to EMQX: HOCON paths from EMQX
// 5.8's configuration manual (docs.emqx.com/en/emqx/v5.8/hocon/), exact or, ending in '.', a
// prefix. Tuning only: listeners, TLS, node identity, clustering and access control follow from
// the spec (EMQXManagedConfigKeys).
var EMQXConfigKeys = []string{
	"mqtt.", "force_shutdown.", "force_gc.", "overload_protection.", "conn_congestion.", "sysmon.", "alarm.",
	"flapping_detect.", "sys_topics.", "retainer.", "durable_sessions.", "log.console.", "log.file.",
	"node.process_limit", "node.max_ports", "node.dist_buffer_size", "node.max_ets_tables", "node.broker_pool_size",
	"node.generic_pool_size", "node.channel_cleanup_batch_size", "node.global_gc_interval",
	"listeners.tcp.default.tcp_options.", "listeners.ssl.default.tcp_options.",
	"listeners.tcp.default.acceptors", "listeners.ssl.default.acceptors", "listeners.quic.default.acceptors",
	"listeners.quic.default.idle_timeout", "listeners.quic.default.handshake_idle_timeout",
	"listeners.quic.default.keep_alive_interval", "listeners.quic.default.conn_flow_control_window",
	"listeners.quic.default.stream_recv_window_default", "listeners.quic.default.initial_window_packets",
	"listeners.quic.default.send_buffering_enabled", "listeners.quic.default.pacing_enabled",
}

// EMQXManagedConfigKeys name, for a clear refusal, the settings msgbench writes itself.
var EMQXManagedConfigKeys = []string{"listeners.", "node.", "cluster.", "rpc.", "dashboard.", "authentication", "authorization.", "api_key."}

// emqxPod runs EMQX from an emqx.conf msgbench renders: plain MQTT on 1883 always, MQTTS on
// 8883 with the run's certificate, or EMQX's own MQTT-over-QUIC listener on UDP 14567 (ALPN
// "mqtt", TLS 1.3) for protocol mqtt-quic; anonymous access; no connection or rate limit.
func emqxPod(mb *v1alpha1.MessagingBenchmark, _ Config) (*corev1.ConfigMap, brokerPod, error) {
	conf, err := emqxConf(mb)
	if err != nil {
		return nil, brokerPod{}, err
	}
	mounts := []corev1.VolumeMount{
		// Only emqx.conf: etc/ also holds base.hocon, vm.args and the schema files EMQX reads.
		{Name: "config", MountPath: "/opt/emqx/etc/emqx.conf", SubPath: "emqx.conf", ReadOnly: true},
		{Name: "data", MountPath: "/opt/emqx/data"},
		{Name: "log", MountPath: "/opt/emqx/log"},
		{Name: "tmp", MountPath: "/tmp"},
	}
	volumes := []corev1.Volume{configVolume(mb), emptyDir("data"), emptyDir("log"), emptyDir("tmp")}
	if BrokerTLS(mb) {
		mounts = append(mounts, corev1.VolumeMount{Name: "certs", MountPath: emqxCertDir, ReadOnly: true})
		volumes = append(volumes, certsVolume(mb))
	}
	sec := restrictedPod(emqxUID)
	sec.FSGroup = ptr.To[int64](emqxUID) // the key file stays group-readable only
	return brokerConfigMap(mb, map[string]string{"emqx.conf": conf}), brokerPod{
		Container: corev1.Container{
			Name:    "emqx",
			Command: []string{"/usr/bin/docker-entrypoint.sh", "/opt/emqx/bin/emqx", "foreground"},
			Env: []corev1.EnvVar{
				// A fixed loopback node name: the entrypoint would otherwise name the node after
				// the pod IP, and nothing outside the pod needs Erlang distribution.
				{Name: "EMQX_NODE__NAME", Value: "emqx@127.0.0.1"},
				// Erlang distribution (port 4370) listens on loopback only: a single node has no
				// peers, and a reachable distribution port with a known cookie runs any code.
				{Name: "ERL_ZFLAGS", Value: "-kernel inet_dist_use_interface {127,0,0,1}"},
			},
			SecurityContext: restrictedContainer(),
			VolumeMounts:    mounts,
		},
		Volumes:  volumes,
		Security: sec,
	}, nil
}

const emqxCertDir = "/opt/emqx/msgbench-certs"

// emqxConf renders emqx.conf for mb.
func emqxConf(mb *v1alpha1.MessagingBenchmark) (string, error) {
	if err := checkBrokerConfig("EMQX", mb.Spec.Broker.Config, EMQXConfigKeys, EMQXManagedConfigKeys); err != nil {
		return "", err
	}
	t := confTree{}
	set := func(path, hocon string) { _ = t.set(path, hocon) } // msgbench's own paths never clash
	set("node.name", `"emqx@127.0.0.1"`)
	set("node.cookie", `"msgbench-emqx"`) // distribution is bound to loopback (ERL_ZFLAGS)
	set("node.data_dir", `"/opt/emqx/data"`)
	set("cluster.name", "emqxcl")
	set("cluster.discovery_strategy", "manual")
	set("rpc.listen_address", `"127.0.0.1"`) // gen_rpc, like distribution, serves only other nodes
	// The dashboard's default credentials (admin/public) would be open inside the cluster, and
	// msgbench does not use it.
	set("dashboard.listeners.http.bind", "0")
	// Anonymous clients, no ACL: EMQX has no authenticator unless one is configured, and
	// the default ACL file refuses subscriptions to "#".
	set("authorization.no_match", "allow")
	set("authorization.sources", "[]")
	inflight := mqttInflight(mb)
	// The benchmark's window towards every subscriber; also the Receive Maximum EMQX grants
	// MQTT 5 publishers.
	set("mqtt.max_inflight", strconv.Itoa(min(inflight, 65535)))
	set("mqtt.max_awaiting_rel", "infinity") // incoming QoS 2 awaiting PUBREL (default 100)
	set("mqtt.max_mqueue_len", strconv.Itoa(brokerQueueLen))
	set("mqtt.max_packet_size", `"256MB"`) // MQTT's own limit; the default 1MB refuses large payloads
	listener := func(name, bind string) {
		set("listeners."+name+".bind", strconv.Quote(bind))
		set("listeners."+name+".max_connections", "infinity")
		for _, r := range []string{"max_conn_rate", "messages_rate", "bytes_rate"} {
			set("listeners."+name+"."+r, "infinity")
		}
	}
	listener("tcp.default", fmt.Sprintf("0.0.0.0:%d", MQTTPort))
	set("listeners.ws.default.enable", "false")
	set("listeners.wss.default.enable", "false")
	quic := mb.Spec.Protocol == v1alpha1.ProtocolMQTTQUIC && mb.Spec.GatewayMode() == ""
	tlsOpts := func(name string) {
		set("listeners."+name+".ssl_options.cacertfile", strconv.Quote(emqxCertDir+"/ca.crt"))
		set("listeners."+name+".ssl_options.certfile", strconv.Quote(emqxCertDir+"/tls.crt"))
		set("listeners."+name+".ssl_options.keyfile", strconv.Quote(emqxCertDir+"/tls.key"))
		set("listeners."+name+".ssl_options.verify", "verify_none")
	}
	switch {
	case quic:
		// EMQX's QUIC listener: ALPN "mqtt", TLS 1.3 (QUIC has no other), one stream per
		// session, as msgbench's mqtt-quic clients (loadgen/drivers/mqttquic) speak it.
		set("listeners.ssl.default.enable", "false")
		set("listeners.quic.default.enable", "true")
		listener("quic.default", fmt.Sprintf("0.0.0.0:%d", QUICPort))
		tlsOpts("quic.default")
	case BrokerTLS(mb):
		listener("ssl.default", fmt.Sprintf("0.0.0.0:%d", MQTTSPort))
		tlsOpts("ssl.default")
		set("listeners.ssl.default.ssl_options.versions", fmt.Sprintf(`["tlsv%s"]`, mb.Spec.ClientTLSVersion()))
	default:
		set("listeners.ssl.default.enable", "false")
	}
	for _, k := range slices.Sorted(maps.Keys(mb.Spec.Broker.Config)) {
		if err := t.set(k, hoconValue(mb.Spec.Broker.Config[k])); err != nil {
			return "", fmt.Errorf("spec.broker.config.%s: %w", k, err)
		}
	}
	var b strings.Builder
	b.WriteString("## emqx.conf rendered by msgbench for one benchmark run: listeners and limits follow from\n")
	b.WriteString("## the spec, spec.broker.config keys are merged in.\n")
	t.writeHOCON(&b, 0)
	return b.String(), nil
}

// brokerQueueLen is each client's queue of messages beyond the inflight window (EMQX
// max_mqueue_len, NanoMQ max_mqueue_len, HiveMQ max-queue-size, VerneMQ max_online_messages):
// the brokers' defaults (1000 to 2048) drop QoS 1/2 messages under load, which a benchmark
// would count as loss of the broker rather than of its configuration. Mosquitto's too.
const brokerQueueLen = 1000000

// mqttInflight is spec.mqtt.inflight (20 when unset, the CRD default).
func mqttInflight(mb *v1alpha1.MessagingBenchmark) int {
	if mb.Spec.MQTT.Inflight <= 0 {
		return 20
	}
	return int(mb.Spec.MQTT.Inflight)
}

// checkBrokerConfig refuses spec.broker.config keys that are not among a broker's documented
// keys msgbench accepts (exact keys, or prefixes ending in '.'), naming the managed ones.
func checkBrokerConfig(broker string, cfg map[string]string, allowed, managed []string) error {
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		if keyMatches(k, allowed) {
			if strings.ContainsAny(cfg[k], "\n\r\x00") {
				return fmt.Errorf("spec.broker.config.%s: the value has a line break or NUL; values are single-line settings", k)
			}
			continue
		}
		if keyMatches(k, managed) {
			return fmt.Errorf("spec.broker.config.%s: managed by msgbench for %s (listeners, TLS files and versions, node identity and access follow from the spec)", k, broker)
		}
		return fmt.Errorf("spec.broker.config.%s: not a %s setting msgbench accepts; accepted keys (exact, or prefixes ending in '.'): %s", k, broker, strings.Join(allowed, ", "))
	}
	return nil
}

func keyMatches(k string, list []string) bool {
	for _, p := range list {
		if k == p || (strings.HasSuffix(p, ".") && strings.HasPrefix(k, p)) {
			return true
		}
	}
	return false
}

// confTree is a nested configuration (HOCON blocks, XML elements) built from dotted paths;
// leaves hold the value as it is written.
type confTree map[string]any

func (t confTree) set(path, value string) error {
	parts := strings.Split(path, ".")
	node := t
	for i, p := range parts {
		if p == "" {
			return fmt.Errorf("empty path element in %q", path)
		}
		if i == len(parts)-1 {
			if _, isTree := node[p].(confTree); isTree {
				return fmt.Errorf("%q is a section, not a setting", path)
			}
			node[p] = value
			return nil
		}
		switch next := node[p].(type) {
		case confTree:
			node = next
		case nil:
			n := confTree{}
			node[p] = n
			node = n
		default:
			return fmt.Errorf("%q is a setting, so %q cannot be under it", strings.Join(parts[:i+1], "."), path)
		}
	}
	return nil
}

func (t confTree) writeHOCON(b *strings.Builder, depth int) {
	indent := strings.Repeat("  ", depth)
	for _, k := range slices.Sorted(maps.Keys(t)) {
		switch v := t[k].(type) {
		case confTree:
			fmt.Fprintf(b, "%s%s {\n", indent, k)
			v.writeHOCON(b, depth+1)
			fmt.Fprintf(b, "%s}\n", indent)
		case string:
			fmt.Fprintf(b, "%s%s = %s\n", indent, k, v)
		}
	}
}

// hoconUnquoted are values HOCON reads the same unquoted: numbers, sizes, durations, booleans,
// enum atoms. Anything else is written as a quoted string.
var hoconUnquoted = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.]*$`)

func hoconValue(v string) string {
	if hoconUnquoted.MatchString(v) {
		return v
	}
	return strconv.Quote(v)
}
