package resources_test

import (
	"encoding/xml"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/controllers/resources"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/plan/plantest"
)

// brokerBench parses a sample-like benchmark of broker type bt with protocol proto, TLS (version
// tls, "" for none) and inflight; manifest.Parse applies the CRD's defaults and rules.
func brokerBench(t *testing.T, bt v1alpha1.BrokerType, proto, tls string, inflight int, config map[string]string) *v1alpha1.MessagingBenchmark {
	t.Helper()
	mb, err := parseBrokerBench(bt, proto, tls, inflight, config)
	if err != nil {
		t.Fatal(err)
	}
	return mb
}

// parseBrokerBench builds a benchmark through the CRD's validation (manifest.Parse).
func parseBrokerBench(bt v1alpha1.BrokerType, proto, tls string, inflight int, config map[string]string) (*v1alpha1.MessagingBenchmark, error) {
	if _, ok := config["accept_eula"]; bt == v1alpha1.BrokerVerneMQ && !ok {
		// the API server requires it for the official image (tests that need it gone delete it)
		config = maps.Clone(config)
		if config == nil {
			config = map[string]string{}
		}
		config["accept_eula"] = "yes"
	}
	var b strings.Builder
	b.WriteString("apiVersion: msgbench.io/v1alpha1\nkind: MessagingBenchmark\nmetadata:\n  name: b\nspec:\n")
	b.WriteString("  protocol: " + proto + "\n  qos: 1\n  broker:\n    type: " + string(bt) + "\n")
	if len(config) > 0 {
		b.WriteString("    config:\n")
		for k, v := range config {
			b.WriteString("      " + k + ": " + strconv.Quote(v) + "\n")
		}
	}
	if tls != "" {
		b.WriteString("  tls:\n    enabled: true\n    version: \"" + tls + "\"\n")
	}
	b.WriteString("  mqtt:\n    inflight: " + strconv.Itoa(inflight) + "\n")
	b.WriteString("  workload:\n    publishers: 2\n    subscribers: 2\n    topics: 2\n    payloadBytes: 200000\n    rate: 100\n    duration: 10s\n")
	mb, err := manifest.Parse([]byte(b.String()))
	if err != nil {
		return nil, fmt.Errorf("%w\n%s", err, b.String())
	}
	mb.Namespace, mb.UID = "bench", types.UID("5f0c1d2e-0000-4000-8000-000000000001")
	return mb, nil
}

func brokerObjects(t *testing.T, mb *v1alpha1.MessagingBenchmark) (*corev1.ConfigMap, *appsv1.Deployment, *corev1.Service) {
	t.Helper()
	objs, err := resources.BrokerObjects(mb, plantest.Kubernetes(t, mb), resources.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var cm *corev1.ConfigMap
	var d *appsv1.Deployment
	var svc *corev1.Service
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.ConfigMap:
			cm = o
		case *appsv1.Deployment:
			d = o
		case *corev1.Service:
			svc = o
		}
	}
	if cm == nil || d == nil || svc == nil {
		t.Fatalf("broker objects lack a ConfigMap, Deployment or Service: %v", objs)
	}
	return cm, d, svc
}

// flatHOCON flattens msgbench's rendered HOCON (blocks "k {", "}", settings "k = v") into dotted
// paths, failing on anything else, unbalanced braces or a path set twice.
func flatHOCON(t *testing.T, conf string) map[string]string {
	t.Helper()
	out := map[string]string{}
	var path []string
	for i, line := range strings.Split(conf, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasSuffix(line, " {"):
			path = append(path, strings.TrimSuffix(line, " {"))
		case line == "}":
			if len(path) == 0 {
				t.Fatalf("line %d: unbalanced }", i+1)
			}
			path = path[:len(path)-1]
		case strings.Contains(line, " = "):
			k, v, _ := strings.Cut(line, " = ")
			key := strings.Join(append(append([]string{}, path...), k), ".")
			if _, dup := out[key]; dup {
				t.Fatalf("line %d: %s set twice", i+1, key)
			}
			out[key] = v
		default:
			t.Fatalf("line %d: not HOCON msgbench writes: %q", i+1, line)
		}
	}
	if len(path) != 0 {
		t.Fatalf("unclosed blocks %v", path)
	}
	return out
}

