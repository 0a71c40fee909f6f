package plan_test

import (
	"strings"
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/plan"
)

// parseIdentity parses a manifest as msgbench run does (the CRD's schema and CEL rules).
func parseIdentity(t *testing.T, spec string) (*v1alpha1.MessagingBenchmarkSpec, error) {
	t.Helper()
	mb, err := manifest.Parse([]byte("apiVersion: msgbench.io/v1alpha1\nkind: MessagingBenchmark\nmetadata:\n  name: id\nspec:\n" + spec))
	if err != nil {
		return nil, err
	}
	return &mb.Spec, nil
}

func compileIdentity(t *testing.T, spec string, target plan.Target) (*plan.Plan, error) {
	t.Helper()
	s, err := parseIdentity(t, spec)
	if err != nil {
		return nil, err
	}
	return plan.Compile(s, target)
}

// A flat spec's pattern numbers its publishers, then its subscribers; a group's pattern, from
// spec.identity or its own, fills {index:N}, {group} and {run}; credentials take {clientId}; the
// default ids stay msgbench's.
func TestIdentityPatterns(t *testing.T) {
	p, err := compileIdentity(t, `  protocol: mqtt
  workload: {publishers: 3, subscribers: 2, topics: 1}
  identity: {clientId: "sensor-{index:05}", username: "dev-{index}", password: "pw-{clientId}"}
`, plan.Local)
	if err != nil {
		t.Fatal(err)
	}
	g := &p.Groups[0]
	if id := g.DeviceClientID(true, 2, "r1"); id != "sensor-00002" {
		t.Errorf("publisher 2: %q", id)
	}
	if id := g.DeviceClientID(false, 1, "r1"); id != "sensor-00004" {
		t.Errorf("subscriber 1 (after 3 publishers): %q", id)
	}
	if c := g.DeviceCredential(4, "r1", "sensor-00004"); c != (plan.Credential{Username: "dev-4", Password: "pw-sensor-00004"}) {
		t.Errorf("credential: %+v", c)
	}
	p, err = compileIdentity(t, `  protocol: mqtt
  workload: {publishers: 1, subscribers: 1, topics: 1}
`, plan.Local)
	if err != nil {
		t.Fatal(err)
	}
	if p.Groups[0].Identity != nil || p.Groups[0].DeviceClientID(true, 0, "r") != "" {
		t.Errorf("default: identity %+v", p.Groups[0].Identity)
	}

	_, err = compileIdentity(t, `  protocol: mqtt
  identity: {clientId: "{run}/x-{group}-{index:3}"}
  topics: [{name: t, pattern: "d/{device}", devices: a}]
  groups:
    - {name: a, count: 2, publish: {topics: t}}
    - {name: b, count: 2, identity: {clientId: "b{index}", username: "u{index}"}, subscribe: {filter: "d/#"}}
    - {name: c, count: 1, clientID: "legacy-{index}", subscribe: {filter: "d/#"}}
    - {name: d, count: 1, subscribe: {filter: "d/#"}}
`, plan.Local)
	if err == nil || !strings.Contains(err.Error(), "spec.identity.clientId") {
		// '/' is refused in a client id (topics carry it through {device}).
		t.Fatalf("a / in clientId: %v", err)
	}
	p, err = compileIdentity(t, `  protocol: mqtt
  identity: {clientId: "{run}-x-{group}-{index:3}"}
  topics: [{name: t, pattern: "d/{device}", devices: a}]
  groups:
    - {name: a, count: 2, publish: {topics: t}}
    - {name: b, count: 2, identity: {clientId: "b{index}", username: "u{index}"}, subscribe: {filter: "d/#"}}
    - {name: c, count: 1, clientID: "legacy-{index}", subscribe: {filter: "d/#"}}
`, plan.Local)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"r9-x-a-001", "b1", "legacy-0"} {
		g := &p.Groups[i]
		idx := min(1, int(g.Publishers+g.Subscribers)-1)
		if got := g.DeviceClientID(g.Publishers > 0, idx, "r9"); got != want {
			t.Errorf("group %s device %d: %q, want %q", g.Name, idx, got, want)
		}
	}
	if got := p.TopicName(p.Groups[0].Fleet.Topics, 1, "r9"); got != "d/r9-x-a-001" {
		t.Errorf("{device} topic: %q", got)
	}
	if c := p.Groups[1].DeviceCredential(1, "r9", "b1"); c != (plan.Credential{Username: "u1"}) {
		t.Errorf("b's credential: %+v", c)
	}
}

