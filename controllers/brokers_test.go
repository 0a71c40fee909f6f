package controllers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/controllers"
	"github.com/msgbench/msgbench/controllers/resources"
)

// TestBrokerTypesProvision: a benchmark on each broker the operator runs besides Mosquitto gets
// that broker's Deployment (its image, the operator's --broker-image override where set), its
// configuration and a Service; the run goes through (the fake kubelet's workers use the suite's
// Mosquitto) and its result names the broker and version from the image; everything but the
// result is cleaned up.
func TestBrokerTypesProvision(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	startOperatorWith(t, ns, env.Config, func(o *controllers.Options) {
		o.Config.BrokerImages = map[v1alpha1.BrokerType]string{v1alpha1.BrokerArtemis: "ghcr.io/msgbench/artemis:2.40.0"}
	})
	startKubelet(t, ns, nil)
	for _, tc := range []struct {
		name, broker, image, container, configKey string
	}{
		{"on-rabbitmq", "rabbitmq", "rabbitmq:4.1.4", "rabbitmq", "rabbitmq.conf"},
		{"on-artemis", "artemis", "ghcr.io/msgbench/artemis:2.40.0", "artemis", "broker.xml"},
		{"on-emqx", "emqx", "emqx/emqx:5.8.6", "emqx", "emqx.conf"},
	} {
		createBenchmark(t, ns, tc.name, quickWorkload+"broker: {type: "+tc.broker+"}")
		// The Deployment exists while the run is on: look at it before it is cleaned up.
		var d appsv1.Deployment
		deadline := time.Now().Add(30 * time.Second)
		for env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: tc.name + "-broker"}, &d) != nil {
			if time.Now().After(deadline) {
				t.Fatalf("%s: no broker Deployment", tc.name)
			}
			time.Sleep(50 * time.Millisecond)
		}
		c := d.Spec.Template.Spec.Containers[0]
		if c.Name != tc.container || c.Image != tc.image {
			t.Errorf("%s: broker container %s image %s, want %s %s", tc.name, c.Name, c.Image, tc.container, tc.image)
		}
		var cm corev1.ConfigMap
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: tc.name + "-broker-config"}, &cm); err != nil || cm.Data[tc.configKey] == "" {
			t.Errorf("%s: broker ConfigMap without %s: %v", tc.name, tc.configKey, err)
		}
	}
	for _, tc := range []struct{ name, broker string }{
		{"on-rabbitmq", "rabbitmq 4.1.4 (rabbitmq:4.1.4)"},
		{"on-artemis", "artemis 2.40.0 (ghcr.io/msgbench/artemis:2.40.0)"},
		{"on-emqx", "emqx 5.8.6 (emqx/emqx:5.8.6)"},
	} {
		mb := waitFinished(t, ns, tc.name, 60*time.Second)
		if mb.Status.Phase != v1alpha1.PhaseSucceeded {
			t.Errorf("%s: phase %s: %s", tc.name, mb.Status.Phase, mb.Status.Message)
			continue
		}
		if r := resultConfigMap(t, ns, mb); r.Environment.Broker != tc.broker {
			t.Errorf("%s: result broker %q, want %q", tc.name, r.Environment.Broker, tc.broker)
		}
		waitGone(t, &appsv1.Deployment{}, ns, resources.NamesOf(mb).Broker)
		waitGone(t, &corev1.ConfigMap{}, ns, resources.NamesOf(mb).BrokerConfig)
	}
}

// TestBrokerVersionRefusedAtProvisioning: what the API server cannot know — the broker's version
// comes from the image the operator runs — is refused once the operator knows it, before any
// pod starts: MQTT 5 on a RabbitMQ 3.10 image.
func TestBrokerVersionRefusedAtProvisioning(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	startOperatorWith(t, ns, env.Config, func(o *controllers.Options) {
		o.Config.BrokerImages = map[v1alpha1.BrokerType]string{v1alpha1.BrokerRabbitMQ: "ghcr.io/msgbench/rabbitmq:3.10.8"}
	})
	startKubelet(t, ns, nil)
	createBenchmark(t, ns, "mqtt5", strings.Replace(quickWorkload, "qos: 1", "qos: 1\nmqtt: {version: \"5\"}", 1)+"broker: {type: rabbitmq}")
	mb := waitFinished(t, ns, "mqtt5", 30*time.Second)
	if mb.Status.Phase != v1alpha1.PhaseFailed || !strings.Contains(mb.Status.Message, "spec.mqtt.version: RabbitMQ 3.10.8 speaks MQTT 3.1.1 only") ||
		!strings.Contains(mb.Status.Message, "ghcr.io/msgbench/rabbitmq:3.10.8") {
		t.Errorf("phase %s message %q", mb.Status.Phase, mb.Status.Message)
	}
	var d appsv1.DeploymentList
	if err := env.Client.List(context.Background(), &d, client.InNamespace(ns)); err != nil || len(d.Items) != 0 {
		t.Errorf("a refused broker got %d Deployments", len(d.Items))
	}
}
