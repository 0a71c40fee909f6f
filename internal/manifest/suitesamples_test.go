package manifest_test

import (
	"path/filepath"
	"testing"

	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/internal/testenv"
	"github.com/msgbench/msgbench/plan"
	"github.com/msgbench/msgbench/suite"
)

// TestSuiteSamples reads each suite sample (config/samples/suites/, broker-comparison.yaml) as
// `msgbench run` would and compiles every run it would start: every point of a matrix, or a
// search's bounds. A sample whose template or axis names a field the spec lacks, or a value a
// run refuses, fails here rather than minutes into a user's suite.
func TestSuiteSamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "samples", "suites", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(testenv.RepoRoot(), "config", "samples", "broker-comparison.yaml"))
	if len(files) < 4 {
		t.Fatalf("found only %d suite samples", len(files))
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			d, err := manifest.ReadSuiteDoc(path)
			if err != nil {
				t.Fatal(err)
			}
			s := d.Suite
			if s.Spec.Search != nil {
				if err := suite.CheckSearch(s, d.Template, manifest.FieldType); err != nil {
					t.Fatal(err)
				}
				return
			}
			points, err := suite.Expand(s, d.Template)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range points {
				mb, err := suite.Benchmark(s, d.Template, p, 1)
				if err != nil {
					t.Errorf("point %s: %v", p.Name, err)
					continue
				}
				if _, err := plan.CompileBenchmark(mb, plan.Local); err != nil {
					t.Errorf("point %s: %v", p.Name, err)
				}
			}
			t.Logf("%d points", len(points))
		})
	}
}
