package localrun

import "github.com/msgbench/msgbench/api/v1alpha1"

// workerProcesses reports whether a local run starts one load-generator process per worker
// (spec.workers.replicas), as pods do on Kubernetes. When false, every worker's clients live in
// the msgbench process itself, and the fleet limits count them all there. Over an emulated link
// (spec.network) the worker processes start inside the device network namespace, where the
// clients dial from; msgbench reaches their control protocol through a listener it opened in its
// own namespace and handed down (workers_process.go).
func workerProcesses(spec *v1alpha1.MessagingBenchmarkSpec) bool {
	return spec.Workers.Replicas > 1
}
