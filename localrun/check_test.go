package localrun

import (
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/brokers/rabbitmq"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/netem"
	"github.com/msgbench/msgbench/plan"
)

// TestCheckRefusesQUICBelowItsMTU: QUIC (mqtt-quic, HTTP/3) on a link whose MTU is below what
// its 1200-byte handshake datagrams need is refused before anything starts, naming the field
// that sets the MTU; the MTU comes from netem's profile table.
func TestCheckRefusesQUICBelowItsMTU(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  []string
		want string // "" accepts
	}{
		{"mqtt-quic-nb-iot", []string{"protocol=mqtt-quic", "network.profile=nb-iot"}, "spec.network.profile: nb-iot's MTU of 296 bytes is too small for mqtt-quic"},
		{"http3-nb-iot", []string{"protocol=http", `http.version="3"`, "network.profile=nb-iot"}, "spec.network.profile: nb-iot's MTU of 296 bytes is too small for http version 3"},
		{"mqtt-quic-mtu-override", []string{"protocol=mqtt-quic", "network.profile=lte", "network.mtuBytes=1200"}, "spec.network.mtuBytes: an MTU of 1200 bytes is too small"},
		{"mqtt-quic-nb-iot-raised", []string{"protocol=mqtt-quic", "network.profile=nb-iot", "network.mtuBytes=1280"}, ""},
		{"http2-nb-iot", []string{"protocol=http", `http.version="2"`, "network.profile=nb-iot"}, ""},
		{"mqtt-nb-iot", []string{"protocol=mqtt", "network.profile=nb-iot"}, ""},
		{"mqtt-quic-lte", []string{"protocol=mqtt-quic", "network.profile=lte"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mb, err := manifest.ReadFile("../config/samples/mqtt-qos1.yaml", tc.set...)
			if err != nil {
				t.Fatal(err)
			}
			_, err = plan.Compile(&mb.Spec, plan.Local)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want %q", err, tc.want)
			}
			if tc.want == "" {
				return
			}
			// Check says so too, before it asks for the privileges the emulator needs.
			start := time.Now()
			if _, err := Check(&mb.Spec, Options{}); err == nil || !strings.Contains(err.Error(), tc.want) {
				if _, berr := mosquitto.Binary(); berr == nil { // without it the embedded broker's checks come first
					t.Errorf("Check: %v, want %q", err, tc.want)
				}
			}
			if took := time.Since(start); took > time.Second {
				t.Errorf("Check took %s", took)
			}
		})
	}
	// Every preset below the minimum is refused for QUIC, every other accepted: the rule reads
	// the profile table, so a new preset is covered without a change here.
	for _, p := range netem.Profiles() {
		if p.Name == "none" {
			continue
		}
		mb, err := manifest.ReadFile("../config/samples/mqtt-qos1.yaml", "protocol=mqtt-quic", "network.profile="+string(p.Name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := plan.Compile(&mb.Spec, plan.Local); (err != nil) != (p.Link.EffectiveMTU() < plan.QUICMinMTU) {
			t.Errorf("profile %s (MTU %d): %v", p.Name, p.Link.EffectiveMTU(), err)
		}
	}
}

// TestCheckRefusesBrokerConfigKeys: a key the broker does not know, or one msgbench manages, is
// refused before the broker starts, naming the key.
func TestCheckRefusesBrokerConfigKeys(t *testing.T) {
	cases := []struct {
		name string
		set  []string
		want string
		skip func() error
	}{
		// Admission refuses these two already; Check must too, for a spec that did not come
		// through it (a Go client, a program calling localrun.Run).
		{"mosquitto-unknown", []string{"foo_bar"}, "spec.broker.config.foo_bar: not a mosquitto.conf key", nil},
		{"mosquitto-access", []string{"password_file"}, "spec.broker.config.password_file: managed by msgbench", nil},
		{"rabbitmq-unknown", []string{"foo.bar", "broker.type=rabbitmq"}, "spec.broker.config.foo.bar: not a rabbitmq.conf key of RabbitMQ 3.10",
			func() error { _, err := rabbitmq.Binary(); return err }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.skip != nil {
				if err := tc.skip(); err != nil {
					t.Skip(err)
				}
			}
			mb, err := manifest.ReadFile("../config/samples/mqtt-qos1.yaml", tc.set[1:]...)
			if err != nil {
				t.Fatal(err)
			}
			mb.Spec.Broker.Config = map[string]string{tc.set[0]: "1"}
			start := time.Now()
			if _, err := Check(&mb.Spec, Options{}); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check: %v, want %q", err, tc.want)
			}
			if took := time.Since(start); took > time.Second {
				t.Errorf("Check took %s", took)
			}
		})
	}
}

// TestCheckRefusesDiscoveryByName: a local run resolves no name through DNS, so a
// spec.mqttsn.discovery.address it would have to look up is refused before anything starts,
// naming the field; an IP address (a broadcast one too) passes.
func TestCheckRefusesDiscoveryByName(t *testing.T) {
	for _, tc := range []struct {
		set  []string
		want string // "" accepts
	}{
		{[]string{"mqttsn.discovery.address=gw.example.com:1884"}, "spec.mqttsn.discovery.address: gw.example.com is not a name of this machine"},
		{[]string{"mqttsn.discovery.address=999.1.1.1"}, "spec.mqttsn.discovery.address: 999.1.1.1 is not a name of this machine"},
		{[]string{"mqttsn.discovery.address=gateway.iot.svc"}, "spec.mqttsn.discovery.address: gateway.iot.svc is a Kubernetes Service name"},
		{[]string{"mqttsn.discovery.address=127.255.255.255"}, ""},
		{[]string{"mqttsn.discovery.address=localhost:1884"}, ""},
	} {
		mb, err := manifest.ReadFile("../config/samples/mqtt-sn-qos1.yaml", tc.set...)
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.Compile(&mb.Spec, plan.Local)
		if err != nil {
			t.Fatal(err)
		}
		err = checkDiscoveryHosts(&mb.Spec, p)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: refused: %v", tc.set, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: got %v, want %q", tc.set, err, tc.want)
		}
	}
}