// flatXML flattens config.xml's leaf elements into dotted paths (repeated listener elements
// are numbered by their order: listeners.tcp-listener.port, listeners.tls-tcp-listener.port).
func flatXML(t *testing.T, conf string) map[string]string {
	t.Helper()
	out := map[string]string{}
	dec := xml.NewDecoder(strings.NewReader(conf))
	var path []string
	var text string
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			path = append(path, tok.Name.Local)
			text = ""
		case xml.CharData:
			text = strings.TrimSpace(string(tok))
		case xml.EndElement:
			if text != "" {
				out[strings.Join(path[1:], ".")] = text
			}
			text = ""
			path = path[:len(path)-1]
		}
	}
	if len(path) != 0 {
		t.Fatalf("config.xml is not well-formed XML: unclosed %v", path)
	}
	return out
}

func flatLines(t *testing.T, conf string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(conf, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, " = ")
		if !ok {
			t.Fatalf("not a vernemq.conf line: %q", line)
		}
		if _, dup := out[k]; dup {
			t.Fatalf("%s set twice", k)
		}
		out[k] = v
	}
	return out
}

func atLeast(t *testing.T, conf map[string]string, key string, min int) {
	t.Helper()
	v := strings.Trim(conf[key], `"`)
	if v == "infinity" || v == "-1" && strings.Contains(key, "connections") {
		return
	}
	if strings.HasSuffix(v, "MB") {
		n, err := strconv.Atoi(strings.TrimSuffix(v, "MB"))
		if err == nil && n*1024*1024 >= min {
			return
		}
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min {
		t.Errorf("%s = %q, want at least %d", key, conf[key], min)
	}
}

func wantConf(t *testing.T, conf map[string]string, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if conf[k] != v {
			t.Errorf("%s = %q, want %q", k, conf[k], v)
		}
	}
}

// wantMounted checks the broker container mounts the volume at path (subPath too).
func wantMounted(t *testing.T, d *appsv1.Deployment, volume, path string) {
	t.Helper()
	for _, m := range d.Spec.Template.Spec.Containers[0].VolumeMounts {
		if m.Name == volume && m.MountPath == path {
			return
		}
	}
	t.Errorf("broker container does not mount %s at %s: %+v", volume, path, d.Spec.Template.Spec.Containers[0].VolumeMounts)
}

func wantPorts(t *testing.T, svc *corev1.Service, want ...string) {
	t.Helper()
	var got []string
	for _, p := range svc.Spec.Ports {
		got = append(got, p.Name+"/"+strconv.Itoa(int(p.Port))+"/"+string(p.Protocol))
	}
	if strings.Join(got, " ") != strings.Join(append(want, "metrics/9464/TCP"), " ") {
		t.Errorf("service ports %v, want %v and metrics", got, want)
	}
}

// wantRestricted checks the restricted Pod Security Standard on the broker pod: every container
// non-root, no privilege escalation, all capabilities dropped, read-only root, RuntimeDefault
// seccomp, the image's uid, and that uid as fsGroup (the TLS key is readable by the group only).
func wantRestricted(t *testing.T, d *appsv1.Deployment, uid int64) {
	t.Helper()
	pod := d.Spec.Template.Spec
	ps := pod.SecurityContext
	if ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot || ps.RunAsUser == nil || *ps.RunAsUser != uid ||
		ps.SeccompProfile == nil || ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault || ps.FSGroup == nil || *ps.FSGroup != uid {
		t.Errorf("pod security context %+v, want non-root uid %d, fsGroup %[2]d, RuntimeDefault seccomp", ps, uid)
	}
	for _, c := range append(append([]corev1.Container{}, pod.InitContainers...), pod.Containers...) {
		sc := c.SecurityContext
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil ||
			len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("container %s security context %+v is not restricted with a read-only root", c.Name, sc)
		}
	}
}

