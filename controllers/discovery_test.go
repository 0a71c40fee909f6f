package controllers_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/plan"
)

// MQTT-SN gateway discovery on Kubernetes: the sensors' workers read spec.groups[].mqttsn.discovery
// from the plan in the spec ConfigMap and search at its default address, their gateway's Service
// (the address the workers are given, which the fake kubelet maps to its in-process gateway):
// SEARCHGW there, GWINFO back, then CONNECT. Every reading reaches the MQTT backend.
func TestMQTTSNDiscoveryOnKubernetes(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	startOperatorWith(t, ns, env.Config, confirmWithin30s)
	startKubelet(t, ns, nil)
	createBenchmark(t, ns, "sn-discovery", `
protocol: mqtt
qos: 1
topics:
- {name: readings, pattern: "site/sensors/{index}", count: 4}
groups:
- name: sensors
  count: 4
  protocol: mqtt-sn
  mqttsn: {discovery: {interval: 1s, timeout: 20s}}
  publish: {topics: readings, payloadBytes: 32, interval: 250ms}
- name: backend
  count: 1
  subscribe: {filter: "site/#"}
workload: {warmup: 1s, duration: 3s}`)
	mb := waitFinished(t, ns, "sn-discovery", 90*time.Second)
	if mb.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("phase %s: %s", mb.Status.Phase, mb.Status.Message)
	}
	if s := mb.Status.Summary; s.Sent == 0 || s.Lost != 0 || s.Received != s.Sent {
		t.Errorf("summary %+v: want every reading through the gateway the sensors found", s)
	}
	var cm corev1.ConfigMap
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "sn-discovery-spec"}, &cm); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Unmarshal([]byte(cm.Data[plan.FileName]))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range p.Groups {
		if g.MQTTSN == nil {
			continue
		}
		if d := g.MQTTSN.Discovery; d == nil || d.Address != "" || d.Interval != time.Second || d.Timeout != 20*time.Second || d.Radius != 1 {
			t.Errorf("the workers' plan carries discovery %+v for %s, want the spec's, searching at the gateway's address", d, g.Name)
		}
	}
}
