package manifest

import (
	"errors"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/results/objectives"
)

// ParseSuite reads one MessagingBenchmarkSuite like Parse reads a benchmark: overrides apply to
// spec.template (`--set workload.duration=5s` shortens every run), then it is defaulted and
// validated like the API server would. Its points are not validated here (suite.Expand does).
func ParseSuite(data []byte, overrides ...string) (*v1alpha1.MessagingBenchmarkSuite, error) {
	d, err := ParseSuiteDoc(data, overrides...)
	if err != nil {
		return nil, err
	}
	return d.Suite, nil
}

// SuiteDoc is a parsed suite with its template as the manifest spells it after admission: the
// typed spec cannot say "false" or "0s" where the default is true or 5s (omitempty), so runs are
// built from Template (suite.Benchmark).
type SuiteDoc struct {
	Suite    *v1alpha1.MessagingBenchmarkSuite
	Template map[string]any
}

// ParseSuiteDoc is ParseSuite keeping the template's map.
func ParseSuiteDoc(data []byte, overrides ...string) (*SuiteDoc, error) {
	obj, err := read(data, "MessagingBenchmarkSuite")
	if err != nil {
		return nil, err
	}
	if err := setAll(obj, overrides, []string{"template"}); err != nil {
		return nil, err
	}
	if err := admit(obj, "MessagingBenchmarkSuite", templated(overrides)); err != nil {
		var pe *Error
		if errors.As(err, &pe) { // blame the --set as the user wrote it
			for i := range pe.Problems {
				pe.Problems[i].Override = strings.TrimPrefix(pe.Problems[i].Override, "template.")
				for j := range pe.Problems[i].With {
					pe.Problems[i].With[j] = strings.TrimPrefix(pe.Problems[i].With[j], "template.")
				}
			}
		}
		return nil, err
	}
	var s v1alpha1.MessagingBenchmarkSuite
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(runtime.DeepCopyJSON(obj), &s, true); err != nil {
		return nil, err
	}
	if _, err := objectives.ParseAll(s.Spec.Objectives); err != nil {
		return nil, &Error{Problems: []Problem{{Message: err.Error()}}}
	}
	tmpl, _ := obj["spec"].(map[string]any)["template"].(map[string]any)
	return &SuiteDoc{Suite: &s, Template: tmpl}, nil
}

// templated are overrides as paths under spec.template, so that a problem under the template is
// blamed on the --set that caused it.
func templated(overrides []string) []string {
	out := make([]string, len(overrides))
	for i, o := range overrides {
		out[i] = "template." + o
	}
	return out
}

// ReadSuiteFile is ParseSuite of a file; problems name the file.
func ReadSuiteFile(path string, overrides ...string) (*v1alpha1.MessagingBenchmarkSuite, error) {
	d, err := ReadSuiteDoc(path, overrides...)
	if err != nil {
		return nil, err
	}
	return d.Suite, nil
}

// ReadSuiteDoc is ParseSuiteDoc of a file; problems name the file.
func ReadSuiteDoc(path string, overrides ...string) (*SuiteDoc, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := ParseSuiteDoc(data, overrides...)
	if err != nil {
		return nil, inFile(path, err)
	}
	return s, nil
}
