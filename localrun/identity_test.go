package localrun

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/internal/testbin"
)

// authBroker is a Mosquitto that lets in only the users of users (name → password), and logs
// each client's connection (its client id and username).
func authBroker(t *testing.T, users map[string]string) *mosquitto.Process {
	t.Helper()
	if _, err := mosquitto.Binary(); err != nil {
		t.Skip(err)
	}
	pwfile := filepath.Join(t.TempDir(), "passwd")
	first := true
	for u, pw := range users {
		args := []string{"-b", pwfile, u, pw}
		if first {
			args = append([]string{"-c"}, args...)
			first = false
		}
		if out, err := exec.Command("mosquitto_passwd", args...).CombinedOutput(); err != nil {
			t.Fatalf("mosquitto_passwd (Debian's mosquitto package): %v %s", err, out)
		}
	}
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{
		Access: map[string]string{"password_file": pwfile, "allow_anonymous": "false"},
		Extra:  map[string]string{"log_type": "notice"}, // "New client connected … as <id> (…, u'<user>')"
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	return b
}

func runIdentity(t *testing.T, doc string, o Options) (string, error) {
	t.Helper()
	mb, err := manifest.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	o.Logf, o.NoEmbedded = t.Logf, true
	res, err := Run(context.Background(), mb, o)
	if err != nil {
		return "", err
	}
	if res.Phase != "Succeeded" || res.Sent == 0 || res.Lost == nil || *res.Lost != 0 || res.Received != res.Expected || res.Errors != 0 {
		t.Fatalf("phase %s (%s): sent %d, expected %d, received %d, lost %v, errors %d", res.Phase, res.Message, res.Sent, res.Expected, res.Received, res.Lost, res.Errors)
	}
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return string(data), nil
}

// Devices with client ids and credentials from patterns connect to a Mosquitto that lets no
// anonymous client in: every message arrives, and the broker's log shows each device under its
// id and username; a wrong password fails the run, saying the broker refused it.
func TestIdentityPatternsAgainstMosquitto(t *testing.T) {
	users := map[string]string{}
	for i := range 4 {
		users[fmt.Sprintf("dev-%d", i)] = fmt.Sprintf("pw-%d", i)
	}
	b := authBroker(t, users)
	doc := `
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: identity-patterns}
spec:
  protocol: mqtt
  qos: 1
  mqtt: {version: %q}
  broker: {type: external, external: {address: %q}}
  identity: {clientId: "sensor-{index:05}", username: "dev-{index}", password: %q}
  workload: {publishers: 2, subscribers: 2, topics: 2, payloadBytes: 32, rate: 20, warmup: 1s, duration: 2s}
`
	for _, v := range []string{"3.1.1", "5"} {
		if _, err := runIdentity(t, fmt.Sprintf(doc, v, b.Addr, "pw-{index}"), Options{}); err != nil {
			t.Fatalf("MQTT %s: %v", v, err)
		}
	}
	log := b.Log()
	for i := range 4 { // publishers sensor-00000 and 1, subscribers 2 and 3
		want := fmt.Sprintf("as sensor-%05d (", i)
		if !strings.Contains(log, want) || !strings.Contains(log, fmt.Sprintf("u'dev-%d'", i)) {
			t.Errorf("the broker's log has no client %q with user dev-%d:\n%s", want, i, log)
		}
	}
	if strings.Contains(log, "as mb") {
		t.Errorf("a client connected with msgbench's default id:\n%s", log)
	}
	_, err := runIdentity(t, fmt.Sprintf(doc, "3.1.1", b.Addr, "wrong-{index}"), Options{})
	if err == nil || !strings.Contains(err.Error(), "not authorized") || !strings.Contains(err.Error(), "the devices sent user names and passwords (spec.identity)") || !strings.Contains(err.Error(), "sensor-0000") {
		t.Fatalf("a wrong password: %v", err)
	}
}

// Credentials listed in a file beside the manifest: every device connects with its own line's,
// none of the passwords appears in the result, and a device without a line is refused before
// anything starts.
func TestIdentityCredentialsFile(t *testing.T) {
	users := map[string]string{"alpha": "s3cret-a,1", "beta": "s3cret-b", "gamma": "s3cret-c"}
	b := authBroker(t, users)
	dir := t.TempDir()
	lines := "# clientId,username,password\nmeter-0,alpha,s3cret-a,1\nmeter-1,beta,s3cret-b\nmeter-2,gamma,s3cret-c\n"
	if err := os.WriteFile(filepath.Join(dir, "creds.csv"), []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	doc := func(load string) string {
		return fmt.Sprintf(`
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: identity-file}
spec:
  protocol: mqtt
  qos: 1
  mqtt: {version: "5"}
  broker: {type: external, external: {address: %q}}
  identity: {clientId: "meter-{index}", credentials: {file: creds.csv}}
  %s
`, b.Addr, load)
	}
	// In process, and in two worker processes given the file.
	for _, c := range []struct {
		load    string
		command []string
	}{
		{"workload: {publishers: 2, subscribers: 1, topics: 1, payloadBytes: 32, rate: 20, warmup: 1s, duration: 2s}", nil},
		{"workers: {replicas: 2}\n  workload: {publishers: 2, subscribers: 1, topics: 2, payloadBytes: 32, rate: 20, warmup: 1s, duration: 2s}", []string{testbin.Msgbench(t)}},
	} {
		res, err := runIdentity(t, doc(c.load), Options{ManifestDir: dir, WorkerCommand: c.command})
		if err != nil {
			t.Fatalf("%s: %v", c.load, err)
		}
		for _, pw := range []string{"s3cret-a", "s3cret-b", "s3cret-c"} {
			if strings.Contains(res, pw) {
				t.Errorf("%s: the result holds password %s", c.load, pw)
			}
		}
	}
	log := b.Log()
	for i, u := range []string{"alpha", "beta", "gamma"} {
		if !strings.Contains(log, fmt.Sprintf("as meter-%d (", i)) || !strings.Contains(log, "u'"+u+"'") {
			t.Errorf("the broker's log has no meter-%d with user %s:\n%s", i, u, log)
		}
	}
	_, err := runIdentity(t, doc("workload: {publishers: 2, subscribers: 2, topics: 1}"), Options{ManifestDir: dir})
	want := "spec.identity.credentials.file: " + filepath.Join(dir, "creds.csv") + ": no line for client id meter-3 (group default, device 3); each device needs a line clientId,username,password"
	if err == nil || err.Error() != want {
		t.Fatalf("a device without a line: %v\nwant %s", err, want)
	}
	if strings.Count(b.Log(), "as meter-") != strings.Count(log, "as meter-") {
		t.Error("a refused run connected clients")
	}
}
