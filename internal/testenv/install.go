package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Install runs hack/<script>, which installs what, a test's third-party dependency from a
// package registry (cached under bin/tools; make setup runs it), and returns what the script
// prints: the path to use. The script runs once per test binary. When it cannot be installed the
// test skips with why, except in CI (CI set in the environment, as .ci/run runs), where make
// setup must have installed it: there the test fails.
func Install(t testing.TB, script, what string) string {
	t.Helper()
	path, err := install(script)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s (make setup installs it for CI with hack/%s): %v", what, script, err)
		}
		t.Skipf("%s cannot be installed here: %v", what, err)
	}
	return path
}

// installs holds one sync.OnceValues per script.
var installs sync.Map

func install(script string) (string, error) {
	once, _ := installs.LoadOrStore(script, sync.OnceValues(func() (string, error) {
		out, err := exec.Command(filepath.Join(RepoRoot(), "hack", script)).Output()
		if err != nil {
			msg := err.Error()
			if ee, ok := errors.AsType[*exec.ExitError](err); ok {
				msg += ": " + strings.TrimSpace(string(ee.Stderr))
			}
			return "", fmt.Errorf("hack/%s: %s", script, msg)
		}
		return strings.TrimSpace(string(out)), nil
	}))
	return once.(func() (string, error))()
}
