// Package manifest reads MessagingBenchmark manifests without a Kubernetes API server, applying
// exactly what admission applies: the generated CRD's structural schema prunes, defaults and
// validates, and its CEL rules run through the API server's own libraries. `msgbench run`,
// `msgbench loadgen` and `msgbench render` therefore accept and refuse the same files, with the
// same messages, as `kubectl apply`. Unlike the API server, an unknown field is an error
// (a misspelt field silently ignored would change what is measured).
package manifest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/config/crd"
	"github.com/msgbench/msgbench/results/objectives"
)

type schema struct {
	structural *structuralschema.Structural
	validator  validation.SchemaValidator
	cel        *cel.Validator
}

var (
	schemasMu sync.Mutex
	schemas   = map[string]*schema{}
)

// crds are the embedded CRDs by kind.
var crds = map[string][]byte{"MessagingBenchmark": crd.MessagingBenchmark, "MessagingBenchmarkSuite": crd.MessagingBenchmarkSuite}

func crdSchema() (*schema, error) { return kindSchema("MessagingBenchmark") }

// kindSchema loads the embedded CRD of kind once.
func kindSchema(kind string) (*schema, error) {
	schemasMu.Lock()
	defer schemasMu.Unlock()
	if s, ok := schemas[kind]; ok {
		return s, nil
	}
	s, _, err := buildSchema(kind, true)
	if err != nil {
		return nil, err
	}
	schemas[kind] = s
	return s, nil
}

// buildSchema reads the embedded CRD of kind; local leaves out the Kubernetes-only rules, and
// dropped is how many it left out.
func buildSchema(kind string, local bool) (s *schema, dropped int, err error) {
	var c apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(crds[kind], &c); err != nil {
		return nil, 0, fmt.Errorf("embedded %s CRD: %w", kind, err)
	}
	var v1schema *apiextensionsv1.JSONSchemaProps
	for _, v := range c.Spec.Versions {
		if v.Name == v1alpha1.GroupVersion.Version && v.Schema != nil {
			v1schema = v.Schema.OpenAPIV3Schema
		}
	}
	if v1schema == nil {
		return nil, 0, fmt.Errorf("embedded %s CRD has no v1alpha1 schema", kind)
	}
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v1schema, internal, nil); err != nil {
		return nil, 0, err
	}
	if local {
		dropped = dropKubernetesOnlyRules(kind, internal)
	}
	st, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, 0, err
	}
	sv, _, err := validation.NewSchemaValidator(internal)
	if err != nil {
		return nil, 0, err
	}
	return &schema{structural: st, validator: sv, cel: cel.NewValidator(st, true, celconfig.PerCallLimit)}, dropped, nil
}

// ReadFile reads a manifest file; see Parse. A refusal names where each problem comes from: the
// file, or the --set override that caused it.
func ReadFile(path string, overrides ...string) (*v1alpha1.MessagingBenchmark, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	mb, err := Parse(data, overrides...)
	if err != nil {
		return nil, inFile(path, err)
	}
	return mb, nil
}

// inFile names the file a refusal (or another error) comes from.
func inFile(path string, err error) error {
	var pe *Error
	if errors.As(err, &pe) {
		pe.File = path
		return pe
	}
	return fmt.Errorf("%s: %w", path, err)
}

// Error is a refused manifest: each problem with where it comes from, so that a misspelt --set is
// blamed on the --set and not on the file.
type Error struct {
	// File is the manifest's path (ReadFile), empty for Parse.
	File     string
	Problems []Problem
}

// Problem is one reason a manifest was refused.
type Problem struct {
	// Override is the --set ("path=value") the problem comes from, empty when it is the file's.
	Override string
	// With lists the overrides under the field a rule failed on (a rule over several fields,
	// such as one on spec): the problem is the file's and theirs together.
	With    []string
	Message string
}

