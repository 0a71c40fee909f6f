package testenv

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Install runs hack/<script>, which installs what, a test's third-party dependency from a
// package registry (cached under bin/tools; make setup runs it), and returns what the script
// prints: the path to use. When it cannot be installed the test skips with why, except in CI,
// where make setup must have installed it.
func Install(t testing.TB, script, what string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(RepoRoot(), "hack", script)).Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			msg += ": " + string(ee.Stderr)
		}
		if os.Getenv("CI") != "" {
			t.Fatalf("hack/%s (make setup installs %s for CI): %s", script, what, msg)
		}
		t.Skipf("%s cannot be installed here (hack/%s needs python3 with venv, npm or the registry): %s", what, script, msg)
	}
	return strings.TrimSpace(string(out))
}
