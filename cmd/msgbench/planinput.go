package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/plan"
)

// planInput is how a process that carries out part of a run (a load-generator worker, a
// gateway, a broker's usage sidecar) is told what to run: --plan, the compiled plan as the
// operator (its ConfigMap's plan.json) and `msgbench run` hand it to their processes, or -f, a
// manifest given by hand, compiled here as an admitted spec.
type planInput struct {
	file, plan string
	set        []string
	// standIn, when set, is the manifest compiled when neither flag is given (a gateway run by
	// hand needs only its mode), and what its errors are prefixed with.
	standIn, standInName string
}

func (in *planInput) flags(fl *pflag.FlagSet, what string) {
	fl.StringVarP(&in.file, "file", "f", "", "MessagingBenchmark manifest (YAML or JSON) "+what)
	fl.StringVar(&in.plan, "plan", "", "the run's compiled plan ("+plan.FileName+"), as the operator and `msgbench run` hand it to their processes; instead of -f")
	fl.StringArrayVar(&in.set, "set", nil, "with -f: override a spec field, e.g. --set workload.duration=5s (repeatable)")
}

// read is the plan the flags name.
func (in *planInput) read() (*plan.Plan, error) {
	switch {
	case in.plan != "" && in.file != "":
		return nil, fmt.Errorf("-f and --plan: give one (--plan is a compiled plan, -f a manifest)")
	case in.plan != "":
		if len(in.set) > 0 {
			return nil, fmt.Errorf("--set with --plan: the plan is compiled already; --set changes a manifest given with -f")
		}
		return plan.ReadFile(in.plan)
	case in.file != "":
		mb, err := manifest.ReadFile(in.file, in.set...)
		if err != nil {
			return nil, err
		}
		p, err := plan.CompileBenchmark(mb, plan.Admitted)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.file, err)
		}
		return p, nil
	case in.standIn != "":
		mb, err := manifest.Parse([]byte(in.standIn), in.set...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.standInName, err)
		}
		p, err := plan.CompileBenchmark(mb, plan.Admitted)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.standInName, err)
		}
		return p, nil
	}
	return nil, fmt.Errorf("no benchmark: give --plan (a compiled plan) or -f (a manifest)")
}
