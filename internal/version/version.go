// Package version reports which msgbench build is running. Version and Commit are set at build
// time with -ldflags "-X github.com/msgbench/msgbench/internal/version.Version=…".
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

var (
	// Version is the release version, or "dev" for a local build.
	Version = "dev"
	// Commit is the git commit the binary was built from.
	Commit = ""
)

// CommitOrUnknown returns Commit, falling back to the VCS revision Go embedded in the binary.
func CommitOrUnknown() string {
	if Commit != "" {
		return Commit
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}

// String is the one-line description `msgbench version` prints.
func String() string {
	return fmt.Sprintf("msgbench %s (commit %s, %s %s/%s)", Version, CommitOrUnknown(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
