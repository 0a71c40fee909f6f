package loadgen_test

import (
	"crypto/tls"
	"os"
	"strings"
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/loadgen"
)

// TestEnvironmentRecordsNegotiatedTLS runs MQTTS against Mosquitto with TLS 1.2 and 1.3 and
// checks that the result records what the handshakes negotiated (version and key-exchange
// group, pinned by the client's curve preferences), the protocol as spoken and the machine.
func TestEnvironmentRecordsNegotiatedTLS(t *testing.T) {
	t.Parallel() // its own broker
	for _, tc := range []struct {
		tls         string
		curves      []tls.CurveID
		mqtt        v1alpha1.MQTTVersion
		wantVersion string
		wantGroups  []string
		wantProto   string
	}{
		{"1.2", []tls.CurveID{tls.CurveP256}, v1alpha1.MQTT311, "TLS 1.2", []string{"CurveP256"}, "MQTT 3.1.1"},
		{"1.3", []tls.CurveID{tls.X25519}, v1alpha1.MQTT5, "TLS 1.3", []string{"X25519"}, "MQTT 5.0"},
		// Go's defaults: the post-quantum hybrid when the broker's OpenSSL has it.
		{"1.3", nil, v1alpha1.MQTT311, "TLS 1.3", []string{"X25519MLKEM768", "X25519"}, "MQTT 3.1.1"},
	} {
		t.Run(tc.tls+"/"+strings.Join(tc.wantGroups, ","), func(t *testing.T) {
			t.Parallel() // its own broker
			b := startMosquitto(t, tc.tls)
			spec := baseSpec()
			spec.Workload.Publishers, spec.Workload.Subscribers, spec.Workload.Topics = 1, 1, 1
			spec.Workload.Duration.Duration /= 4
			spec.MQTT.Version = tc.mqtt
			spec.TLS = &v1alpha1.TLSSpec{Enabled: true, Version: v1alpha1.TLSVersion(tc.tls)}
			cfg, err := certs.ClientTLS(b.CA, "127.0.0.1", tc.tls)
			if err != nil {
				t.Fatal(err)
			}
			cfg.CurvePreferences = tc.curves
			env := run(t, spec, loadgen.Options{Address: b.TLSAddr, TLS: cfg}).Environment
			if env.TLSVersion != tc.wantVersion || !contains(tc.wantGroups, env.TLSGroup) {
				t.Errorf("recorded %q with %q, want %s with one of %v", env.TLSVersion, env.TLSGroup, tc.wantVersion, tc.wantGroups)
			}
			if env.Protocol != tc.wantProto {
				t.Errorf("protocol %q, want %q", env.Protocol, tc.wantProto)
			}
			if env.CPUModel == "" || env.CPUs == 0 || !strings.HasPrefix(env.Kernel, "Linux ") || env.GoVersion == "" || env.MsgbenchCommit == "" {
				t.Errorf("machine or build missing: %+v", env)
			}
		})
	}
	t.Run("plain", func(t *testing.T) {
		t.Parallel() // its own broker
		b := startMosquitto(t, "")
		spec := baseSpec()
		spec.Workload.Publishers, spec.Workload.Subscribers, spec.Workload.Topics = 1, 1, 1
		spec.Workload.Duration.Duration /= 4
		env := run(t, spec, loadgen.Options{Address: b.Addr}).Environment
		if env.TLSVersion != "" || env.TLSGroup != "" {
			t.Errorf("TLS %q %q recorded for a plain run", env.TLSVersion, env.TLSGroup)
		}
		if host, _ := os.Hostname(); env.Host != host {
			t.Errorf("host %q, want %q", env.Host, host)
		}
	})
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
