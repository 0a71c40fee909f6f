package resources

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/plan"
)

// HiveMQ CE (hivemq/hivemq-ce): Java 21 (Eclipse Temurin on Ubuntu 22.04) as uid 10000 from
// /opt/hivemq, configured by conf/config.xml (validated against conf/config.xsd), writing data/
// and log/ (and Netty's native libraries to java.io.tmpdir). TLS listeners read a Java keystore,
// not PEM files. Anonymous clients are let in by the bundled hivemq-allow-all-extension.
const hiveMQUID = 10000

// HiveMQConfigKeys are the spec.broker.config keys msgbench passes to HiveMQ CE: the elements of
// its config.xsd (2025.4), as dotted paths (mqtt.queued-messages.max-queue-size is
// <mqtt><queued-messages><max-queue-size>), but for listeners and anonymous usage statistics.
var HiveMQConfigKeys = []string{
	"mqtt.queued-messages.max-queue-size", "mqtt.queued-messages.strategy",
	"mqtt.retained-messages.enabled", "mqtt.wildcard-subscriptions.enabled", "mqtt.quality-of-service.max-qos",
	"mqtt.topic-alias.enabled", "mqtt.topic-alias.max-per-client", "mqtt.message-expiry.max-interval",
	"mqtt.session-expiry.max-interval", "mqtt.subscription-identifier.enabled", "mqtt.shared-subscriptions.enabled",
	"mqtt.keep-alive.max-keep-alive", "mqtt.keep-alive.allow-unlimited", "mqtt.packets.max-packet-size",
	"mqtt.receive-maximum.server-receive-maximum",
	"restrictions.max-connections", "restrictions.max-client-id-length", "restrictions.max-topic-length",
	"restrictions.no-connect-idle-timeout", "restrictions.incoming-bandwidth-throttling",
	"security.payload-format-validation.enabled", "security.utf8-validation.enabled",
	"security.allow-empty-client-id.enabled", "security.allow-request-problem-information.enabled",
	"persistence.mode",
}

// HiveMQManagedConfigKeys name, for a clear refusal, the settings msgbench writes itself.
var HiveMQManagedConfigKeys = []string{"listeners.", "anonymous-usage-statistics."}

// hiveMQKeystorePassword protects the PKCS #12 keystore made from the run's PEM key in an
// emptyDir of the pod: config.xml must name a password, and the key itself is in the Secret.
const hiveMQKeystorePassword = "msgbench"

// hiveMQPod runs HiveMQ CE from a config.xml msgbench renders: plain MQTT on 1883 always, MQTTS on
// 8883 with the run's certificate converted to PKCS #12 by an init container, a deep queue, the
// spec's inflight window as receive maximum, no connection limit or throttling, and no
// anonymous usage statistics sent to HiveMQ.
func hiveMQPod(mb *v1alpha1.MessagingBenchmark, p *plan.Plan, _ Config) (*corev1.ConfigMap, brokerPod, error) {
	conf, err := hiveMQConf(mb, p)
	if err != nil {
		return nil, brokerPod{}, err
	}
	mounts := []corev1.VolumeMount{
		// Only config.xml: conf/ also holds config.xsd and logback.xml.
		{Name: "config", MountPath: "/opt/hivemq/conf/config.xml", SubPath: "config.xml", ReadOnly: true},
		{Name: "data", MountPath: "/opt/hivemq/data"},
		{Name: "log", MountPath: "/opt/hivemq/log"},
		{Name: "tmp", MountPath: "/tmp"},
	}
	volumes := []corev1.Volume{configVolume(mb), emptyDir("data"), emptyDir("log"), emptyDir("tmp")}
	var inits []corev1.Container
	if p.Broker.TLS {
		mounts = append(mounts, corev1.VolumeMount{Name: "keystore", MountPath: hiveMQKeystoreDir, ReadOnly: true})
		volumes = append(volumes, certsVolume(mb), emptyDir("keystore"))
		// The image's OpenSSL (a dependency of Ubuntu's ca-certificates) makes the keystore:
		// Java reads PKCS #12 through HiveMQ's "JKS" keystore type (keystore.type.compat).
		inits = append(inits, corev1.Container{
			Name: "keystore",
			Command: []string{"openssl", "pkcs12", "-export", "-in", "/certs/tls.crt", "-inkey", "/certs/tls.key",
				"-name", "hivemq", "-out", hiveMQKeystoreDir + "/broker.p12", "-passout", "pass:" + hiveMQKeystorePassword},
			SecurityContext: restrictedContainer(),
			VolumeMounts: []corev1.VolumeMount{
				{Name: "certs", MountPath: "/certs", ReadOnly: true},
				{Name: "keystore", MountPath: hiveMQKeystoreDir},
			},
		})
	}
	pod := restrictedBrokerPod(hiveMQUID, corev1.Container{
		Name: "hivemq",
		// Java directly, as bin/run.sh would start it, for two reasons: run.sh refuses to
		// start unless /opt/hivemq is writable (no read-only root), and it opens JMX on port
		// 9010 without authentication.
		Command: []string{"java",
			"-Dhivemq.home=/opt/hivemq", "-Djava.net.preferIPv4Stack=true",
			"--add-opens", "java.base/java.lang=ALL-UNNAMED", "--add-opens", "java.base/java.nio=ALL-UNNAMED",
			"--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens", "jdk.management/com.sun.management.internal=ALL-UNNAMED",
			"--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
			"-Djava.security.egd=file:/dev/./urandom", "-Duser.language=en", "-Duser.region=US",
			"-XX:+UnlockExperimentalVMOptions", "-XX:+UseNUMA", // the image's JAVA_OPTS
			"-XX:+CrashOnOutOfMemoryError", "-XX:ErrorFile=/opt/hivemq/log/hs_err_pid%p.log",
			"-jar", "/opt/hivemq/bin/hivemq.jar"},
		VolumeMounts: mounts,
	}, volumes)
	pod.InitContainers = inits
	return brokerConfigMap(mb, map[string]string{"config.xml": conf}), pod, nil
}

