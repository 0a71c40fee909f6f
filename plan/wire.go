package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// The wire form of a plan is how the operator and `msgbench run` hand it to the processes that
// carry it out — the load generator's workers and the gateways, in pods (a ConfigMap's
// plan.json) or as local processes (a file): JSON of the Plan, keys as its Go field names,
// with Version first. A worker runs the plan it is given, not a spec it would compile again, so
// every process of a run works from one compilation; and a plan of another shape (a worker
// image of another msgbench) is refused by name instead of read wrong.

// FileName is the plan's name in the ConfigMap and in a local run's directory.
const FileName = "plan.json"

// Marshal is the plan's wire form.
func Marshal(p *Plan) ([]byte, error) {
	if p == nil || p.Version != Version {
		return nil, fmt.Errorf("plan: nothing compiled to marshal")
	}
	return json.MarshalIndent(p, "", "  ")
}

// Unmarshal reads a plan in its wire form, refusing another version's and fields it does not
// know (a newer msgbench's plan).
func Unmarshal(data []byte) (*Plan, error) {
	var head struct{ Version string }
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("plan: not a plan: %w", err)
	}
	if head.Version != Version {
		return nil, fmt.Errorf("plan: version %q; this msgbench reads %q (the operator, its workers and gateways must be one msgbench version)", head.Version, Version)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Plan
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	if len(p.Groups) == 0 || p.Workers < 1 || p.Source == nil {
		return nil, fmt.Errorf("plan: incomplete (%d groups, %d workers, source spec present: %t)", len(p.Groups), p.Workers, p.Source != nil)
	}
	return &p, nil
}

// ReadFile reads a plan file (Marshal's output).
func ReadFile(path string) (*Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, err := Unmarshal(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}