func (e *Error) Error() string {
	var groups []string
	var keys []string
	msgs := map[string][]string{}
	for _, p := range e.Problems {
		var key string
		switch {
		case p.Override != "":
			key = "--set " + p.Override
		case len(p.With) > 0:
			key = strings.TrimSpace(e.File + " with --set " + strings.Join(p.With, ", --set "))
		default:
			key = e.File
		}
		if _, seen := msgs[key]; !seen {
			if key == e.File { // the file's own problems first
				keys = append([]string{key}, keys...)
			} else {
				keys = append(keys, key)
			}
		}
		msgs[key] = append(msgs[key], p.Message)
	}
	for _, k := range keys {
		m := strings.Join(msgs[k], ", ")
		if k != "" {
			m = k + ": " + m
		}
		groups = append(groups, m)
	}
	return strings.Join(groups, "; ")
}

// blame finds where a problem at spec field path p (e.g. "spec.workload.duration") comes from:
// the last override that set p or a field under it (own), or, when p is an object some overrides
// wrote into, those overrides (with). unknownField says p was not in the schema, so an override
// that wrote under it created it.
func blame(p string, overrides []string, unknownField bool) (own string, with []string) {
	for _, o := range overrides {
		path, _, _ := strings.Cut(o, "=")
		op := "spec." + strings.TrimPrefix(strings.TrimSpace(path), "spec.")
		switch {
		case p == op || strings.HasPrefix(p, op+".") || strings.HasPrefix(p, op+"["):
			own = o
		case strings.HasPrefix(op, p+"."):
			if unknownField {
				own = o
			} else {
				with = append(with, o)
			}
		}
	}
	if own != "" {
		return own, nil
	}
	return "", with
}

// Parse reads one MessagingBenchmark from YAML or JSON, applies overrides ("path=value", the path
// relative to spec, e.g. "workload.duration=5s"; the value is read as YAML, so 5 is a number and
// "5" a string), then defaults and validates it like the API server would. A refusal is an
// *Error.
func Parse(data []byte, overrides ...string) (*v1alpha1.MessagingBenchmark, error) {
	obj, err := read(data, "MessagingBenchmark")
	if err != nil {
		return nil, err
	}
	return ParseObject(obj, overrides...)
}

// ParseObject is Parse of a manifest already read into a map (it is changed in place).
func ParseObject(obj map[string]any, overrides ...string) (*v1alpha1.MessagingBenchmark, error) {
	if err := setAll(obj, overrides, nil); err != nil {
		return nil, err
	}
	if err := admit(obj, "MessagingBenchmark", overrides); err != nil {
		return nil, err
	}
	var mb v1alpha1.MessagingBenchmark
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj, &mb, true); err != nil {
		return nil, err
	}
	// The schema checks an objective's shape; its figure, unit and device group only the
	// objectives parser knows. Refused here, a bad one stops the run before it starts rather than
	// after it measured.
	if _, err := objectives.ParseSpec(&mb.Spec); err != nil {
		return nil, &Error{Problems: []Problem{{Message: err.Error()}}}
	}
	return &mb, nil
}

// read reads a manifest of kind: one document (empty ones, as a trailing "---" makes, do not
// count), read strictly like the API server's strict field validation reads it (a key set twice
// is refused, not silently given its last value).
func read(data []byte, kind string) (map[string]any, error) {
	fileErr := func(err error) error { return &Error{Problems: []Problem{{Message: err.Error()}}} }
	docs, err := documents(data)
	if err != nil {
		return nil, fileErr(err)
	}
	if len(docs) == 0 {
		return nil, fileErr(errors.New("empty manifest"))
	}
	if len(docs) > 1 {
		return nil, fileErr(fmt.Errorf("document %d (line %d): one %s per file; this file has %d (msgbench would run only the first), put each in a file of its own",
			docs[1].n, docs[1].line, kind, len(docs)))
	}
	obj, ok := docs[0].value.(map[string]any)
	if !ok {
		return nil, fileErr(fmt.Errorf("line %d: not a manifest (a YAML object with apiVersion, kind, metadata and spec)", docs[0].line))
	}
	if av, _ := obj["apiVersion"].(string); av != v1alpha1.GroupVersion.String() {
		return nil, fileErr(fmt.Errorf("apiVersion: %q, want %s", av, v1alpha1.GroupVersion))
	}
	if k, _ := obj["kind"].(string); k != kind {
		return nil, fileErr(fmt.Errorf("kind: %q, want %s", k, kind))
	}
	return obj, nil
}

