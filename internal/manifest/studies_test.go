package manifest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/internal/testenv"
	"github.com/msgbench/msgbench/suite"
)

// TestStudySuites reads each reference study's suite (config/samples/studies/<study>.yaml) as
// `msgbench run` and the API server would, expands its matrix and builds every point's run: each
// must validate, and the matrix must yield exactly the grid the study had when it was one
// MessagingBenchmark file per point (hack/studysamples, removed).
func TestStudySuites(t *testing.T) {
	studies := []struct {
		name        string
		points      int // files hack/studysamples wrote for the study
		repetitions int32
	}{
		{"dicomo2017-mqtt-mqttsn-http", 36, 3}, // 3 protocols × 3 QoS × 4 client counts
		{"h3-vs-mqtt-quic-nbiot", 8, 3},        // 2 protocols × 4 sizes
		{"emqx-mqtt-over-quic", 8, 3},          // 2 protocols × 3 delays, and 2 lossy points
		{"sinetstream-5g-sa-vs-lte", 48, 5},    // 2 profiles × 2 protocols × 3 payloads × 4 thread counts
		{"ipsj2022-mqtt-vs-mqtts", 24, 5},      // TLS off/on × 2 payloads × 2 pair counts × 3 QoS
	}
	dir := filepath.Join(testenv.RepoRoot(), "config", "samples", "studies")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(studies) {
		t.Errorf("%s holds %d suites, want one per study (%d)", dir, len(files), len(studies))
	}
	for _, st := range studies {
		t.Run(st.name, func(t *testing.T) {
			path := filepath.Join(dir, st.name+".yaml")
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if k := manifest.Kind(data); k != "MessagingBenchmarkSuite" {
				t.Fatalf("kind %q, want MessagingBenchmarkSuite", k)
			}
			if !strings.HasPrefix(string(data), "# Reference study ") {
				t.Error("the file does not start with the comment explaining the study")
			}
			d, err := manifest.ReadSuiteDoc(path)
			if err != nil {
				t.Fatal(err)
			}
			s := d.Suite
			if s.Name != st.name || s.Labels[v1alpha1.LabelStudy] != st.name {
				t.Errorf("metadata.name %q, label %s %q: want both %q", s.Name, v1alpha1.LabelStudy, s.Labels[v1alpha1.LabelStudy], st.name)
			}
			if s.Spec.Repetitions != st.repetitions {
				t.Errorf("repetitions %d, want %d", s.Spec.Repetitions, st.repetitions)
			}
			if s.Spec.Concurrency != 1 {
				t.Errorf("concurrency %d: a study's runs must not share the nodes", s.Spec.Concurrency)
			}
			points, err := suite.Expand(s, d.Template)
			if err != nil {
				t.Fatal(err)
			}
			if len(points) != st.points {
				t.Errorf("%d points, want %d", len(points), st.points)
			}
			names := map[string]bool{}
			for _, p := range points {
				if names[p.Name] {
					t.Errorf("two points named %s", p.Name)
				}
				names[p.Name] = true
				for rep := 1; rep <= int(s.Spec.Repetitions); rep++ {
					mb, err := suite.Benchmark(s, d.Template, p, rep)
					if err != nil {
						t.Errorf("point %s, repetition %d: %v", p.Name, rep, err)
						continue
					}
					if mb.Spec.Workload.Publishers < 1 || mb.Spec.Workload.Subscribers < 1 {
						t.Errorf("point %s: %d publishers, %d subscribers", p.Name, mb.Spec.Workload.Publishers, mb.Spec.Workload.Subscribers)
					}
				}
			}
			if len(s.Spec.Objectives) > 0 {
				t.Logf("objectives %v", s.Spec.Objectives)
			}
			t.Logf("%d points × %d repetitions", len(points), s.Spec.Repetitions)
		})
	}
}
