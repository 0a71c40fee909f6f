// Package testbin builds the msgbench binary once per test binary, for tests that run it as a
// process.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// The msgbench binary for tests that run it as a process (a test binary is not one): built once
// per test binary, since each build links it again (5–11 s on the 2-core CI machine, even with
// every package cached).
var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// Msgbench returns msgbench built from this module's cmd/msgbench, building it on the
// first call into a temporary folder that Remove deletes.
func Msgbench(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "msgbench-test-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "msgbench")
		cmd := exec.Command("go", "build", "-o", builtBin, "github.com/msgbench/msgbench/cmd/msgbench")
		_, file, _, _ := runtime.Caller(0)
		cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// Remove deletes the binary Msgbench built, if any: call it from TestMain
// after m.Run.
func Remove() {
	if builtBin != "" {
		_ = os.RemoveAll(filepath.Dir(builtBin))
	}
}
