// Package v1alpha1 holds the MessagingBenchmark API: one declarative description of an IoT
// messaging benchmark (protocol, broker, QoS, payload, clients, emulated network) that runs the
// same way on Kubernetes (through the msgbench operator) and on one machine (`msgbench run`).
//
// +kubebuilder:object:generate=true
// +groupName=msgbench.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the API group and version of every type in this package.
	GroupVersion = schema.GroupVersion{Group: "msgbench.io", Version: "v1alpha1"}

	// SchemeBuilder registers the types of this package with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &MessagingBenchmark{}, &MessagingBenchmarkList{}, &MessagingBenchmarkSuite{}, &MessagingBenchmarkSuiteList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
