// Package testenv starts the real things msgbench's tests talk to: a kube-apiserver with etcd
// (controller-runtime's envtest, binaries from hack/envtest-assets.sh) with msgbench's CRDs and
// the third-party CRDs it drives installed.
package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	msgbenchv1 "github.com/msgbench/msgbench/api/v1alpha1"
)

// ThirdPartyCRDsEnv names a folder of the real third-party CRDs (Chaos Mesh, Strimzi). When it is
// unset, the project's own minimal copies in internal/testenv/testdata/crds are installed.
const ThirdPartyCRDsEnv = "MSGBENCH_THIRD_PARTY_CRDS"

// Env is a running API server.
type Env struct {
	env    *envtest.Environment
	Config *rest.Config
	Client client.Client
	// ThirdPartyCRDs is the folder the third-party CRDs came from.
	ThirdPartyCRDs string
}

// addToScheme adds msgbench's types to client-go's global scheme, once: adding them again writes
// the scheme's maps while clients of an API server started earlier (an event recorder still
// flushing) read them, a data race under -race.
var addToScheme = sync.OnceValue(func() error { return msgbenchv1.AddToScheme(scheme.Scheme) })

// RepoRoot is the top folder of the msgbench source tree.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Start starts etcd and a kube-apiserver and installs the CRDs. KUBEBUILDER_ASSETS must name the
// folder hack/envtest-assets.sh prints; `make test` sets it.
func Start() (*Env, error) { return start(true) }

// StartWithoutThirdParty starts an API server with only msgbench's CRD: a cluster without Chaos
// Mesh or Strimzi.
func StartWithoutThirdParty() (*Env, error) { return start(false) }

func start(thirdParty bool) (*Env, error) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		return nil, fmt.Errorf("KUBEBUILDER_ASSETS is not set: run `make test`, or `export KUBEBUILDER_ASSETS=$(hack/envtest-assets.sh)` first")
	}
	root := RepoRoot()
	third := os.Getenv(ThirdPartyCRDsEnv)
	if third == "" {
		third = filepath.Join(root, "internal", "testenv", "testdata", "crds")
	}
	paths := []string{filepath.Join(root, "config", "crd", "bases")}
	if _, err := os.Stat(third); err == nil && thirdParty {
		paths = append(paths, third)
	}
	s := scheme.Scheme
	if err := addToScheme(); err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     paths,
		ErrorIfCRDPathMissing: true,
		Scheme:                s,
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("start kube-apiserver from %s: %w", assets, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &Env{env: env, Config: cfg, Client: c, ThirdPartyCRDs: third}, nil
}

// Stop stops the API server and etcd.
func (e *Env) Stop() error { return e.env.Stop() }

// Kubectl returns the path of the kubectl in KUBEBUILDER_ASSETS and a kubeconfig file (in dir)
// for this API server.
func (e *Env) Kubectl(dir string) (kubectl string, kubeconfig string, err error) {
	kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, e.env.KubeConfig, 0o600); err != nil {
		return "", "", err
	}
	return filepath.Join(e.env.BinaryAssetsDirectory, "kubectl"), kubeconfig, nil
}

// HasCRD reports whether the API server serves the given group and version.
func (e *Env) HasCRD(ctx context.Context, gvk schema.GroupVersionKind) bool {
	_, err := e.Client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	return err == nil
}

// InvalidCase is one manifest of api/v1alpha1/testdata/invalid.yaml: it breaks one admission
// rule, and the refusal must name Field. A KubernetesOnly case breaks a rule that only the API
// server enforces (its message starts "on Kubernetes, "): msgbench run must accept and run it.
type InvalidCase struct {
	Name           string `json:"name"`
	Field          string `json:"field"`
	Spec           string `json:"spec"`
	KubernetesOnly bool   `json:"kubernetesOnly,omitempty"`
}

// InvalidCases reads api/v1alpha1/testdata/invalid.yaml and invalid-groups.yaml.
func InvalidCases() ([]InvalidCase, error) {
	var cases []InvalidCase
	for _, f := range []string{"invalid.yaml", InvalidGroupsFile} {
		c, err := readInvalidCases(f)
		if err != nil {
			return nil, err
		}
		cases = append(cases, c...)
	}
	return cases, nil
}

// InvalidGroupsFile holds the invalid cases about device groups, which plan.Compile must refuse
// too, naming the same field (internal/manifest's TestGroupRulesAgreeWithCompile).
const InvalidGroupsFile = "invalid-groups.yaml"

// InvalidGroupCases reads api/v1alpha1/testdata/invalid-groups.yaml.
func InvalidGroupCases() ([]InvalidCase, error) { return readInvalidCases(InvalidGroupsFile) }

func readInvalidCases(name string) ([]InvalidCase, error) {
	data, err := os.ReadFile(filepath.Join(RepoRoot(), "api", "v1alpha1", "testdata", name))
	if err != nil {
		return nil, err
	}
	var cases []InvalidCase
	if err := yaml.UnmarshalStrict(data, &cases); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return cases, nil
}
