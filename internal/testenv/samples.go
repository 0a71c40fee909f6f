package testenv

import "path/filepath"

// LocalOnlySamples are the samples under config/samples that only `msgbench run` runs: the
// Kubernetes API server refuses them by design, with a rule whose message starts "on
// Kubernetes, " (internal/manifest drops those rules locally). Each maps to the field the
// refusal names. Tests that create every sample on an API server expect exactly that refusal;
// docs/samples.md lists them.
var LocalOnlySamples = map[string]string{
	// Chaos Mesh cannot keep per-device radio states; the local emulator does.
	"network-radio-nb-iot.yaml": "spec.network.radio",
}

// LocalOnly returns the field a local-only sample's refusal names ("" for any other sample).
func LocalOnly(path string) string { return LocalOnlySamples[filepath.Base(path)] }