// document is one non-empty YAML document of a file.
type document struct {
	n, line int // its number among the file's non-empty documents (from 1) and its first line
	value   any
}

// documents splits a file into its YAML documents as kubectl does (a line "---", optionally
// followed by a comment, separates them) and reads each strictly; empty documents (nothing but
// blanks and comments) are left out. A problem names its line in the file.
func documents(data []byte) ([]document, error) {
	var out []document
	lines := strings.SplitAfter(string(data), "\n")
	start := 0 // the document being read's first line (0-based)
	flush := func(end int) error {
		var v any
		if err := unmarshalStrict([]byte(strings.Join(lines[start:end], "")), &v); err != nil {
			msg := shiftLines(err.Error(), start)
			if !strings.Contains(msg, "set twice") {
				msg = "not YAML: " + msg
			}
			return errors.New(msg)
		}
		if v == nil {
			return nil
		}
		first := start
		for first < end-1 {
			if t := strings.TrimSpace(lines[first]); t != "" && !strings.HasPrefix(t, "#") {
				break
			}
			first++
		}
		out = append(out, document{n: len(out) + 1, line: first + 1, value: v})
		return nil
	}
	for i, l := range lines {
		rest, ok := strings.CutPrefix(strings.TrimRight(l, "\r\n"), "---")
		if t := strings.TrimSpace(rest); !ok || t != "" && !strings.HasPrefix(t, "#") {
			continue
		}
		if err := flush(i); err != nil {
			return nil, err
		}
		start = i + 1
	}
	if err := flush(len(lines)); err != nil {
		return nil, err
	}
	return out, nil
}

var (
	lineRe      = regexp.MustCompile(`line (\d+)`)
	duplicateRe = regexp.MustCompile(`key (.*) already set in map`)
)

// shiftLines adds offset to the line numbers of a YAML error about one document, so that they
// are the file's, and says a duplicate key plainly.
func shiftLines(msg string, offset int) string {
	msg = strings.TrimPrefix(msg, "error converting YAML to JSON: ")
	msg = strings.ReplaceAll(msg, "yaml: unmarshal errors:\n  ", "")
	msg = strings.ReplaceAll(msg, "\n  ", "; ")
	msg = duplicateRe.ReplaceAllString(msg, "key $1 set twice (the API server refuses a duplicate key; keep the one you mean)")
	return lineRe.ReplaceAllStringFunc(msg, func(m string) string {
		k, _ := strconv.Atoi(strings.TrimPrefix(m, "line "))
		return "line " + strconv.Itoa(k+offset)
	})
}

// Kind is the kind a manifest declares ("" when it is not a msgbench manifest): its first
// document's (read refuses a file of several).
func Kind(data []byte) string {
	docs, err := documents(data)
	if err != nil || len(docs) == 0 {
		return ""
	}
	obj, _ := docs[0].value.(map[string]any)
	if av, _ := obj["apiVersion"].(string); av != v1alpha1.GroupVersion.String() {
		return ""
	}
	k, _ := obj["kind"].(string)
	return k
}

// setAll applies overrides under spec (under spec.template for a suite: prefix "template").
func setAll(obj map[string]any, overrides []string, prefix []string) error {
	for _, o := range overrides {
		if err := set(obj, o, prefix); err != nil {
			// Set's message starts "--set <path>: "; the problem's key names the override whole.
			msg := err.Error()
			if _, rest, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(msg, "--set ") {
				msg = rest
			}
			return &Error{Problems: []Problem{{Override: o, Message: msg}}}
		}
	}
	return nil
}

