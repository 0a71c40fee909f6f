package manifest_test

import (
	"testing"

	"github.com/msgbench/msgbench/internal/manifest"
)

// Churn specs that must be accepted: the rules on dutyCycle and reconnectStorm read optional
// fields (subscribers, awake, spread) only where they are set.
func TestChurnSpecsAreAccepted(t *testing.T) {
	for name, spec := range map[string]string{
		"duty-cycle-publishers-only": "protocol: mqtt\nworkload: {publishers: 20, duration: 4s, dutyCycle: {period: 1s, messagesPerWake: 2}}",
		"duty-cycle-mqtt-quic":       "protocol: mqtt-quic\nworkload: {dutyCycle: {period: 1s}}",
		"sleeping-subscribers":       "protocol: mqtt\nmqtt: {cleanSession: false}\nworkload: {dutyCycle: {period: 2s, subscribers: true, awake: 500ms}}",
		"storm-publishers-only-qos0": "protocol: mqtt\nqos: 0\nworkload: {subscribers: 0, reconnectStorm: {at: 2s}}",
		"storm-clean-sessions":       "protocol: mqtt\nworkload: {reconnectStorm: {at: 2s}}",
		"storm-persistent":           "protocol: mqtt\nmqtt: {cleanSession: false}\nworkload: {warmup: 1s, duration: 3s, reconnectStorm: {at: 2s, spread: 1s}}",
	} {
		mb, err := manifest.Parse(doc(name, spec))
		if err != nil {
			t.Errorf("%s: refused: %v", name, err)
			continue
		}
		if w := mb.Spec.Workload; w.DutyCycle != nil && w.DutyCycle.MessagesPerWake < 1 {
			t.Errorf("%s: messagesPerWake %d, want it defaulted to 1 or more", name, w.DutyCycle.MessagesPerWake)
		}
	}
}
