// Command msgbench benchmarks IoT messaging protocols: it is the Kubernetes operator, the load
// generator, the protocol gateways and the local runner in one binary.
package main

import (
	"errors"
	"fmt"
	"os"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "msgbench:", err)
		// An error may choose the exit status: `report --baseline` exits 3 on a regression, so
		// a pipeline can tell it from a command that could not run (1).
		var coded interface{ ExitCode() int }
		if errors.As(err, &coded) {
			os.Exit(coded.ExitCode())
		}
		os.Exit(1)
	}
}