// admit prunes, defaults and validates obj like the API server does for kind; overrides are
// blamed for the problems under the fields they set.
func admit(obj map[string]any, kind string, overrides []string) error {
	s, err := kindSchema(kind)
	if err != nil {
		return err
	}
	if unknown := pruning.PruneWithOptions(obj, s.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}); len(unknown) > 0 {
		e := &Error{}
		for _, u := range unknown {
			own, _ := blame(u, overrides, true)
			e.Problems = append(e.Problems, Problem{Override: own, Message: "unknown field " + u})
		}
		return e
	}
	defaulting.Default(obj, s.structural)
	var errs field.ErrorList
	errs = append(errs, validation.ValidateCustomResource(nil, obj, s.validator)...)
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	if name == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "name"), "a benchmark needs a name (results go to <out>/<name>/)"))
	} else if msgs := validateName(name); len(msgs) > 0 {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), name, strings.Join(msgs, "; ")))
	}
	if len(errs) == 0 {
		celErrs, _ := s.cel.Validate(context.Background(), nil, s.structural, obj, nil, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...)
	}
	if len(errs) > 0 {
		e := &Error{}
		for _, fe := range errs {
			// The override names a group by its name (groups[backend]), the validators by its index.
			own, with := blame(itemsByName(fe.Field, obj), overrides, false)
			e.Problems = append(e.Problems, Problem{Override: own, With: with, Message: itemsByName(fe.Error(), obj)})
		}
		return e
	}
	return nil
}

// itemsByName names the items of the spec's lists keyed by name in msg by their names, as the
// rest of msgbench does: spec.groups[0].qos becomes spec.groups[sensors].qos (the schema's
// validators number them).
func itemsByName(msg string, obj map[string]any) string {
	spec, _ := obj["spec"].(map[string]any)
	for _, field := range []string{"groups", "topics"} {
		list, _ := spec[field].([]any)
		for i, item := range list {
			if m, ok := item.(map[string]any); ok {
				if name, ok := m["name"].(string); ok && name != "" {
					msg = strings.ReplaceAll(msg, fmt.Sprintf("spec.%s[%d]", field, i), fmt.Sprintf("spec.%s[%s]", field, name))
				}
			}
		}
	}
	return msg
}

// Set applies one "path=value" override to a manifest's spec.
func Set(obj map[string]any, override string) error { return set(obj, override, nil) }

func set(obj map[string]any, override string, prefix []string) error {
	path, raw, ok := strings.Cut(override, "=")
	path = strings.TrimPrefix(strings.TrimSpace(path), "spec.")
	if !ok || path == "" {
		return fmt.Errorf("--set %q: want path=value, e.g. workload.duration=5s", override)
	}
	if strings.TrimSpace(raw) == "" {
		// Set to nothing, the field would silently take its default.
		return fmt.Errorf("--set %s: no value: write one, '' for an empty string, or leave the --set out for the default", path)
	}
	parts, typ := mapKeyPath(path)
	var value any
	if at := yamlComment(raw); at >= 0 {
		// YAML reads # (at a value's start or after a blank) and the rest as a comment: a filter
		// of "#" would silently become null, "a #" would become "a". A string field takes the
		// text as written; anything else asks for quotes.
		if typ != "string" {
			return fmt.Errorf("--set %s: value %q: YAML reads %q as a comment; quote the value if the # is part of it (--set '%s=\"%s\"'), or leave the comment out",
				path, raw, strings.TrimSpace(raw[at:]), path, strings.TrimSpace(raw))
		}
		value = strings.TrimSpace(raw)
	} else if err := unmarshalStrict([]byte(raw), &value); err != nil {
		return fmt.Errorf("--set %s: value %q: %w", path, raw, err)
	}
	// Refused here, not by admission: a later --set under it would be blamed instead.
	if _, isMap := value.(map[string]any); typ == "object" && !isMap && value != nil {
		return fmt.Errorf("--set %s: spec.%s is an object: set its fields (--set %s.<field>=value) or give it as a YAML object (--set '%s={…}')",
			path, path, path, path)
	}
	// A string field keeps the text as written: --set network.lossPercent=2 means "2".
	if typ == "string" {
		switch value.(type) {
		case int64, float64, bool:
			value = strings.TrimSpace(raw)
		}
	}
	return SetValue(obj, append(append([]string{"spec"}, prefix...), parts...), value)
}

