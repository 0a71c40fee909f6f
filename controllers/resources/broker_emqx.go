package resources

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/plan"
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
func emqxPod(mb *v1alpha1.MessagingBenchmark, p *plan.Plan, _ Config) (*corev1.ConfigMap, brokerPod, error) {
	conf, err := emqxConf(mb, p)
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
	if p.Broker.TLS {
		mounts, volumes = withCerts(mb, emqxCertDir, mounts, volumes)
	}
	return brokerConfigMap(mb, map[string]string{"emqx.conf": conf}), restrictedBrokerPod(emqxUID, corev1.Container{
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
		VolumeMounts: mounts,
	}, volumes), nil
}

const emqxCertDir = "/opt/emqx/msgbench-certs"

// emqxConf renders emqx.conf for mb.
func emqxConf(mb *v1alpha1.MessagingBenchmark, p *plan.Plan) (string, error) {
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
	if brokerWebSocket(mb) {
		set("listeners.ws.default.enable", "true")
		listener("ws.default", fmt.Sprintf("0.0.0.0:%d", wsPort(mb)))
		set("listeners.ws.default.websocket.mqtt_path", strconv.Quote(wsPath(mb)))
	}
	quic := brokerQUIC(p)
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
	case p.Broker.TLS:
		listener("ssl.default", fmt.Sprintf("0.0.0.0:%d", MQTTSPort))
		tlsOpts("ssl.default")
		set("listeners.ssl.default.ssl_options.versions", fmt.Sprintf(`["tlsv%s"]`, p.Broker.TLSVersion))
		if brokerWebSocket(mb) {
			set("listeners.wss.default.enable", "true")
			listener("wss.default", fmt.Sprintf("0.0.0.0:%d", wssPort(mb)))
			set("listeners.wss.default.websocket.mqtt_path", strconv.Quote(wsPath(mb)))
			tlsOpts("wss.default")
			set("listeners.wss.default.ssl_options.versions", fmt.Sprintf(`["tlsv%s"]`, p.Broker.TLSVersion))
		}
	default:
		set("listeners.ssl.default.enable", "false")
	}
	if err := t.merge(mb.Spec.Broker.Config, hoconValue); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("## emqx.conf rendered by msgbench for one benchmark run: listeners and limits follow from\n")
	b.WriteString("## the spec, spec.broker.config keys are merged in.\n")
	t.writeHOCON(&b, 0)
	return b.String(), nil
}