func TestEMQXConfig(t *testing.T) {
	for _, tc := range []struct {
		name, proto, tls string
		ports            []string
	}{
		{"plain", "mqtt", "", []string{"mqtt/1883/TCP"}},
		{"tls12", "mqtt", "1.2", []string{"mqtt/1883/TCP", "mqtts/8883/TCP"}},
		{"tls13", "mqtt", "1.3", []string{"mqtt/1883/TCP", "mqtts/8883/TCP"}},
		{"quic", "mqtt-quic", "", []string{"mqtt/1883/TCP", "quic/14567/UDP"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mb := brokerBench(t, v1alpha1.BrokerEMQX, tc.proto, tc.tls, 300, nil)
			cm, d, svc := brokerObjects(t, mb)
			conf := flatHOCON(t, cm.Data["emqx.conf"])
			wantConf(t, conf, map[string]string{
				"listeners.tcp.default.bind":            `"0.0.0.0:1883"`,
				"authorization.no_match":                "allow",
				"authorization.sources":                 "[]",
				"listeners.ws.default.enable":           "false",
				"listeners.wss.default.enable":          "false",
				"node.data_dir":                         `"/opt/emqx/data"`,
				"dashboard.listeners.http.bind":         "0",
				"listeners.tcp.default.max_connections": "infinity",
				"listeners.tcp.default.messages_rate":   "infinity",
				"listeners.tcp.default.bytes_rate":      "infinity",
			})
			atLeast(t, conf, "mqtt.max_inflight", 300)
			atLeast(t, conf, "mqtt.max_mqueue_len", 100000)
			atLeast(t, conf, "mqtt.max_packet_size", 200000+1024)
			wantPorts(t, svc, tc.ports...)
			wantRestricted(t, d, 1000)
			wantMounted(t, d, "config", "/opt/emqx/etc/emqx.conf")
			for _, dir := range []string{"/opt/emqx/data", "/opt/emqx/log", "/tmp"} {
				wantMounted(t, d, strings.TrimPrefix(filepath.Base(dir), "emqx"), dir)
			}
			certs := map[string]string{"ssl_options.cacertfile": `"/opt/emqx/msgbench-certs/ca.crt"`,
				"ssl_options.certfile": `"/opt/emqx/msgbench-certs/tls.crt"`, "ssl_options.keyfile": `"/opt/emqx/msgbench-certs/tls.key"`}
			switch tc.name {
			case "plain":
				wantConf(t, conf, map[string]string{"listeners.ssl.default.enable": "false"})
				if _, ok := conf["listeners.quic.default.bind"]; ok {
					t.Error("QUIC listener without mqtt-quic")
				}
			case "quic":
				wantConf(t, conf, map[string]string{"listeners.quic.default.enable": "true", "listeners.quic.default.bind": `"0.0.0.0:14567"`,
					"listeners.ssl.default.enable": "false", "listeners.quic.default.max_connections": "infinity"})
				for k, v := range certs {
					wantConf(t, conf, map[string]string{"listeners.quic.default." + k: v})
				}
				wantMounted(t, d, "certs", "/opt/emqx/msgbench-certs")
				if mb.Spec.GatewayMode() != "" {
					t.Errorf("mqtt-quic to EMQX goes through gateway %q", mb.Spec.GatewayMode())
				}
			default:
				wantConf(t, conf, map[string]string{"listeners.ssl.default.bind": `"0.0.0.0:8883"`,
					"listeners.ssl.default.ssl_options.versions": `["tlsv` + tc.tls + `"]`})
				for k, v := range certs {
					wantConf(t, conf, map[string]string{"listeners.ssl.default." + k: v})
				}
				wantMounted(t, d, "certs", "/opt/emqx/msgbench-certs")
			}
		})
	}
}