// What cannot give each device its own id, or credentials the protocol or place cannot carry,
// is refused before anything starts, naming the field.
func TestIdentityRefusals(t *testing.T) {
	for _, c := range []struct {
		name, spec string
		target     plan.Target
		want       string
	}{
		{"no index", `  protocol: mqtt
  identity: {clientId: "sensor"}
`, plan.Local, "spec.identity.clientId: Invalid value: clientId: the pattern must contain {index}"},
		{"unknown placeholder", `  protocol: mqtt
  identity: {clientId: "s-{idx}-{index}"}
`, plan.Local, "spec.identity.clientId: {idx} is not a placeholder; a pattern takes {index}, {index:N}, {group}, {run}"},
		{"password alone", `  protocol: mqtt
  identity: {password: "pw"}
`, plan.Local, "password: MQTT sends a password only with a username; set username too"},
		{"same ids in two groups", `  protocol: mqtt
  identity: {clientId: "dev-{index}"}
  topics: [{name: t, pattern: "t"}]
  groups:
    - {name: a, count: 2, publish: {topics: t}}
    - {name: b, count: 2, subscribe: {topics: t}}
`, plan.Local, "spec.identity.clientId: groups a and b would both have client id dev-0, and on an MQTT broker two clients with one id take each other's connection; put {group} in the pattern"},
		{"ids that meet", `  protocol: mqtt
  topics: [{name: t, pattern: "t"}]
  groups:
    - {name: a, count: 20, identity: {clientId: "s1{index}"}, publish: {topics: t}}
    - {name: b, count: 11, identity: {clientId: "s{index}"}, subscribe: {topics: t}}
`, plan.Local, "spec.groups[b].identity.clientId: groups a and b would both have client id s10"},
		{"both spellings", `  protocol: mqtt
  topics: [{name: t, pattern: "t"}]
  groups:
    - {name: a, count: 2, clientID: "x-{index}", identity: {clientId: "y-{index}"}, publish: {topics: t}}
`, plan.Local, "spec.groups[a].identity.clientId: spec.groups[a].clientID names the client ids too; keep one (identity.clientId)"},
		{"mqtt-sn credentials", `  protocol: mqtt-sn
  identity: {clientId: "sn-{index}", username: "u{index}"}
`, plan.Local, "spec.identity.username: MQTT-SN 1.2's CONNECT carries no username or password (only a client id)"},
		{"mqtt-sn group credentials", `  protocol: mqtt
  topics: [{name: t, pattern: "t/{index}", count: 2}]
  groups:
    - {name: sn, count: 2, protocol: mqtt-sn, identity: {credentials: {file: c.csv}, clientId: "s{index}"}, publish: {topics: t}}
`, plan.Local, "spec.groups[sn].identity.credentials.file: MQTT-SN 1.2's CONNECT carries no username or password"},
		{"kafka credentials on msgbench's Strimzi Kafka", `  protocol: kafka
  broker: {type: kafka}
  identity: {username: "u{index}"}
`, plan.Kubernetes, "spec.identity.username: on Kubernetes, the Strimzi Kafka msgbench runs has no SASL listener for the devices' users yet; run this spec with msgbench run"},
		{"saslMechanism without credentials", `  protocol: kafka
  broker: {type: kafka}
  identity: {clientId: "k{index}", saslMechanism: SCRAM-SHA-256}
`, plan.Local, "spec.identity.saslMechanism: the devices have no credentials to prove; set spec.identity.username and password, or credentials"},
		{"saslMechanism on mqtt", `  protocol: mqtt
  identity: {username: u, saslMechanism: PLAIN}
`, plan.Local, "spec.identity.saslMechanism: SASL is how Kafka clients authenticate; protocol mqtt shows the credentials its own way"},
		{"saslMechanism unknown", `  protocol: kafka
  broker: {type: kafka}
  identity: {username: u, saslMechanism: GSSAPI}
`, plan.Local, `spec.identity.saslMechanism: Unsupported value: "GSSAPI"`},
		{"file on Kubernetes", `  protocol: mqtt
  identity: {clientId: "d{index}", credentials: {file: c.csv}}
`, plan.Kubernetes, "spec.identity.credentials.file: a file on this machine is not in the worker pods; put it in a Secret (kubectl create secret generic NAME --from-file=credentials.csv=c.csv) and set credentials.secretRef"},
		{"Secret locally", `  protocol: mqtt
  identity: {clientId: "d{index}", credentials: {secretRef: {name: creds}}}
`, plan.Local, "spec.identity.credentials.secretRef: msgbench run reads no Kubernetes Secret"},
		{"listed with run ids", `  protocol: mqtt
  identity: {clientId: "{run}-{index}", credentials: {file: c.csv}}
`, plan.Local, "spec.identity.clientId: the credentials are listed by client id, and these ids hold the run's random id ({run}), which no list can know"},
		{"listed with default ids", `  protocol: mqtt
  identity: {credentials: {file: c.csv}}
`, plan.Local, "spec.identity.clientId: the credentials are listed by client id, and these ids hold the run's random id ({run}, msgbench's default)"},
		{"patterns and list", `  protocol: mqtt
  identity: {username: u, credentials: {file: c.csv}}
`, plan.Local, "credentials: the devices' usernames and passwords come from credentials or from the username and password patterns, not both"},
	} {
		_, err := compileIdentity(t, c.spec, c.target)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant %q", c.name, err, c.want)
		}
	}
}

