package localaddr

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	HostsFile = filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(HostsFile, []byte("127.0.0.1 localhost\n10.0.0.7 broker.lab mqtt # the lab broker\n# 10.0.0.8 commented.out\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host string
		want string // "" allowed, else a part of the error
	}{
		{"localhost", ""},
		{"127.0.0.1", ""},
		{"::1", ""},
		{"[::1]", ""},
		{"198.18.0.2", ""},
		{"broker.lab", ""},
		{"MQTT", ""},
		{"commented.out", "not a name of this machine"},
		{"minio.minio.svc", "Kubernetes Service name"},
		{"mosquitto.mqtt.svc.cluster.local", "Kubernetes Service name"},
		{"s3.amazonaws.com", "not a name of this machine"},
	} {
		err := Check("spec.x", c.host)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want allowed", c.host, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "spec.x: ")):
			t.Errorf("%s: %v, want an error naming spec.x and %q", c.host, err, c.want)
		}
	}
}
