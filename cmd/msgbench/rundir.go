package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/atomicfile"
	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/results/report"
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

// written records the files a command wrote and those it could not. A file that cannot be
// written (a full disk) does not stop the others being tried nor the summary being printed: the
// run's measurements are on the screen and in the object store even when its folder could not
// keep them, and the command ends non-zero naming each file lost (#31).
type written struct {
	files  []string
	failed []*os.PathError
}

// add records the outcome of writing files (those written) with err (the one that was not, if
// any: atomicfile's and report.WriteFiles' errors name it).
func (w *written) add(files []string, err error) {
	w.files = append(w.files, files...)
	if err == nil {
		return
	}
	var pe *os.PathError
	if !errors.As(err, &pe) {
		pe = &os.PathError{Op: "write", Path: "?", Err: err}
	}
	w.failed = append(w.failed, pe)
}

// file writes data to path atomically and records the outcome.
func (w *written) file(path string, data []byte) {
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		w.add(nil, err)
		return
	}
	w.add([]string{path}, nil)
}

// has reports whether path was written.
func (w *written) has(path string) bool { return slices.Contains(w.files, path) }

// print says which files were written, and each that could not be with its error, under a
// run's summary.
func (w *written) print(out io.Writer) { w.printIn(out, w.files) }

// printSuite is print for a suite: the files written in its folder (suite.json, report.html; its
// runs' are in their folders), and every file that could not be written, its runs' too.
func (w *written) printSuite(out io.Writer, dir string) {
	var top []string
	for _, f := range w.files {
		if filepath.Dir(f) == dir {
			top = append(top, f)
		}
	}
	w.printIn(out, top)
}

func (w *written) printIn(out io.Writer, shown []string) {
	files := "(none)"
	if len(shown) > 0 {
		files = strings.Join(shown, ", ")
	}
	fmt.Fprintf(out, "  files          %s\n", files)
	for _, pe := range w.failed {
		fmt.Fprintf(out, "  not written    %s: %v\n", pe.Path, pe.Err)
	}
}

// err is the error that makes the command exit non-zero when a file could not be written.
func (w *written) err() error {
	if len(w.failed) == 0 {
		return nil
	}
	var names []string
	for _, pe := range w.failed {
		names = append(names, pe.Path)
	}
	return fmt.Errorf("not written: %s: %w (the measurements are in the output above)", strings.Join(names, ", "), w.failed[0].Err)
}

// writeRunFiles writes a run's result.json and report (report.html and the figures' CSVs) into
// dir, each atomically, trying every file whatever happened to the one before. data is the
// result's JSON (resultJSON).
func writeRunFiles(w *written, res *results.Result, data []byte, dir string) {
	w.file(filepath.Join(dir, "result.json"), data)
	files, err := report.WriteFiles(dir, report.FromResults([]*results.Result{res}), report.Options{})
	if len(files) > 0 {
		// The summary names result.json and report.html, as it always has; the CSVs beside them
		// are counted in the folder.
		files = files[:1]
	}
	w.add(files, err)
}

// resultJSON is res as result.json holds it: indented, with a final newline.
func resultJSON(res *results.Result) ([]byte, error) {
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// failedResult is the result.json of a run that ended with err before it had a result (a
// broker that refused its clients, a link that could not start, Ctrl-C): Failed, with the reason,
// so that every run's folder says what became of it (docs/results.md).
func failedResult(mb *v1alpha1.MessagingBenchmark, runID string, start time.Time, err error) *results.Result {
	return &results.Result{APIVersion: results.APIVersion, Kind: results.Kind, Name: mb.Name, RunID: runID, Spec: &mb.Spec,
		Phase: string(v1alpha1.PhaseFailed), Message: err.Error(), StartTime: start.UTC(), EndTime: time.Now().UTC()}
}

// writeFailedRun writes a failed run's result.json into dir (nothing else: it measured nothing).
func writeFailedRun(w *written, mb *v1alpha1.MessagingBenchmark, runID string, start time.Time, err error, dir string) {
	data, jerr := resultJSON(failedResult(mb, runID, start, err))
	if jerr != nil {
		w.add(nil, jerr)
		return
	}
	w.file(filepath.Join(dir, "result.json"), data)
}
