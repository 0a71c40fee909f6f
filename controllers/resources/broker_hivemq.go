package resources

import (
	"errors"

	corev1 "k8s.io/api/core/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// hiveMQPod: being written (issue #20).
func hiveMQPod(mb *v1alpha1.MessagingBenchmark, _ Config) (*corev1.ConfigMap, brokerPod, error) {
	return nil, brokerPod{}, errors.New("spec.broker.type " + string(mb.Spec.Broker.Type) + ": not built yet")
}