func TestNanoMQConfig(t *testing.T) {
	for _, tls := range []string{"", "1.2"} {
		t.Run("tls"+tls, func(t *testing.T) {
			mb := brokerBench(t, v1alpha1.BrokerNanoMQ, "mqtt", tls, 300, nil)
			cm, d, svc := brokerObjects(t, mb)
			conf := flatHOCON(t, cm.Data["nanomq.conf"])
			wantConf(t, conf, map[string]string{"listeners.tcp.bind": `"0.0.0.0:1883"`, "auth.allow_anonymous": "true", "auth.no_match": "allow"})
			atLeast(t, conf, "mqtt.max_inflight_window", 300)
			atLeast(t, conf, "mqtt.max_mqueue_len", 100000)
			atLeast(t, conf, "mqtt.max_packet_size", 200000+1024)
			if _, ok := conf["http_server.port"]; ok {
				t.Error("NanoMQ's HTTP API (default credentials) is enabled")
			}
			wantRestricted(t, d, 1000)
			wantMounted(t, d, "tmp", "/tmp") // the pid file
			if tls == "" {
				wantPorts(t, svc, "mqtt/1883/TCP")
				if _, ok := conf["listeners.ssl.bind"]; ok {
					t.Error("TLS listener without spec.tls")
				}
				return
			}
			wantPorts(t, svc, "mqtt/1883/TCP", "mqtts/8883/TCP")
			wantConf(t, conf, map[string]string{"listeners.ssl.bind": `"0.0.0.0:8883"`, "listeners.ssl.keyfile": `"/etc/nanomq/certs/tls.key"`,
				"listeners.ssl.certfile": `"/etc/nanomq/certs/tls.crt"`, "listeners.ssl.cacertfile": `"/etc/nanomq/certs/ca.crt"`})
			wantMounted(t, d, "certs", "/etc/nanomq/certs")
		})
	}
	// The API server refuses it first; the builder refuses it too, for specs built in Go.
	mb := brokerBench(t, v1alpha1.BrokerNanoMQ, "mqtt", "1.2", 20, nil)
	mb.Spec.TLS.Version = v1alpha1.TLS13
	if _, err := resources.BrokerObjects(mb, plantest.Kubernetes(t, mb), resources.DefaultConfig()); err == nil || !strings.Contains(err.Error(), "spec.tls.version") {
		t.Errorf("NanoMQ with TLS 1.3: %v, want a refusal naming spec.tls.version", err)
	}
}

func TestHiveMQConfig(t *testing.T) {
	for _, tls := range []string{"", "1.2", "1.3"} {
		t.Run("tls"+tls, func(t *testing.T) {
			mb := brokerBench(t, v1alpha1.BrokerHiveMQCE, "mqtt", tls, 300, nil)
			cm, d, svc := brokerObjects(t, mb)
			conf := flatXML(t, cm.Data["config.xml"])
			wantConf(t, conf, map[string]string{"listeners.tcp-listener.port": "1883", "listeners.tcp-listener.bind-address": "0.0.0.0",
				"anonymous-usage-statistics.enabled": "false", "restrictions.max-connections": "-1", "restrictions.incoming-bandwidth-throttling": "0"})
			atLeast(t, conf, "mqtt.receive-maximum.server-receive-maximum", 300)
			atLeast(t, conf, "mqtt.queued-messages.max-queue-size", 100000)
			atLeast(t, conf, "mqtt.packets.max-packet-size", 200000+1024)
			wantRestricted(t, d, 10000)
			wantMounted(t, d, "config", "/opt/hivemq/conf/config.xml")
			if strings.Contains(strings.Join(d.Spec.Template.Spec.Containers[0].Command, " "), "jmxremote") {
				t.Error("HiveMQ runs with remote JMX")
			}
			if tls == "" {
				wantPorts(t, svc, "mqtt/1883/TCP")
				if len(d.Spec.Template.Spec.InitContainers) != 0 || conf["listeners.tls-tcp-listener.port"] != "" {
					t.Error("keystore or TLS listener without spec.tls")
				}
				return
			}
			wantPorts(t, svc, "mqtt/1883/TCP", "mqtts/8883/TCP")
			wantConf(t, conf, map[string]string{"listeners.tls-tcp-listener.port": "8883",
				"listeners.tls-tcp-listener.tls.keystore.path":              "/opt/hivemq/keystore/broker.p12",
				"listeners.tls-tcp-listener.tls.protocols.protocol":         "TLSv" + tls,
				"listeners.tls-tcp-listener.tls.keystore.password":          "msgbench",
				"listeners.tls-tcp-listener.tls.client-authentication-mode": "NONE"})
			ic := d.Spec.Template.Spec.InitContainers
			if len(ic) != 1 || !strings.Contains(strings.Join(ic[0].Command, " "), "-out /opt/hivemq/keystore/broker.p12") ||
				!strings.Contains(strings.Join(ic[0].Command, " "), "-inkey /certs/tls.key") {
				t.Errorf("no init container writing the keystore the listener reads: %+v", ic)
			}
			wantMounted(t, d, "keystore", "/opt/hivemq/keystore")
		})
	}
}

