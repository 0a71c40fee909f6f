package results

import (
	"strings"
)

// mergeEnvironment is the environment of merged workers: the first's, with each description
// that differs between workers (CPU model, kernel, negotiated TLS …) listing every value seen,
// so a merge never hides that workers ran on different machines or handshakes.
func mergeEnvironment(parts []*Result) Environment {
	env := parts[0].Environment
	env.Discovery = nil
	for _, p := range parts {
		if p.Environment.Discovery != nil {
			if env.Discovery == nil {
				env.Discovery = &Discovery{}
			}
			env.Discovery.Merge(p.Environment.Discovery)
		}
	}
	for _, f := range []func(*Environment) *string{
		func(e *Environment) *string { return &e.CPUModel },
		func(e *Environment) *string { return &e.Kernel },
		func(e *Environment) *string { return &e.GoVersion },
		func(e *Environment) *string { return &e.MsgbenchVersion },
		func(e *Environment) *string { return &e.MsgbenchCommit },
		func(e *Environment) *string { return &e.TLSVersion },
		func(e *Environment) *string { return &e.TLSGroup },
		func(e *Environment) *string { return &e.TLSCipherSuite },
	} {
		var seen []string
		for _, p := range parts {
			if v := *f(&p.Environment); v != "" && !contains(seen, v) {
				seen = append(seen, v)
			}
		}
		*f(&env) = strings.Join(seen, " | ")
	}
	return env
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