const hiveMQKeystoreDir = "/opt/hivemq/keystore"

// hiveMQConf renders config.xml for mb.
func hiveMQConf(mb *v1alpha1.MessagingBenchmark, p *plan.Plan) (string, error) {
	if err := checkBrokerConfig("HiveMQ CE", mb.Spec.Broker.Config, HiveMQConfigKeys, HiveMQManagedConfigKeys); err != nil {
		return "", err
	}
	t := confTree{}
	set := func(path, v string) { _ = t.set(path, v) }
	set("mqtt.queued-messages.max-queue-size", strconv.Itoa(brokerQueueLen))
	// HiveMQ's default Receive Maximum (10) would hold MQTT 5 publishers below the spec's window.
	set("mqtt.receive-maximum.server-receive-maximum", strconv.Itoa(min(mqttInflight(mb), 65535)))
	set("mqtt.packets.max-packet-size", "268435460") // the schema's maximum
	set("restrictions.max-connections", "-1")
	set("restrictions.incoming-bandwidth-throttling", "0")
	set("anonymous-usage-statistics.enabled", "false") // a benchmark phones nowhere
	// Allowed keys are leaves of the schema: they never clash. writeXML escapes the values.
	if err := t.merge(mb.Spec.Broker.Config, func(v string) string { return v }); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?>\n<!-- config.xml rendered by msgbench for one benchmark run: listeners and limits follow\n")
	b.WriteString("     from the spec, spec.broker.config keys are merged in. -->\n<hivemq>\n")
	b.WriteString("  <listeners>\n")
	fmt.Fprintf(&b, "    <tcp-listener>\n      <port>%d</port>\n      <bind-address>0.0.0.0</bind-address>\n    </tcp-listener>\n", MQTTPort)
	tls := func() {
		b.WriteString("      <tls>\n")
		fmt.Fprintf(&b, "        <keystore>\n          <path>%s/broker.p12</path>\n          <password>%s</password>\n          <private-key-password>%s</private-key-password>\n        </keystore>\n",
			hiveMQKeystoreDir, hiveMQKeystorePassword, hiveMQKeystorePassword)
		fmt.Fprintf(&b, "        <protocols>\n          <protocol>TLSv%s</protocol>\n        </protocols>\n", p.Broker.TLSVersion)
		b.WriteString("        <client-authentication-mode>NONE</client-authentication-mode>\n      </tls>\n")
	}
	if p.Broker.TLS {
		fmt.Fprintf(&b, "    <tls-tcp-listener>\n      <port>%d</port>\n      <bind-address>0.0.0.0</bind-address>\n", MQTTSPort)
		tls()
		b.WriteString("    </tls-tcp-listener>\n")
	}
	if brokerWebSocket(mb) {
		// Subprotocol mqtt (MQTT §6), no extensions: msgbench counts the bytes uncompressed.
		ws := func(port int32) {
			fmt.Fprintf(&b, "      <port>%d</port>\n      <bind-address>0.0.0.0</bind-address>\n      <path>%s</path>\n", port, wsPath(mb))
			b.WriteString("      <subprotocols>\n        <subprotocol>mqtt</subprotocol>\n      </subprotocols>\n      <allow-extensions>false</allow-extensions>\n")
		}
		b.WriteString("    <websocket-listener>\n")
		ws(wsPort(mb))
		b.WriteString("    </websocket-listener>\n")
		if p.Broker.TLS {
			b.WriteString("    <tls-websocket-listener>\n")
			ws(wssPort(mb))
			tls()
			b.WriteString("    </tls-websocket-listener>\n")
		}
	}
	b.WriteString("  </listeners>\n")
	t.writeXML(&b, 1)
	b.WriteString("</hivemq>\n")
	return b.String(), nil
}