func TestVerneMQConfig(t *testing.T) {
	eula := map[string]string{"accept_eula": "yes"}
	for _, tls := range []string{"", "1.2", "1.3"} {
		t.Run("tls"+tls, func(t *testing.T) {
			mb := brokerBench(t, v1alpha1.BrokerVerneMQ, "mqtt", tls, 300, eula)
			cm, d, svc := brokerObjects(t, mb)
			conf := flatLines(t, cm.Data["vernemq.conf"])
			wantConf(t, conf, map[string]string{"listener.tcp.default": "0.0.0.0:1883", "allow_anonymous": "on", "accept_eula": "yes",
				"plugins.vmq_acl": "on", "vmq_acl.acl_file": "/vernemq/etc/msgbench/vmq.acl", "listener.max_connections": "infinity",
				"max_message_size": "0", "max_message_rate": "0"})
			if cm.Data["vmq.acl"] != "topic #\n" {
				t.Errorf("vmq.acl %q does not allow every topic", cm.Data["vmq.acl"])
			}
			if !strings.Contains(cm.Data["vm.args"], "-name VerneMQ@127.0.0.1\n") {
				t.Errorf("vm.args has no loopback node name:\n%s", cm.Data["vm.args"])
			}
			atLeast(t, conf, "max_inflight_messages", 300)
			atLeast(t, conf, "max_online_messages", 100000)
			wantRestricted(t, d, 10000)
			wantMounted(t, d, "config", "/vernemq/etc/vernemq.conf")
			wantMounted(t, d, "config", "/vernemq/etc/vm.args")
			if tls == "" {
				wantPorts(t, svc, "mqtt/1883/TCP")
				if conf["listener.ssl.default"] != "" {
					t.Error("TLS listener without spec.tls")
				}
				return
			}
			wantPorts(t, svc, "mqtt/1883/TCP", "mqtts/8883/TCP")
			wantConf(t, conf, map[string]string{"listener.ssl.default": "0.0.0.0:8883", "listener.ssl.tls_version": "tlsv" + tls,
				"listener.ssl.keyfile": "/vernemq/etc/certs/tls.key", "listener.ssl.certfile": "/vernemq/etc/certs/tls.crt",
				"listener.ssl.cafile": "/vernemq/etc/certs/ca.crt"})
			wantMounted(t, d, "certs", "/vernemq/etc/certs")
		})
	}
}

