// Command msgbench benchmarks IoT messaging protocols: it is the Kubernetes operator, the load
// generator, the protocol gateways and the local runner in one binary.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "msgbench:", err)
		os.Exit(1)
	}
}