// yamlComment is where a YAML comment starts in an override's value, -1 when it has none: a #
// at the start or after a blank, outside quotes (a value starting with a quote is YAML's to read
// whole). devices/# has none; # and "a #b" have one.
func yamlComment(raw string) int {
	t := strings.TrimLeft(raw, " \t")
	if strings.HasPrefix(t, "'") || strings.HasPrefix(t, "\"") {
		return -1
	}
	for i, r := range raw {
		if r == '#' && (i == 0 || raw[i-1] == ' ' || raw[i-1] == '\t') {
			return i
		}
	}
	return -1
}

// mapKeyPath splits an override's path into fields and returns the schema type of what it sets.
// Below a map field (spec.broker.config) the rest of the path is one key, dots and all, as broker
// settings are named: broker.config.acceptor.tcpReceiveBufferSize sets the key
// "acceptor.tcpReceiveBufferSize" of spec.broker.config.
func mapKeyPath(path string) ([]string, string) {
	parts := strings.Split(path, ".")
	s, err := crdSchema()
	if err != nil {
		return parts, ""
	}
	cur := s.structural.Properties["spec"]
	for i, p := range parts {
		if len(cur.Properties) == 0 && cur.AdditionalProperties != nil && cur.AdditionalProperties.Structural != nil {
			return append(parts[:i:i], strings.Join(parts[i:], ".")), cur.AdditionalProperties.Structural.Type
		}
		field, _, keyed := listKey(p)
		next, ok := cur.Properties[field]
		if !ok {
			return parts, ""
		}
		if keyed {
			if next.Items == nil {
				return parts, ""
			}
			next = *next.Items
		}
		cur = next
	}
	return parts, cur.Type
}

// listKey splits a path segment naming an item of a list keyed by name — groups[sensors], the
// device group named sensors — into the list's field and the key.
func listKey(segment string) (field, key string, keyed bool) {
	f, rest, ok := strings.Cut(segment, "[")
	if !ok || !strings.HasSuffix(rest, "]") || len(rest) < 2 {
		return segment, "", false
	}
	return f, strings.TrimSuffix(rest, "]"), true
}

// item is the element named key of the list at cur[field] (a list-map keyed by name, as
// spec.groups and spec.topics are); an error naming the items there are when there is none.
func item(cur map[string]any, field, key, path string) (map[string]any, error) {
	var list []any
	if v, exists := cur[field]; exists && v != nil {
		l, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("--set %s: %s is not a list", path, field)
		}
		list = l
	}
	var names []string
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			if m["name"] == key {
				return m, nil
			}
			names = append(names, fmt.Sprint(m["name"]))
		}
	}
	// A misspelt name would otherwise add an item with one field, refused later without its name.
	if len(names) == 0 {
		return nil, fmt.Errorf("--set %s: spec.%s has no items; write the %s in the manifest", path, field, field)
	}
	return nil, fmt.Errorf("--set %s: spec.%s has no item named %q (it has %s)", path, field, key, strings.Join(names, ", "))
}

