package localrun

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/msgbench/msgbench/plan"
)

// credentialFiles are the files listing the groups' devices' credentials
// (spec.identity.credentials.file, relative to the manifest's folder), by group name.
func credentialFiles(p *plan.Plan, o Options) map[string]string {
	files := map[string]string{}
	for _, g := range p.Groups {
		if g.Identity == nil || g.Identity.CredentialsFile == "" {
			continue
		}
		f := g.Identity.CredentialsFile
		if !filepath.IsAbs(f) {
			f = filepath.Join(o.ManifestDir, f)
		}
		if abs, err := filepath.Abs(f); err == nil {
			f = abs
		}
		files[g.Name] = f
	}
	return files
}

// loadCredentials reads the groups' credentials files and checks that each lists every device
// of its group, before anything starts. Their content stays in memory (and in the files the
// worker processes read): never in the result, the log or the run's folder.
func loadCredentials(p *plan.Plan, o Options) (map[string]plan.Credentials, error) {
	files := credentialFiles(p, o)
	if len(files) == 0 {
		return nil, nil
	}
	creds := map[string]plan.Credentials{}
	for i := range p.Groups {
		g := &p.Groups[i]
		f, ok := files[g.Name]
		if !ok {
			continue
		}
		field := "spec.identity.credentials.file"
		if g.Fleet != nil {
			field = "group " + g.Name + "'s identity.credentials.file"
		}
		fh, err := os.Open(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w (a relative path is read from the manifest's folder)", field, err)
		}
		c, err := plan.ReadCredentials(fh, f)
		_ = fh.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		// The ids hold no {run} (plan.Compile refused it), so any run id checks them.
		if err := g.CheckCredentials(c, f, ""); err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		creds[g.Name] = c
	}
	return creds, nil
}
