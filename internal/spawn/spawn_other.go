//go:build !linux

package spawn

import (
	"bytes"
	"os/exec"
)

// Start starts cmd; only Linux has a parent-death signal.
func Start(cmd *exec.Cmd) error { return cmd.Start() }

// Forget does nothing without a guardian.
func Forget(*exec.Cmd) {}

// CombinedOutput is cmd.CombinedOutput.
func CombinedOutput(cmd *exec.Cmd) ([]byte, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}
