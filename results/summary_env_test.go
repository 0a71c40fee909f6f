package results_test

import (
	"strings"
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/results"
)

// TestSummaryNamesWhatWasSpokenAndWhere: the protocol row gives the protocol as spoken (MQTT 5
// read "mqtt", HTTP/3 "http"), with the negotiated TLS; the environment and network rows say on
// what and over what link the run was measured.
func TestSummaryNamesWhatWasSpokenAndWhere(t *testing.T) {
	spec := func(p v1alpha1.Protocol, mutate func(*v1alpha1.MessagingBenchmarkSpec)) *v1alpha1.MessagingBenchmarkSpec {
		s := &v1alpha1.MessagingBenchmarkSpec{Protocol: p, QoS: 1, MQTT: v1alpha1.MQTTSpec{Version: v1alpha1.MQTT311}}
		s.Workload.PayloadBytes, s.Workload.Publishers, s.Workload.Subscribers, s.Workload.Topics = 256, 8, 8, 8
		if mutate != nil {
			mutate(s)
		}
		return s
	}
	for _, tc := range []struct {
		name string
		r    results.Result
		want []string
	}{
		{"mqtt 5 with TLS", results.Result{Spec: spec("mqtt", func(s *v1alpha1.MessagingBenchmarkSpec) {
			s.MQTT.Version = v1alpha1.MQTT5
			s.TLS = &v1alpha1.TLSSpec{Enabled: true, Version: "1.3"}
		}), Environment: results.Environment{Protocol: "MQTT 5.0", TLSVersion: "TLS 1.3", TLSGroup: "X25519MLKEM768",
			CPUModel: "AMD EPYC 7B13", CPUs: 8, Kernel: "Linux 6.8.0-45-generic", MsgbenchVersion: "dev",
			MsgbenchCommit: "0123456789abcdef0123", GoVersion: "go1.26.0"}},
			[]string{"  protocol     MQTT 5.0 + TLS 1.3 (X25519MLKEM768), QoS 1, 256 B payload, 8 pub / 8 sub on 8 topics\n",
				"  environment  AMD EPYC 7B13, 8 cores, Linux 6.8.0-45-generic; msgbench dev (commit 0123456789ab), go1.26.0\n"}},
		{"http/3 from the spec alone (an older result)", results.Result{Spec: spec("http", func(s *v1alpha1.MessagingBenchmarkSpec) {
			s.HTTP.Version = v1alpha1.HTTP3
		})}, []string{"  protocol  HTTP/3, QoS 1,"}},
		{"network as applied", results.Result{Spec: spec("mqtt-sn", nil), Network: map[string]any{
			"profile": "nb-iot", "rttMillis": 400.0, "mtuBytes": 1280.0,
			"up":   map[string]any{"delay": "200ms", "jitter": "0s", "lossPercent": "2", "bandwidth": "30kbit"},
			"down": map[string]any{"delay": "200ms", "jitter": "20ms", "lossPercent": "0", "bandwidth": "0bit"},
		}}, []string{"MQTT-SN 1.2, QoS 1", "  network   nb-iot: RTT 400 ms; up 200ms, 2% loss, 30kbit; down 200ms, ± 20ms; MTU 1280\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			r := tc.r
			r.Name, r.Phase = "x", "Succeeded"
			if err := results.WriteSummary(&b, &r); err != nil {
				t.Fatal(err)
			}
			got := strings.Join(strings.Fields(b.String()), " ") // alignment aside
			for _, w := range tc.want {
				if !strings.Contains(got, strings.Join(strings.Fields(w), " ")) {
					t.Errorf("summary lacks %q:\n%s", w, b.String())
				}
			}
		})
	}
}
