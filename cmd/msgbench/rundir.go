package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// runDir is one local run's folder, <out>/<name>/<run-id>: earlier runs of the same benchmark
// are kept beside it, and <out>/<name>/latest points at the newest.
type runDir struct {
	dir, runID string
	created    bool
}

// prepareRunDir makes the run's folder before the run starts, so an unwritable --out fails at
// once rather than after the run. Without runID it is the start time (UTC, to the second; a
// suffix -2, -3 … when two runs start within one second); a given runID that exists is refused
// unless force.
func prepareRunDir(out, name, runID string, force bool, now time.Time) (*runDir, error) {
	if runID != "" {
		if runID == "latest" || runID == "." || runID == ".." || strings.ContainsAny(runID, `/\`) {
			return nil, fmt.Errorf("--run-id %q: want a plain folder name, not %q", runID, runID)
		}
	}
	parent := filepath.Join(out, name)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("--out %s: cannot create %s: %w", out, parent, err)
	}
	r := &runDir{runID: runID}
	if runID == "" {
		base := now.UTC().Format("20060102-150405")
		r.runID = base
		for i := 2; exists(filepath.Join(parent, r.runID)); i++ {
			r.runID = fmt.Sprintf("%s-%d", base, i)
		}
	}
	r.dir = filepath.Join(parent, r.runID)
	if exists(r.dir) {
		if !force {
			return nil, fmt.Errorf("--run-id %s: %s holds an earlier run; choose another --run-id, or --force to replace it", runID, r.dir)
		}
		if err := os.RemoveAll(r.dir); err != nil {
			return nil, fmt.Errorf("--force: %w", err)
		}
	}
	if err := os.Mkdir(r.dir, 0o755); err != nil {
		return nil, fmt.Errorf("--out %s: %w", out, err)
	}
	r.created = true
	if err := checkWritable(filepath.Join(r.dir, "result.json")); err != nil {
		r.discard()
		return nil, fmt.Errorf("--out %s: %s is not writable: %w", out, r.dir, err)
	}
	return r, nil
}

// discard removes the run's folder when the run left nothing in it.
func (r *runDir) discard() {
	if r.created {
		_ = os.Remove(r.dir) // only when empty
		_ = os.Remove(filepath.Dir(r.dir))
	}
}

// markLatest points <out>/<name>/latest at this run (a relative symbolic link, replaced
// atomically).
func (r *runDir) markLatest() {
	link := filepath.Join(filepath.Dir(r.dir), "latest")
	tmp := link + ".tmp"
	_ = os.Remove(tmp)
	if err := os.Symlink(r.runID, tmp); err == nil {
		if err := os.Rename(tmp, link); err != nil {
			_ = os.Remove(tmp)
		}
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, os.ErrNotExist)
}

// checkWritable makes sure a result file can be written at path: its folder is created and a
// probe file written and removed beside it.
func checkWritable(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	probe, err := os.CreateTemp(dir, ".write-check-")
	if err != nil {
		return err
	}
	_ = probe.Close()
	return os.Remove(probe.Name())
}
