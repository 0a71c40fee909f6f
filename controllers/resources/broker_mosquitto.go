package resources

import (
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/internal/devicetls"
	"github.com/msgbench/msgbench/plan"
)

const mosquittoUID = 1883 // the image's mosquitto user

// mosquittoPod runs Eclipse Mosquitto from mosquitto.conf (brokers/mosquitto renders it, as for a
// local run) as uid 1883 under the restricted Pod Security Standard.
func mosquittoPod(mb *v1alpha1.MessagingBenchmark, p *plan.Plan, _ Config) (*corev1.ConfigMap, brokerPod, error) {
	c := mosquitto.Config{Port: MQTTPort, MaxInflight: int(mb.Spec.MQTT.Inflight), Extra: mb.Spec.Broker.Config}
	mounts := []corev1.VolumeMount{{Name: "config", MountPath: "/etc/mosquitto/msgbench", ReadOnly: true}}
	volumes := []corev1.Volume{configVolume(mb)}
	if p.Broker.TLS {
		c.TLSPort = MQTTSPort
		c.CAFile, c.CertFile, c.KeyFile = "/etc/mosquitto/certs/ca.crt", "/etc/mosquitto/certs/tls.crt", "/etc/mosquitto/certs/tls.key"
		c.TLSVersion = string(mb.Spec.TLS.Version)
		c.CiphersTLS13 = devicetls.ServerTLS13(&mb.Spec) // the server enforces a TLS 1.3 suite choice
		c.Ciphers = devicetls.ServerTLS12(&mb.Spec)
		mounts, volumes = withCerts(mb, "/etc/mosquitto/certs", mounts, volumes)
	}
	if p.Broker.TLS && mb.Spec.ClientCertificates() != nil {
		// As a local run does (brokers/mosquitto): one cafile with the server's CA, where
		// OpenSSL finds the server's chain, and the devices' CA, which verifies the clients.
		// The images have no shell to join two Secrets' files, so the operator writes the
		// joined certificates (no key) into the broker's ConfigMap (WithMosquittoCAFile).
		c.CAFile, c.RequireCertificate = "/etc/mosquitto/msgbench/"+MosquittoCAFileKey, true
	}
	if brokerWebSocket(mb) { // Mosquitto serves MQTT at any path
		c.WSPort = int(wsPort(mb))
		if p.Broker.TLS {
			c.WSSPort = int(wssPort(mb))
		}
	}
	conf, err := c.Render()
	if err != nil {
		return nil, brokerPod{}, err
	}
	return brokerConfigMap(mb, map[string]string{"mosquitto.conf": conf}), restrictedBrokerPod(mosquittoUID, corev1.Container{
		Name:         "mosquitto",
		Command:      []string{"mosquitto", "-c", "/etc/mosquitto/msgbench/mosquitto.conf"},
		VolumeMounts: mounts,
	}, volumes), nil
}

// MosquittoCAFileKey is the key of Mosquitto's cafile in the broker's ConfigMap with
// spec.tls.clientCertificates: the server's CA, then the devices' CA.
const MosquittoCAFileKey = "client-cafile.crt"

// NeedsMosquittoCAFile reports whether the broker's ConfigMap of mb must get the joined cafile
// (WithMosquittoCAFile): Mosquitto msgbench runs, TLS to it, client certificates.
func NeedsMosquittoCAFile(mb *v1alpha1.MessagingBenchmark, p *plan.Plan) bool {
	t := mb.Spec.Broker.Type
	return (t == v1alpha1.BrokerMosquitto || t == "") && p.Broker.TLS && mb.Spec.ClientCertificates() != nil
}

// WithMosquittoCAFile adds Mosquitto's cafile to the broker ConfigMap among objs: serverCA (ca.crt
// of the TLS Secret) and devicesCA (tls.crt of the devices' CA Secret), certificates only.
func WithMosquittoCAFile(mb *v1alpha1.MessagingBenchmark, objs []client.Object, serverCA, devicesCA []byte) {
	for _, o := range objs {
		if cm, ok := o.(*corev1.ConfigMap); ok && cm.Name == NamesOf(mb).BrokerConfig {
			joined := append(append(append([]byte(nil), serverCA...), '\n'), devicesCA...)
			cm.Data[MosquittoCAFileKey] = string(joined)
		}
	}
}