// TestVerneMQEULA: the official image runs only when the benchmark accepts VerneMQ's EULA itself;
// an image built from source needs no acceptance and gets no accept_eula line.
func TestVerneMQEULA(t *testing.T) {
	// The API server refuses it first; the builder refuses it too, for specs built in Go.
	mb := brokerBench(t, v1alpha1.BrokerVerneMQ, "mqtt", "", 20, nil)
	delete(mb.Spec.Broker.Config, "accept_eula")
	_, err := resources.BrokerObjects(mb, plantest.Kubernetes(t, mb), resources.DefaultConfig())
	if err == nil || !strings.Contains(err.Error(), "spec.broker.config.accept_eula") || !strings.Contains(err.Error(), "EULA") {
		t.Fatalf("official image without accept_eula: %v, want a refusal naming spec.broker.config.accept_eula", err)
	}
	for _, img := range []string{"docker.io/vernemq/vernemq:2.1.1", "vernemq/vernemq@sha256:" + strings.Repeat("0", 64)} {
		mb.Spec.Broker.Image = img
		if _, err := resources.BrokerObjects(mb, plantest.Kubernetes(t, mb), resources.DefaultConfig()); err == nil {
			t.Errorf("%s without accept_eula accepted", img)
		}
	}
	mb.Spec.Broker.Image = "registry.example/vernemq-from-source:2.1.1"
	cm, _, _ := brokerObjects(t, mb)
	if strings.Contains(cm.Data["vernemq.conf"], "accept_eula") {
		t.Error("accept_eula written for an image built from source")
	}
	mb.Spec.Broker.Config = map[string]string{"accept_eula": "no"}
	if _, err := resources.BrokerObjects(mb, plantest.Kubernetes(t, mb), resources.DefaultConfig()); err == nil || !strings.Contains(err.Error(), "spec.broker.config.accept_eula") {
		t.Errorf("accept_eula no: %v", err)
	}
}

// TestBrokerConfigKeys: documented tuning keys reach the broker's file; keys msgbench manages
// and keys the broker does not document are refused, naming spec.broker.config and the key.
func TestBrokerConfigKeys(t *testing.T) {
	for _, tc := range []struct {
		bt               v1alpha1.BrokerType
		file, key, value string
		written          string // how the accepted key appears in the file
		managed, unknown string
	}{
		{v1alpha1.BrokerEMQX, "emqx.conf", "mqtt.max_inflight", "64", "max_inflight = 64", "listeners.tcp.default.bind", "mqtt_max_inflight"},
		{v1alpha1.BrokerEMQX, "emqx.conf", "force_shutdown.max_mailbox_size", "100000", "max_mailbox_size = 100000", "authorization.no_match", "dashboard_enable"},
		{v1alpha1.BrokerEMQX, "emqx.conf", "log.console.level", "debug level", `level = "debug level"`, "node.cookie", "plugins.install_dir"},
		{v1alpha1.BrokerNanoMQ, "nanomq.conf", "system.parallel", "64", "parallel = 64", "listeners.tcp.bind", "mqtt.max_inflight"},
		{v1alpha1.BrokerNanoMQ, "nanomq.conf", "mqtt.retry_interval", "5s", "retry_interval = 5s", "auth.allow_anonymous", "bridges_mqtt"},
		{v1alpha1.BrokerHiveMQCE, "config.xml", "persistence.mode", "in-memory", "<mode>in-memory</mode>", "listeners.tcp-listener.port", "mqtt.max-inflight"},
		{v1alpha1.BrokerHiveMQCE, "config.xml", "mqtt.queued-messages.strategy", "<x>", "<strategy>&lt;x&gt;</strategy>", "anonymous-usage-statistics.enabled", "extensions.allow-all"},
		{v1alpha1.BrokerVerneMQ, "vernemq.conf", "max_online_messages", "5000", "max_online_messages = 5000", "listener.tcp.default", "max_inflight"},
		{v1alpha1.BrokerVerneMQ, "vernemq.conf", "listener.nr_of_acceptors", "100", "listener.nr_of_acceptors = 100", "plugins.vmq_acl", "erlang_async_threads"},
	} {
		t.Run(string(tc.bt)+"/"+tc.key, func(t *testing.T) {
			base := map[string]string{}
			if tc.bt == v1alpha1.BrokerVerneMQ {
				base["accept_eula"] = "yes"
			}
			with := func(k, v string) map[string]string {
				m := map[string]string{k: v}
				for bk, bv := range base {
					m[bk] = bv
				}
				return m
			}
			cm, _, _ := brokerObjects(t, brokerBench(t, tc.bt, "mqtt", "", 20, with(tc.key, tc.value)))
			if !strings.Contains(cm.Data[tc.file], tc.written) {
				t.Errorf("%s=%s: %s lacks %q:\n%s", tc.key, tc.value, tc.file, tc.written, cm.Data[tc.file])
			}
			for _, bad := range []struct{ key, why string }{{tc.managed, "managed by msgbench"}, {tc.unknown, "not a"}} {
				// The API server's rules refuse it first ...
				if _, err := parseBrokerBench(tc.bt, "mqtt", "", 20, with(bad.key, "1")); err == nil || !strings.Contains(err.Error(), "spec.broker.config") {
					t.Errorf("key %s passed admission: %v", bad.key, err)
				}
				// ... and the builder refuses it too, for specs built in Go.
				mb := brokerBench(t, tc.bt, "mqtt", "", 20, base)
				mb.Spec.Broker.Config = with(bad.key, "1")
				_, err := resources.BrokerObjects(mb, plantest.Kubernetes(t, mb), resources.DefaultConfig())
				if err == nil || !strings.Contains(err.Error(), "spec.broker.config."+bad.key+":") || !strings.Contains(err.Error(), bad.why) {
					t.Errorf("key %s: %v, want a refusal naming spec.broker.config.%s (%s)", bad.key, err, bad.key, bad.why)
				}
			}
			mb := brokerBench(t, tc.bt, "mqtt", "", 20, with(tc.key, "a\nb"))
			if _, err := resources.BrokerObjects(mb, plantest.Kubernetes(t, mb), resources.DefaultConfig()); err == nil {
				t.Errorf("a value with a line break was accepted for %s", tc.key)
			}
		})
	}
}

