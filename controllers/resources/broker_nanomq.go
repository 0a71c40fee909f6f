package resources

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/plan"
)

// NanoMQ (emqx/nanomq): one C binary reading a HOCON file (nanomq start --conf FILE). Its plain
// image tag is an Alpine build without TLS; the -slim tag (Debian 11) is built with
// NNG_ENABLE_TLS on Mbed TLS 2.16, which has no TLS 1.3. The image has no user of its own (it
// runs as root) and needs root for nothing: msgbench runs it as an unprivileged uid, and NanoMQ
// writes only its pid file (/tmp/nanomq/nanomq.pid).
const nanoMQUID = 1000

// NanoMQConfigKeys are the spec.broker.config keys msgbench passes to NanoMQ: the tuning keys of
// NanoMQ 0.23's configuration reference (nanomq.io/docs/en/latest/config-description: mqtt.*,
// system.*, log.level). Listeners, TLS, authentication, the HTTP server, bridges and daemon
// mode are msgbench's (NanoMQManagedConfigKeys).
var NanoMQConfigKeys = []string{
	"mqtt.max_packet_size", "mqtt.max_mqueue_len", "mqtt.retry_interval", "mqtt.keepalive_multiplier", "mqtt.property_size",
	"mqtt.max_inflight_window", "mqtt.max_awaiting_rel", "mqtt.await_rel_timeout",
	"system.num_taskq_thread", "system.max_taskq_thread", "system.parallel", "log.level",
}

// NanoMQManagedConfigKeys name, for a clear refusal, the settings msgbench writes itself.
var NanoMQManagedConfigKeys = []string{"listeners.", "auth.", "http_server.", "log.", "system.", "bridges.", "webhook.", "sqlite."}

// nanoMQPod runs NanoMQ from a nanomq.conf msgbench renders: plain MQTT on 1883 always, MQTTS on
// 8883 with the run's certificate (TLS 1.2: see above), anonymous access, a deep queue.
func nanoMQPod(mb *v1alpha1.MessagingBenchmark, p *plan.Plan, _ Config) (*corev1.ConfigMap, brokerPod, error) {
	conf, err := nanoMQConf(mb, p)
	if err != nil {
		return nil, brokerPod{}, err
	}
	mounts := []corev1.VolumeMount{
		{Name: "config", MountPath: "/etc/nanomq/msgbench", ReadOnly: true},
		{Name: "tmp", MountPath: "/tmp"},
	}
	volumes := []corev1.Volume{configVolume(mb), emptyDir("tmp")}
	if p.Broker.TLS {
		mounts, volumes = withCerts(mb, nanoMQCertDir, mounts, volumes)
	}
	return brokerConfigMap(mb, map[string]string{"nanomq.conf": conf}), restrictedBrokerPod(nanoMQUID, corev1.Container{
		Name: "nanomq",
		// Not the image's entrypoint: it only removes a stale pid file, and /tmp is new.
		Command:      []string{"nanomq", "start", "--conf", "/etc/nanomq/msgbench/nanomq.conf"},
		VolumeMounts: mounts,
	}, volumes), nil
}

const nanoMQCertDir = "/etc/nanomq/certs"

// nanoMQConf renders nanomq.conf for mb.
func nanoMQConf(mb *v1alpha1.MessagingBenchmark, p *plan.Plan) (string, error) {
	if err := checkBrokerConfig("NanoMQ", mb.Spec.Broker.Config, NanoMQConfigKeys, NanoMQManagedConfigKeys); err != nil {
		return "", err
	}
	if p.Broker.TLS && p.Broker.TLSVersion != string(v1alpha1.TLS12) {
		return "", fmt.Errorf("spec.tls.version: NanoMQ's image (emqx/nanomq:*-slim) serves TLS through Mbed TLS 2.16, which has no TLS 1.3; set version \"1.2\"")
	}
	t := confTree{}
	set := func(path, hocon string) { _ = t.set(path, hocon) }
	inflight := mqttInflight(mb)
	set("mqtt.max_packet_size", "256MB") // MQTT's limit (NanoMQ accepts up to 260MB)
	set("mqtt.max_mqueue_len", strconv.Itoa(brokerQueueLen))
	// NanoMQ 0.23 reads but does not yet enforce the inflight window ("unsupported now" in its
	// default nanomq.conf); set to the benchmark's for when it does.
	set("mqtt.max_inflight_window", strconv.Itoa(inflight))
	set("listeners.tcp.bind", strconv.Quote(fmt.Sprintf("0.0.0.0:%d", MQTTPort)))
	if p.Broker.TLS {
		set("listeners.ssl.bind", strconv.Quote(fmt.Sprintf("0.0.0.0:%d", MQTTSPort)))
		set("listeners.ssl.cacertfile", strconv.Quote(nanoMQCertDir+"/ca.crt"))
		set("listeners.ssl.certfile", strconv.Quote(nanoMQCertDir+"/tls.crt"))
		set("listeners.ssl.keyfile", strconv.Quote(nanoMQCertDir+"/tls.key"))
		set("listeners.ssl.verify_peer", "false")
		set("listeners.ssl.fail_if_no_peer_cert", "false")
	}
	if brokerWebSocket(mb) { // the path is part of the bind URL; wss uses listeners.ssl's files
		set("listeners.ws.bind", strconv.Quote(fmt.Sprintf("0.0.0.0:%d%s", wsPort(mb), wsPath(mb))))
		if p.Broker.TLS {
			set("listeners.wss.bind", strconv.Quote(fmt.Sprintf("0.0.0.0:%d%s", wssPort(mb), wsPath(mb))))
		}
	}
	set("auth.allow_anonymous", "true")
	set("auth.no_match", "allow")
	set("auth.deny_action", "ignore")
	set("log.to", "[console]") // not the image's default of a file in /tmp as well
	set("log.level", "warn")
	if err := t.merge(mb.Spec.Broker.Config, hoconValue); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("# nanomq.conf rendered by msgbench for one benchmark run: listeners and limits follow from\n")
	if brokerWebSocket(mb) {
		b.WriteString("# the spec, spec.broker.config keys are merged in. No HTTP server.\n")
	} else {
		b.WriteString("# the spec, spec.broker.config keys are merged in. No HTTP server, no WebSocket listener.\n")
	}
	t.writeHOCON(&b, 0)
	return b.String(), nil
}