// SetValue sets the field at path (from the manifest's top: "spec", "workload", "rate") to
// value, creating the objects on the way.
func SetValue(obj map[string]any, parts []string, value any) error {
	cur := obj
	path := strings.Join(parts, ".")
	for i, p := range parts[:len(parts)-1] {
		if field, key, keyed := listKey(p); keyed {
			next, err := item(cur, field, key, strings.TrimPrefix(path, "spec."))
			if err != nil {
				return err
			}
			cur = next
			continue
		}
		next, isMap := cur[p].(map[string]any)
		if !isMap {
			if _, exists := cur[p]; exists {
				return fmt.Errorf("--set %s: %s is not an object", strings.TrimPrefix(path, "spec."), strings.Join(parts[:i+1], "."))
			}
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	cur[parts[len(parts)-1]] = value
	return nil
}

// FieldType is the schema type of a MessagingBenchmark's spec.<path> ("string", "integer", …;
// "" when there is no such field).
func FieldType(path string) string { return fieldType(path) }

// fieldType is the schema type of spec.<path> in the CRD ("" when unknown).
func fieldType(path string) string {
	s, err := crdSchema()
	if err != nil {
		return ""
	}
	cur := s.structural.Properties["spec"]
	for _, p := range strings.Split(path, ".") {
		field, _, keyed := listKey(p)
		next, ok := cur.Properties[field]
		if !ok {
			return ""
		}
		if keyed {
			if next.Items == nil {
				return ""
			}
			next = *next.Items
		}
		cur = next
	}
	return cur.Type
}

// unmarshalStrict reads YAML or JSON the way the API server does (whole numbers become int64,
// which the schema's integer fields and CEL rules need), refusing a key set twice in an object as
// its strict field validation does.
func unmarshalStrict(data []byte, v any) error {
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return err
	}
	return utiljson.Unmarshal(j, v)
}

// validateName applies the DNS subdomain rule of metadata.name.
func validateName(name string) []string {
	if len(name) > 253 {
		return []string{"must be no more than 253 characters"}
	}
	for i, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || (r == '-' || r == '.') && i > 0 && i < len(name)-1
		if !ok {
			return []string{"must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"}
		}
	}
	return nil
}

// KubernetesOnlyPrefix starts the message of every Kubernetes-only rule, by convention: it tells
// the user why `kubectl apply` refuses what `msgbench run` accepts. It does not decide which
// rules msgbench run leaves out: v1alpha1.KubernetesOnlyRules does (TestKubernetesOnlyRulesNameCRDRules
// holds the two in step).
const KubernetesOnlyPrefix = "on Kubernetes, "

// specRoots is where each kind's schema holds a MessagingBenchmark spec, whose rules
// v1alpha1.KubernetesOnlyRules name by their path below it.
var specRoots = map[string][]string{
	"MessagingBenchmark":      {"spec"},
	"MessagingBenchmarkSuite": {"spec", "template"},
}

// dropKubernetesOnlyRules removes v1alpha1.KubernetesOnlyRules from the schema of kind (p is its
// root), at every level, and returns how many it removed.
func dropKubernetesOnlyRules(kind string, p *apiextensions.JSONSchemaProps) int {
	return dropRules(p, nil, specRoots[kind])
}

// dropRules walks p, at path (the field names from the schema's root), dropping the rules
// v1alpha1.IsKubernetesOnly names below root.
func dropRules(p *apiextensions.JSONSchemaProps, path, root []string) int {
	if p == nil {
		return 0
	}
	n := 0
	if rel, ok := below(path, root); ok {
		kept := p.XValidations[:0]
		for _, r := range p.XValidations {
			if v1alpha1.IsKubernetesOnly(rel, r.Rule) {
				n++
				continue
			}
			kept = append(kept, r)
		}
		p.XValidations = kept
	}
	for k, c := range p.Properties {
		n += dropRules(&c, append(slices.Clip(path), k), root)
		p.Properties[k] = c
	}
	if p.Items != nil {
		n += dropRules(p.Items.Schema, append(slices.Clip(path), "[*]"), root)
		for i := range p.Items.JSONSchemas {
			n += dropRules(&p.Items.JSONSchemas[i], append(slices.Clip(path), "[*]"), root)
		}
	}
	if p.AdditionalProperties != nil {
		n += dropRules(p.AdditionalProperties.Schema, append(slices.Clip(path), "{*}"), root)
	}
	return n
}

// below is path relative to root, as v1alpha1.KubernetesOnlyRule.Path writes it, if path is root
// or under it.
func below(path, root []string) (string, bool) {
	if len(root) == 0 || len(path) < len(root) || !slices.Equal(path[:len(root)], root) {
		return "", false
	}
	return strings.Join(path[len(root):], "."), true
}