// TestBrokerConfigKeyLists: the exported lists (which the CRD's CEL rules repeat) are keys the
// CRD accepts, and no key msgbench writes itself is allowed through.
func TestBrokerConfigKeyLists(t *testing.T) {
	keyRE := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	for name, l := range map[string][][]string{
		"emqx":    {resources.EMQXConfigKeys, {"listeners.tcp.default.bind", "listeners.ssl.default.ssl_options.certfile", "listeners.quic.default.bind", "listeners.quic.default.enable", "node.name", "node.cookie", "node.data_dir", "authorization.sources", "dashboard.listeners.http.bind", "rpc.listen_address"}},
		"nanomq":  {resources.NanoMQConfigKeys, {"listeners.tcp.bind", "listeners.ssl.keyfile", "auth.allow_anonymous", "http_server.port", "log.to", "system.daemon"}},
		"hivemq":  {resources.HiveMQConfigKeys, {"listeners.tcp-listener.port", "anonymous-usage-statistics.enabled"}},
		"vernemq": {resources.VerneMQConfigKeys, {"listener.tcp.default", "listener.ssl.certfile", "listener.ssl.tls_version", "allow_anonymous", "plugins.vmq_acl", "vmq_acl.acl_file", "nodename", "distributed_cookie", "log.console"}},
	} {
		for _, k := range l[0] {
			if !keyRE.MatchString(k) {
				t.Errorf("%s: %q is not a key spec.broker.config can hold", name, k)
			}
		}
		for _, m := range l[1] {
			for _, k := range l[0] {
				if m == k || (strings.HasSuffix(k, ".") && strings.HasPrefix(m, k)) {
					t.Errorf("%s: managed key %s is allowed by %q", name, m, k)
				}
			}
		}
	}
}
