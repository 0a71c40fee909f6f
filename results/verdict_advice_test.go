package results_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/results"
)

// TestUnsentAdvice: the advice of a run that could not send its schedule fits what stopped it
// and names the spec's own load fields — not "lower workload.rate=0" for sensors publishing
// every minute, and not a lower rate at all when the publishers failed (a broker refusing a
// payload over its limit).
func TestUnsentAdvice(t *testing.T) {
	count := int32(10)
	spec := &v1alpha1.MessagingBenchmarkSpec{Protocol: v1alpha1.ProtocolMQTT, QoS: 1, MQTT: v1alpha1.MQTTSpec{Version: v1alpha1.MQTT311},
		Workload: v1alpha1.WorkloadSpec{Publishers: 1, Subscribers: 1, Topics: 1, PayloadBytes: 256, Duration: metav1.Duration{Duration: 600 * time.Second}},
		Topics:   []v1alpha1.TopicGroupSpec{{Name: "readings", Pattern: "r/{index}", Count: &count}},
		Groups: []v1alpha1.DeviceGroupSpec{
			{Name: "sensors", Count: 10, Publish: &v1alpha1.PublishSpec{Topics: "readings", PayloadBytes: 64, Interval: &metav1.Duration{Duration: time.Minute}}},
			{Name: "backend", Count: 1, Subscribe: &v1alpha1.SubscribeSpec{Filter: "r/#"}},
		}}
	r := &results.Result{Spec: spec, Sent: 20, Unsent: 80, Expected: 20, Received: 20, MeasuredSeconds: 600}
	v := results.Judge(r)
	msg := strings.Join(v.Reasons, "; ")
	if !v.Failed || !strings.Contains(msg, "spec.groups[sensors]'s load (raise publish.interval, 1m0s a message per device, or lower count, 10 devices)") {
		t.Errorf("an interval group's shortfall: %q", msg)
	}
	if strings.Contains(msg, "workload.rate") {
		t.Errorf("an interval group is told about workload.rate: %q", msg)
	}

	flat := &v1alpha1.MessagingBenchmarkSpec{Protocol: v1alpha1.ProtocolMQTT, QoS: 1, MQTT: v1alpha1.MQTTSpec{Version: v1alpha1.MQTT311},
		Workload: v1alpha1.WorkloadSpec{Publishers: 8, Subscribers: 8, Topics: 8, PayloadBytes: 256, Rate: 2000, Duration: metav1.Duration{Duration: 3 * time.Second}}}
	r = &results.Result{Spec: flat, Sent: 8, Unsent: 5992, Expected: 8, Received: 0, Errors: 16, MeasuredSeconds: 3}
	msg = strings.Join(results.Judge(r).Reasons, "; ")
	if !strings.Contains(msg, "the publishers stopped on the run's 16 errors") || strings.Contains(msg, "lower it") {
		t.Errorf("publishers that failed are advised: %q", msg)
	}
	r.Errors = 0
	msg = strings.Join(results.Judge(r).Reasons, "; ")
	if !strings.Contains(msg, "cannot carry workload.rate=2000: lower it") {
		t.Errorf("a flat run that could not keep up: %q", msg)
	}
}

// A publish-only run whose every message was refused (an HTTP endpoint answering 501 to each)
// measured nothing: it fails, though no subscriber expected anything to count as lost.
func TestNothingAcceptedFails(t *testing.T) {
	spec := &v1alpha1.MessagingBenchmarkSpec{Protocol: v1alpha1.ProtocolHTTP, QoS: 1,
		Workload: v1alpha1.WorkloadSpec{Publishers: 2, Subscribers: 0, Topics: 1, PayloadBytes: 32, Rate: 20, Duration: metav1.Duration{Duration: 2 * time.Second}}}
	r := &results.Result{Spec: spec, Sent: 40, Errors: 40, MeasuredSeconds: 2}
	v := results.Judge(r)
	if msg := strings.Join(v.Reasons, "; "); !v.Failed || !strings.Contains(msg, "none of the 40 messages sent was accepted") {
		t.Errorf("every message refused: failed %v, %q", v.Failed, msg)
	}
	r.Acked, r.Errors = 32, 8
	if v := results.Judge(r); v.Failed {
		t.Errorf("32 of 40 accepted: %v", v.Reasons)
	}
}
