package controllers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/gateway"
	"github.com/msgbench/msgbench/gateway/mqttsn"
)

// An external MQTT-SN gateway on Kubernetes: the operator runs no gateway Deployment, its
// workers' clients go to spec.gateway.external's address (--broker) with the gateway's own
// predefined topic ids, and the GatewayReady condition says where they went.
func TestExternalGatewayOnKubernetes(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	startOperatorWith(t, ns, env.Config, confirmWithin30s)
	startKubelet(t, ns, nil)
	gw, err := mqttsn.Start(context.Background(), gateway.Options{Listen: "127.0.0.1:0", Broker: broker.Addr},
		mqttsn.Config{Predefined: map[uint16]string{300: "ext/0", 301: "ext/1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Close() })
	createBenchmark(t, ns, "external-gw", fmt.Sprintf(`
protocol: mqtt-sn
qos: 1
mqttsn: {topicIdType: predefined, predefinedTopicIds: {"ext/0": 300, "ext/1": 301}}
broker: {type: external, external: {address: %q}}
gateway: {external: {address: %q}}
workload: {publishers: 2, subscribers: 2, topics: 2, topicPrefix: ext/, payloadBytes: 16, rate: 20, warmup: 1s, duration: 2s}`, broker.Addr, gw.Addr()))
	ctx := context.Background()
	var job batchv1.Job
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "external-gw-workers"}, &job) == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no worker Job after 60 s")
		}
	}
	mb := waitFinished(t, ns, "external-gw", 90*time.Second)
	if mb.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("phase %s: %s", mb.Status.Phase, mb.Status.Message)
	}
	if s := mb.Status.Summary; s.Sent == 0 || s.Lost != 0 {
		t.Errorf("summary %+v: want every message through the external gateway", s)
	}
	if args := strings.Join(job.Spec.Template.Spec.Containers[0].Args, " "); !strings.Contains(args, "--broker "+gw.Addr().String()+" ") {
		t.Errorf("worker args %q: the clients should connect to the external gateway", args)
	}
	var deps appsv1.DeploymentList
	if err := env.Client.List(ctx, &deps, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, d := range deps.Items {
		t.Errorf("Deployment %s: msgbench starts no gateway (nor broker) here", d.Name)
	}
	if c := condition(mb, v1alpha1.ConditionGatewayReady); c.Reason != "External" || !strings.Contains(c.Message, gw.Addr().String()) {
		t.Errorf("GatewayReady %+v, want External naming the address", c)
	}
}
