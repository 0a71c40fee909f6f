// Command pause is the process of a pod sandbox: it holds the pod's namespaces, reaps orphaned
// children and exits on SIGINT or SIGTERM, like Kubernetes' pause image. The e2e node
// (hack/e2e-node.sh) builds its sandbox image from it, because registry.k8s.io/pause cannot be
// pulled there.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var status syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
