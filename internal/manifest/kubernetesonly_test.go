package manifest

import (
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// crdRule is one CEL rule of a generated CRD, and where it is written.
type crdRule struct {
	path    []string // field names from the schema's root ("[*]" items, "{*}" map values)
	rule    string
	message string // message, or messageExpression
}

// crdRules are every CEL rule of kind's generated CRD, read as the API server reads them.
func crdRules(t *testing.T, kind string) []crdRule {
	t.Helper()
	var c apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(crds[kind], &c); err != nil {
		t.Fatal(err)
	}
	var out []crdRule
	var walk func(p *apiextensionsv1.JSONSchemaProps, path []string)
	walk = func(p *apiextensionsv1.JSONSchemaProps, path []string) {
		if p == nil {
			return
		}
		for _, r := range p.XValidations {
			msg := r.Message
			if msg == "" {
				msg = r.MessageExpression
			}
			out = append(out, crdRule{path: path, rule: r.Rule, message: msg})
		}
		for k, c := range p.Properties {
			walk(&c, append(slices.Clip(path), k))
		}
		if p.Items != nil {
			walk(p.Items.Schema, append(slices.Clip(path), "[*]"))
			for i := range p.Items.JSONSchemas {
				walk(&p.Items.JSONSchemas[i], append(slices.Clip(path), "[*]"))
			}
		}
		if p.AdditionalProperties != nil {
			walk(p.AdditionalProperties.Schema, append(slices.Clip(path), "{*}"))
		}
	}
	for _, v := range c.Spec.Versions {
		if v.Name == v1alpha1.GroupVersion.Version {
			walk(v.Schema.OpenAPIV3Schema, nil)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no CEL rules read", kind)
	}
	return out
}

// TestKubernetesOnlyRulesNameCRDRules holds v1alpha1.KubernetesOnlyRules, the table msgbench run
// consults to leave the Kubernetes-only rules out, and the generated CRDs in step, both ways:
// every entry names exactly one rule of each kind (MessagingBenchmark's spec, the suite's
// template), every rule worded as Kubernetes-only (its message starts KubernetesOnlyPrefix) is an
// entry and every entry is so worded, and the local schema leaves out exactly the entries.
func TestKubernetesOnlyRulesNameCRDRules(t *testing.T) {
	if len(v1alpha1.KubernetesOnlyRules) == 0 {
		t.Fatal("no Kubernetes-only rules")
	}
	for kind, root := range specRoots {
		rules := crdRules(t, kind)
		for _, e := range v1alpha1.KubernetesOnlyRules {
			var matched []crdRule
			for _, r := range rules {
				if rel, ok := below(r.path, root); ok && rel == e.Path && r.rule == e.Rule {
					matched = append(matched, r)
				}
			}
			if len(matched) != 1 {
				t.Errorf("%s: the Kubernetes-only entry at %q, rule %q, names %d rules of the CRD, want 1 (make manifests after changing a marker, and keep the entry's rule text exactly the marker's)",
					kind, e.Path, e.Rule, len(matched))
				continue
			}
			if !strings.HasPrefix(matched[0].message, KubernetesOnlyPrefix) {
				t.Errorf("%s: the Kubernetes-only rule at %q has message %q; start it %q, so that a user reads why msgbench run accepts it",
					kind, e.Path, matched[0].message, KubernetesOnlyPrefix)
			}
		}
		for _, r := range rules {
			if !strings.HasPrefix(strings.TrimLeft(r.message, "'\""), KubernetesOnlyPrefix) {
				continue
			}
			if rel, ok := below(r.path, root); !ok || !v1alpha1.IsKubernetesOnly(rel, r.rule) {
				t.Errorf("%s: the rule at %s, %q, is worded as Kubernetes-only (%q) but is not in v1alpha1.KubernetesOnlyRules, so msgbench run would apply it",
					kind, strings.Join(r.path, "."), r.rule, r.message)
			}
		}
		local, dropped, err := buildSchema(kind, true)
		if err != nil {
			t.Fatal(err)
		}
		if dropped != len(v1alpha1.KubernetesOnlyRules) || local == nil {
			t.Errorf("%s: the local schema leaves out %d rules, want the %d of v1alpha1.KubernetesOnlyRules", kind, dropped, len(v1alpha1.KubernetesOnlyRules))
		}
	}
}
