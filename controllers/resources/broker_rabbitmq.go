package resources

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/rabbitmq"
	"github.com/msgbench/msgbench/plan"
)

// rabbitMQUID is the rabbitmq user of the official image (and of msgbench's e2e image built from
// Debian's package).
const rabbitMQUID = 999

// Where the RabbitMQ container reads and writes. Only the emptyDirs are writable: the node
// writes its Erlang cookie to $HOME, its database, plugin expansion and pid file under the
// mnesia base, and an upgrade log and crash dumps under the log base.
const (
	rabbitMQConfigDir = "/etc/rabbitmq/msgbench"
	rabbitMQCertDir   = "/etc/rabbitmq/certs"
	rabbitMQDataDir   = "/var/lib/rabbitmq"
	rabbitMQLogDir    = "/var/log/rabbitmq"
)

// rabbitMQPod runs RabbitMQ with its MQTT plugin from the rabbitmq.conf and enabled_plugins
// brokers/rabbitmq renders (as for a local run), as uid 999 under the restricted Pod Security
// Standard with a read-only root filesystem. The command is the image's rabbitmq-server script
// itself, not the official image's entrypoint (which chowns as root and then switches user), so
// the same pod runs the official 4.x image and an image built from Debian's 3.10 package.
func rabbitMQPod(mb *v1alpha1.MessagingBenchmark, p *plan.Plan, _ Config) (*corev1.ConfigMap, brokerPod, error) {
	c := rabbitmq.Config{Port: MQTTPort, MaxInflight: int(mb.Spec.MQTT.Inflight), Extra: mb.Spec.Broker.Config}
	if lim, ok := mb.Spec.Broker.Resources.Limits[corev1.ResourceMemory]; ok {
		c.MemoryLimitBytes = lim.Value() // the memory watermark is relative to the container's limit
	}
	mounts := []corev1.VolumeMount{
		{Name: "config", MountPath: rabbitMQConfigDir, ReadOnly: true},
		{Name: "data", MountPath: rabbitMQDataDir},
		{Name: "log", MountPath: rabbitMQLogDir},
	}
	volumes := []corev1.Volume{configVolume(mb), emptyDir("data"), emptyDir("log")}
	if p.Broker.TLS {
		c.TLSPort = MQTTSPort
		c.CAFile, c.CertFile, c.KeyFile = rabbitMQCertDir+"/ca.crt", rabbitMQCertDir+"/tls.crt", rabbitMQCertDir+"/tls.key"
		c.TLSVersion = string(mb.Spec.TLS.Version)
		mounts, volumes = withCerts(mb, rabbitMQCertDir, mounts, volumes)
	}
	if brokerWebSocket(mb) {
		c.WSPort, c.WebSocketPath = int(wsPort(mb)), wsPath(mb)
		if p.Broker.TLS {
			c.WSSPort = int(wssPort(mb))
		}
	}
	files, err := c.Render()
	if err != nil {
		return nil, brokerPod{}, err
	}
	env := []corev1.EnvVar{
		// The node creates $HOME/.erlang.cookie, a random one, at its first start.
		{Name: "HOME", Value: rabbitMQDataDir},
		{Name: "RABBITMQ_CONFIG_FILE", Value: rabbitMQConfigDir + "/" + rabbitmq.ConfFile},
		{Name: "RABBITMQ_ENABLED_PLUGINS_FILE", Value: rabbitMQConfigDir + "/" + rabbitmq.PluginsFile},
		// Absent files: not the image's conf.d (the official image's sets keys of plugins
		// msgbench does not enable), advanced.config or rabbitmq-env.conf.
		{Name: "RABBITMQ_CONFIG_FILES", Value: rabbitMQConfigDir + "/conf.d"},
		{Name: "RABBITMQ_ADVANCED_CONFIG_FILE", Value: rabbitMQConfigDir + "/advanced.config"},
		{Name: "RABBITMQ_CONF_ENV_FILE", Value: rabbitMQConfigDir + "/rabbitmq-env.conf"},
		{Name: "RABBITMQ_MNESIA_BASE", Value: rabbitMQDataDir + "/mnesia"},
		{Name: "RABBITMQ_LOG_BASE", Value: rabbitMQLogDir},
		{Name: "ERL_CRASH_DUMP", Value: rabbitMQLogDir + "/erl_crash.dump"},
		// Erlang distribution stays inside the pod: a fixed loopback node name, the epmd the node
		// starts bound to loopback, and the distribution port too (a reachable distribution port
		// runs any code for whoever has the cookie). rabbitmqctl in the pod still works.
		{Name: "RABBITMQ_NODENAME", Value: "rabbit@localhost"},
		{Name: "ERL_EPMD_ADDRESS", Value: "127.0.0.1"},
		{Name: "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS", Value: "-kernel inet_dist_use_interface {127,0,0,1}"},
	}
	return brokerConfigMap(mb, files), restrictedBrokerPod(rabbitMQUID, corev1.Container{
		Name: "rabbitmq",
		// The script runs the VM as its child and turns the kubelet's SIGTERM into a clean stop.
		Command:      []string{"rabbitmq-server"},
		Env:          env,
		VolumeMounts: mounts,
	}, volumes), nil
}
