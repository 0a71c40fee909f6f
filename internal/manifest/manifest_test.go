package manifest_test

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/internal/testenv"
)

func doc(name, spec string) []byte {
	return []byte("apiVersion: msgbench.io/v1alpha1\nkind: MessagingBenchmark\nmetadata:\n  name: " + name + "\nspec:\n  " +
		strings.ReplaceAll(strings.TrimSpace(spec), "\n", "\n  ") + "\n")
}

// TestInvalidManifestsAreRefusedLocally runs the API server's invalid cases through local
// parsing: every one must be refused naming the same field.
func TestInvalidManifestsAreRefusedLocally(t *testing.T) {
	cases, err := testenv.InvalidCases()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			_, err := manifest.Parse(doc(tc.Name, tc.Spec))
			if tc.KubernetesOnly {
				// Only the API server refuses it: the local emulator can do what Chaos Mesh cannot.
				if err != nil {
					t.Fatalf("refused locally; only the API server should refuse it: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted; want a refusal naming %s", tc.Field)
			}
			if !strings.Contains(err.Error(), tc.Field) {
				t.Errorf("refusal does not name %s: %v", tc.Field, err)
			}
		})
	}
}

func TestDefaultsAndOverrides(t *testing.T) {
	mb, err := manifest.Parse(doc("x", "protocol: mqtt"), "workload.duration=5s", "qos=2", "spec.workload.publishers=3", "network.profile=lte",
		"network.lossPercent=2", "network.up.duplicatePercent=0.5")
	if err != nil {
		t.Fatal(err)
	}
	s := mb.Spec
	if s.Workload.Duration.Duration != 5*time.Second || s.QoS != 2 || s.Workload.Publishers != 3 || s.Network.Profile != "lte" ||
		*s.Network.LossPercent != "2" || *s.Network.Up.DuplicatePercent != "0.5" {
		t.Errorf("overrides not applied: %+v", s)
	}
	if s.MQTT.Inflight != 20 || s.Timeout.Duration != 15*time.Minute || s.Workload.TopicPrefix != "msgbench-" || !s.MQTT.CleanSessionOrDefault() {
		t.Errorf("defaults not applied: %+v", s)
	}
}

func TestUnknownFieldsAndBadInputAreErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		set            []string
	}{
		{"misspelt field", string(doc("x", "protocol: mqtt\nworkload: {duraton: 5s}")), "spec.workload.duraton", nil},
		{"unknown top-level spec field", string(doc("x", "protocol: mqtt\nbrokers: {}")), "spec.brokers", nil},
		{"wrong kind", "apiVersion: msgbench.io/v1alpha1\nkind: Benchmark\nmetadata: {name: x}\nspec: {protocol: mqtt}", "kind", nil},
		{"wrong apiVersion", "apiVersion: msgbench.io/v1\nkind: MessagingBenchmark\nmetadata: {name: x}\nspec: {protocol: mqtt}", "apiVersion", nil},
		{"no name", "apiVersion: msgbench.io/v1alpha1\nkind: MessagingBenchmark\nspec: {protocol: mqtt}", "metadata.name", nil},
		{"bad name", string(doc("My_Bench", "protocol: mqtt")), "metadata.name", nil},
		{"not yaml", "\t{{{", "not YAML", nil},
		{"empty", "", "empty manifest", nil},
		{"set without =", string(doc("x", "protocol: mqtt")), "want path=value", []string{"workload.duration"}},
		{"set into a scalar", string(doc("x", "protocol: mqtt")), "spec.protocol is not an object", []string{"protocol.x=1"}},
		{"set an invalid value", string(doc("x", "protocol: mqtt")), "spec.workload.duration", []string{"workload.duration=soon"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := manifest.Parse([]byte(tc.in), tc.set...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestEverySampleParses(t *testing.T) {
	n := 0
	err := filepath.WalkDir(filepath.Join(testenv.RepoRoot(), "config", "samples"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		if data, err := os.ReadFile(path); err == nil && manifest.Kind(data) == "MessagingBenchmarkSuite" {
			return nil // the studies' suites: TestStudySuites
		}
		n++
		if _, err := manifest.ReadFile(path); err != nil {
			t.Error(err)
		}
		return nil
	})
	if err != nil || n < 20 {
		t.Fatalf("walked %d samples: %v", n, err)
	}
}

// FuzzParse: arbitrary manifests and overrides are refused or accepted, never a panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte("apiVersion: msgbench.io/v1alpha1\nkind: MessagingBenchmark\nmetadata: {name: a}\nspec: {protocol: mqtt, workload: {duration: 1s}}"), "network.delay=5ms")
	f.Add([]byte("apiVersion: msgbench.io/v1alpha1\nkind: MessagingBenchmark\nmetadata: {name: a}\nspec: {protocol: mqtt-sn, qos: -1}"), "qos=-1")
	f.Add([]byte("{}"), "=")
	f.Fuzz(func(t *testing.T, data []byte, set string) {
		_, _ = manifest.Parse(data, set)
	})
}

// TestSamplesAreDocumented keeps docs/samples.md listing every hand-written sample.
func TestSamplesAreDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "samples.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pattern := range []string{"*.yaml", "network/*.yaml"} {
		files, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "samples", pattern))
		for _, f := range files {
			name := filepath.Base(f)
			if strings.HasPrefix(pattern, "network/") {
				name = "network/" + name
			}
			if !strings.Contains(string(doc), "`"+name+"`") {
				t.Errorf("docs/samples.md does not explain %s", name)
			}
		}
	}
}

// TestErrorsNameTheirSource: a problem an override causes names the --set, not the file (a typo
// in --set workload.duraton=5s was reported as the file's); the file's own problems still name
// the file.
func TestErrorsNameTheirSource(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, doc("x", "protocol: mqtt"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, doc("x", "protocol: mqtt\nworkload: {publishrs: 2}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, file string
		set        []string
		want       string // the whole message
	}{
		{"misspelt --set", good, []string{"workload.duraton=5s"},
			"--set workload.duraton=5s: unknown field spec.workload.duraton"},
		{"misspelt --set under a new object", good, []string{"workloads.duration=5s"},
			"--set workloads.duration=5s: unknown field spec.workloads"},
		{"invalid --set value", good, []string{"workload.duration=soon"},
			`--set workload.duration=soon: spec.workload.duration: Invalid value: "soon": spec.workload.duration in body should match '^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$'`},
		{"malformed --set", good, []string{"workload.duration"},
			`--set workload.duration: want path=value, e.g. workload.duration=5s`},
		{"the file's own typo", bad, []string{"workload.duration=5s"},
			bad + ": unknown field spec.workload.publishrs"},
		{"both", bad, []string{"qos=7"},
			bad + ": unknown field spec.workload.publishrs"}, // unknown fields are refused before values are checked
		{"the file's typo and a --set typo", bad, []string{"workload.duraton=5s"},
			bad + ": unknown field spec.workload.publishrs; --set workload.duraton=5s: unknown field spec.workload.duraton"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := manifest.ReadFile(tc.file, tc.set...)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error\n  %v\nwant\n  %s", err, tc.want)
			}
		})
	}
	// A value a --set makes invalid, checked by a rule on a field of its own.
	_, err := manifest.ReadFile(good, "qos=-1")
	if err == nil || !strings.HasPrefix(err.Error(), "--set qos=-1: spec.qos") || strings.Contains(err.Error(), good) {
		t.Errorf("error %v, want one starting --set qos=-1: spec.qos and not naming the file", err)
	}
}

// TestSetBrokerConfigKeys: broker settings are named with dots (acceptor.tcpReceiveBufferSize,
// mqtt.max_inflight), so below spec.broker.config the rest of an override's path is one key, and
// its value stays the text written (the map holds strings): 1048576 and yes are not a number and
// a boolean there.
func TestSetBrokerConfigKeys(t *testing.T) {
	mb, err := manifest.Parse(doc("x", "protocol: mqtt"), "broker.type=artemis", "broker.config.acceptor.tcpReceiveBufferSize=1048576",
		"broker.config.journal-datasync=false")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"acceptor.tcpReceiveBufferSize": "1048576", "journal-datasync": "false"}
	if !maps.Equal(mb.Spec.Broker.Config, want) {
		t.Errorf("broker.config %v, want %v", mb.Spec.Broker.Config, want)
	}
	// A managed key set this way is refused by the API server's rule, naming the field.
	_, err = manifest.Parse(doc("x", "protocol: mqtt"), "broker.type=rabbitmq", "broker.config.mqtt.listeners.tcp.default=1884")
	if err == nil || !strings.Contains(err.Error(), "spec.broker.config: a key is managed by msgbench") {
		t.Errorf("managed RabbitMQ key: %v", err)
	}
}

// TestFilesAreReadStrictly: a second document in a file was silently ignored (the first ran),
// and a key set twice silently took its last value; the API server refuses both under strict
// field validation, so msgbench does too, naming the file, the line and the key. An empty
// document (a trailing ---, a leading one) is no document.
func TestFilesAreReadStrictly(t *testing.T) {
	dir := t.TempDir()
	one := string(doc("x", "protocol: mqtt\nqos: 1"))
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, content string
		want          []string // nil: accepted
	}{
		{"two documents", one + "---\n" + string(doc("y", "protocol: mqtt\nqos: 7")),
			[]string{"two.yaml: ", "document 2 (line 9)", "one MessagingBenchmark per file"}},
		{"two documents after a leading separator", "---\n" + one + "---\n# the second\n" + string(doc("y", "protocol: mqtt")),
			[]string{"document 2 (line 11)", "one MessagingBenchmark per file"}},
		{"a duplicate key", one + "  qos: 2\n", []string{"dup.yaml: ", "line 8", `key "qos" set twice`}},
		{"a duplicate key in the second document", one + "---\n" + one + "  qos: 2\n", []string{"line 16", `key "qos" set twice`}},
		{"a trailing separator", one + "---\n", nil},
		{"a leading separator and a comment-only document", "---\n" + one + "---\n# nothing here\n---\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := map[bool]string{true: "dup.yaml", false: "two.yaml"}[strings.Contains(tc.name, "duplicate")]
			path := write(name, tc.content)
			mb, err := manifest.ReadFile(path)
			if tc.want == nil {
				if err != nil || mb.Spec.QoS != 1 {
					t.Fatalf("refused or misread (%v): %v", mb, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted (qos %d)", mb.Spec.QoS)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	// A suite file too.
	suite := "apiVersion: msgbench.io/v1alpha1\nkind: MessagingBenchmarkSuite\nmetadata: {name: s}\nspec:\n  template: {protocol: mqtt}\n  matrix:\n    axes: [{field: qos, values: [0, 1]}]\n"
	_, err := manifest.ReadSuiteFile(write("suite.yaml", suite+"---\n"+suite))
	if err == nil || !strings.Contains(err.Error(), "suite.yaml: ") || !strings.Contains(err.Error(), "one MessagingBenchmarkSuite per file") {
		t.Errorf("two suites: %v", err)
	}
	_, err = manifest.ReadSuiteFile(write("suite.yaml", suite+"  repetitions: 1\n  repetitions: 2\n"))
	if err == nil || !strings.Contains(err.Error(), `line 9: key "repetitions" set twice`) {
		t.Errorf("duplicate key in a suite: %v", err)
	}
	if _, err := manifest.ReadSuiteFile(write("suite.yaml", suite+"---\n")); err != nil {
		t.Errorf("a suite with a trailing separator: %v", err)
	}
}

// TestSetNamesTheWrongOverride: --set workload=3 --set workload.duration=1s blamed the second
// override (spec.workload is not an object) for what the first did; an empty value
// (--set workload.duration=) silently ran the default.
func TestSetNamesTheWrongOverride(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  []string
		want string // the message's start
	}{
		{"a scalar for an object, then a field under it", []string{"workload=3", "workload.duration=1s"}, "--set workload=3: spec.workload is an object"},
		{"a scalar for an object alone", []string{"workload=3"}, "--set workload=3: spec.workload is an object"},
		{"an empty value", []string{"workload.duration="}, "--set workload.duration=: no value"},
		{"an empty value after others", []string{"qos=1", "workload.duration= "}, "--set workload.duration= : no value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := manifest.Parse(doc("x", "protocol: mqtt"), tc.set...)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %v, want one starting %q", err, tc.want)
			}
		})
	}
	// An object value and an explicit empty string stay accepted.
	mb, err := manifest.Parse(doc("x", "protocol: mqtt"), "workload={duration: 2s}", "broker.image=''")
	if err != nil || mb.Spec.Workload.Duration.Duration != 2*time.Second {
		t.Errorf("object value: %v", err)
	}
}

// TestSetValueWithHash: YAML reads a # at a value's start, or after a blank, as a comment, so
// --set 'groups[backend].subscribe.filter=#' would have set the filter to null. A string field
// takes the text as written; any other field asks for quotes; a # inside a level (devices/#) or
// in quotes is the value's.
func TestSetValueWithHash(t *testing.T) {
	const fanIn = "../../config/samples/fleets/telemetry-fan-in.yaml"
	filter := func(mb *v1alpha1.MessagingBenchmark) string {
		for _, g := range mb.Spec.Groups {
			if g.Name == "backend" {
				return g.Subscribe.Filter
			}
		}
		return "?"
	}
	for _, tc := range []struct{ set, want string }{
		{"groups[backend].subscribe.filter=#", "#"},
		{"groups[backend].subscribe.filter= #", "#"},
		{`groups[backend].subscribe.filter="#"`, "#"},
		{"groups[backend].subscribe.filter='#'", "#"},
		{"groups[backend].subscribe.filter=devices/#", "devices/#"},
	} {
		mb, err := manifest.ReadFile(fanIn, tc.set)
		if err != nil {
			t.Errorf("--set %s: %v", tc.set, err)
			continue
		}
		if got := filter(mb); got != tc.want {
			t.Errorf("--set %s: filter %q, want %q", tc.set, got, tc.want)
		}
	}
	// Not a string: the comment would be dropped silently; the refusal says to quote.
	_, err := manifest.ReadFile(fanIn, "groups[sensors].count=5 # five")
	if err == nil || !strings.HasPrefix(err.Error(), "--set groups[sensors].count=5 # five: ") || !strings.Contains(err.Error(), "as a comment; quote the value") {
		t.Errorf("a comment in a number's value: %v", err)
	}
	// The text as written, refused by the filter's own rule and blamed on the --set.
	_, err = manifest.ReadFile(fanIn, "groups[backend].subscribe.filter=devices #")
	if err == nil || !strings.HasPrefix(err.Error(), "--set groups[backend].subscribe.filter=devices #: spec.groups[backend].subscribe.filter") {
		t.Errorf("filter \"devices #\": %v", err)
	}
}
