// Package crd embeds the generated CustomResourceDefinition, so that local runs apply exactly
// the defaults and admission rules a Kubernetes API server applies.
package crd

import _ "embed"

// MessagingBenchmark is config/crd/bases/msgbench.io_messagingbenchmarks.yaml.
//
//go:embed bases/msgbench.io_messagingbenchmarks.yaml
var MessagingBenchmark []byte

// MessagingBenchmarkSuite is config/crd/bases/msgbench.io_messagingbenchmarksuites.yaml.
//
//go:embed bases/msgbench.io_messagingbenchmarksuites.yaml
var MessagingBenchmarkSuite []byte