// Kafka devices with credentials authenticate with SASL: PLAIN unless spec.identity says
// otherwise; on Kubernetes an external Kafka takes them.
func TestKafkaSASLMechanism(t *testing.T) {
	for _, c := range []struct {
		name, spec string
		target     plan.Target
		want       []v1alpha1.SASLMechanism // by group
	}{
		{"default PLAIN", `  protocol: kafka
  broker: {type: kafka}
  identity: {username: "dev-{index}", password: "pw-{index}"}
`, plan.Local, []v1alpha1.SASLMechanism{v1alpha1.SASLPlain}},
		{"SCRAM-SHA-512, external on Kubernetes", `  protocol: kafka
  broker: {type: external, external: {address: "kafka:9093"}}
  identity: {clientId: "d{index}", credentials: {secretRef: {name: creds}}, saslMechanism: SCRAM-SHA-512}
`, plan.Kubernetes, []v1alpha1.SASLMechanism{v1alpha1.SASLScramSHA512}},
		{"no credentials, no SASL", `  protocol: kafka
  broker: {type: kafka}
  identity: {clientId: "k{index}"}
`, plan.Local, []v1alpha1.SASLMechanism{""}},
	} {
		p, err := compileIdentity(t, c.spec, c.target)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		for i, want := range c.want {
			if got := p.Groups[i].Identity.SASLMechanism; got != want {
				t.Errorf("%s: group %s: mechanism %q, want %q", c.name, p.Groups[i].Name, got, want)
			}
		}
	}
}

// A credentials file: lines by client id, comments, and a missing device named.
func TestReadCredentials(t *testing.T) {
	creds, err := plan.ReadCredentials(strings.NewReader("# id,user,pass\nd0,u0,p,w0\r\n\n d1 , u1 ,\n"), "c.csv")
	if err != nil {
		t.Fatal(err)
	}
	if creds["d0"] != (plan.Credential{"u0", "p,w0"}) || creds["d1"] != (plan.Credential{"u1", ""}) || len(creds) != 2 {
		t.Errorf("%+v", creds)
	}
	if _, err := plan.ReadCredentials(strings.NewReader("d0,u0,p\nd0,u1,p\n"), "c.csv"); err == nil || err.Error() != "c.csv line 2: client id d0 is listed twice" {
		t.Errorf("twice: %v", err)
	}
	if _, err := plan.ReadCredentials(strings.NewReader("d0 secret\n"), "c.csv"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("a bad line is refused without quoting it: %v", err)
	}
	p, err := compileIdentity(t, `  protocol: mqtt
  workload: {publishers: 1, subscribers: 1, topics: 1}
  identity: {clientId: "d{index}", credentials: {file: c.csv}}
`, plan.Local)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Groups[0].CheckCredentials(creds, "c.csv", "r"); err != nil {
		t.Error(err)
	}
	delete(creds, "d1")
	if err := p.Groups[0].CheckCredentials(creds, "c.csv", "r"); err == nil || err.Error() != "c.csv: no line for client id d1 (group default, device 1); each device needs a line clientId,username,password" {
		t.Errorf("missing: %v", err)
	}
}
