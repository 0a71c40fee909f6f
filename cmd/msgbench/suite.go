package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/localrun"
	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/results/objectives"
	"github.com/msgbench/msgbench/results/report"
	"github.com/msgbench/msgbench/results/store"
	"github.com/msgbench/msgbench/suite"
)

// runSuite runs a MessagingBenchmarkSuite on this machine: every point's repetitions, one run at
// a time in the suite's order, each run as `msgbench run` runs a benchmark, into
// <out>/<suite>/<run-id>/<point>/r<k>/; then suite.json (statistics, objectives, verdict) and a
// comparison report beside them. Everything that can be checked is checked before the first run.
func runSuite(cmd *cobra.Command, f runFlags) error {
	doc, err := manifest.ReadSuiteDoc(f.file, f.set...)
	if err != nil {
		return err
	}
	s := doc.Suite
	if cmd.Flags().Changed("repetitions") {
		if f.repetitions < 1 || f.repetitions > 100 {
			return fmt.Errorf("--repetitions %d: must be 1 to 1000, as spec.repetitions", f.repetitions)
		}
		s.Spec.Repetitions = int32(f.repetitions)
	}
	if f.name != "" {
		if msgs := validation.IsDNS1123Subdomain(f.name); len(msgs) > 0 {
			return fmt.Errorf("--name %q: %s", f.name, strings.Join(msgs, "; "))
		}
		s.Name = f.name
	}
	if s.Spec.Search != nil {
		return runSearch(cmd, f, doc)
	}
	points, err := suite.Expand(s, doc.Template)
	if err != nil {
		return fmt.Errorf("%s: %w", f.file, err)
	}
	if _, err := objectives.ParseAll(s.Spec.Objectives); err != nil {
		return fmt.Errorf("%s: %w", f.file, err)
	}
	errOut := cmd.ErrOrStderr()
	seed := int64(0)
	if s.Spec.Order == v1alpha1.OrderInterleaved {
		if s.Spec.Seed != nil {
			seed = *s.Spec.Seed
		} else {
			seed = rand.Int64N(1 << 53)
		}
	}
	schedule := suite.Schedule(len(points), int(s.Spec.Repetitions), s.Spec.Order, seed)

	ctx, stop := runContext(cmd.Context())
	defer stop()
	o := localrun.Options{NoEmbedded: f.noEmbedded, BrokerPort: f.brokerPort, ManifestDir: filepath.Dir(f.file),
		Logf: func(format string, args ...any) { fmt.Fprintf(errOut, "msgbench: "+format+"\n", args...) }}
	// Every point is checked before the first run starts: a study must not fail at point 9 of 12
	// for want of a broker the machine never had.
	for _, p := range points {
		mb, err := suite.Benchmark(s, doc.Template, p, 1)
		if err != nil {
			return err
		}
		if _, err := localrun.Check(&mb.Spec, o); err != nil {
			return fmt.Errorf("point %s: %w", p.Name, err)
		}
	}
	upload, out, closeMetrics, err := prepareSuite(ctx, f, errOut, &o, s)
	if err != nil {
		return err
	}
	defer closeMetrics()
	if s.Spec.Concurrency > 1 {
		fmt.Fprintf(errOut, "msgbench: spec.concurrency %d: locally the runs go one at a time (on one machine concurrent runs would only disturb each other)\n", s.Spec.Concurrency)
	}
	fmt.Fprintf(errOut, "msgbench: suite %s: %d points × %d repetitions = %d runs (%s), results in %s\n",
		s.Name, len(points), s.Spec.Repetitions, len(schedule), s.Spec.Order, out.dir)

	var w written // every file of the suite, its runs' too
	outcomes := map[suite.Run]suite.RunOutcome{}
	var rs []*results.Result
	started := time.Now()
	interrupted, unwritable := false, false
	for i, run := range schedule {
		p := points[run.Point]
		mb, err := suite.Benchmark(s, doc.Template, p, run.Repetition)
		if err != nil {
			return err
		}
		suite.Label(mb, s.Name, p.Name, run.Repetition)
		dir := filepath.Join(out.dir, p.Name, fmt.Sprintf("r%d", run.Repetition))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		label := fmt.Sprintf("[%d/%d %s r%d%s]", i+1, len(schedule), p.Name, run.Repetition, eta(started, i, len(schedule)))
		var outcome suite.RunOutcome
		if outcome, interrupted, unwritable, err = runOne(ctx, f, errOut, o, mb, label, dir, out, &w); err != nil {
			return err
		}
		if outcome.Result != nil {
			rs = append(rs, outcome.Result)
		}
		if interrupted {
			_ = os.Remove(dir)
			break
		}
		outcomes[run] = outcome
		status := outcome.Phase
		if outcome.Phase != string(v1alpha1.PhaseSucceeded) {
			status += ": " + outcome.Message
		}
		fmt.Fprintf(errOut, "msgbench: %s %s\n", label, status)
		if unwritable {
			fmt.Fprintf(errOut, "msgbench: %s: %v; no further run\n", label, w.failed[len(w.failed)-1])
			break
		}
		if outcome.Phase != string(v1alpha1.PhaseSucceeded) && s.Spec.FailurePolicy == v1alpha1.FailureStop {
			fmt.Fprintf(errOut, "msgbench: spec.failurePolicy is Stop: no further run\n")
			break
		}
	}

	d := suite.Summarize(s, points, schedule, outcomes, seed, "local", time.Now())
	return finishSuite(ctx, cmd, f, d, out, &w, len(rs) > 0, upload, interrupted)
}

// prepareSuite checks the object store, starts the live metrics (o's) and makes the suite's
// folder: what every local suite needs before its first run. closeMetrics stops the metrics.
func prepareSuite(ctx context.Context, f runFlags, errOut io.Writer, o *localrun.Options, s *v1alpha1.MessagingBenchmarkSuite) (upload store.Store, out *runDir, closeMetrics func(), err error) {
	if upload, err = checkObjectStore(ctx, s.Spec.Template.Results.ObjectStore); err != nil {
		return nil, nil, nil, err
	}
	metrics, err := serveMetrics(f, errOut, o)
	if err != nil {
		return nil, nil, nil, err
	}
	if out, err = prepareRunDir(f.out, s.Name, f.runID, f.force, time.Now()); err != nil {
		_ = metrics.Close()
		return nil, nil, nil, err
	}
	return upload, out, func() { _ = metrics.Close() }, nil
}

// finishSuite writes suite.json and the suite's report into out, uploads suite.json when the
// template names an object store, prints the summary, and returns what makes the exit status
// non-zero. Each step is tried whatever happened before.
func finishSuite(ctx context.Context, cmd *cobra.Command, f runFlags, d *suite.Document, out *runDir, w *written, measured bool, upload store.Store, interrupted bool) error {
	errOut := cmd.ErrOrStderr()
	s := &v1alpha1.MessagingBenchmarkSuite{Spec: d.Spec}
	s.Name = d.Name
	d.RunID, d.Interrupted = out.runID, interrupted
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	// suite.json and the report are tried whatever happened before; the summary is printed
	// whatever they did.
	w.file(filepath.Join(out.dir, "suite.json"), data)
	if measured {
		files, err := report.WriteFiles(out.dir, report.FromSuite(d), report.Options{})
		w.add(files[:min(len(files), 1)], err)
	}
	if w.has(filepath.Join(out.dir, "suite.json")) {
		out.markLatest()
	}
	var stored error
	if upload != nil {
		if u, err := uploadLocal(ctx, upload, s.Name, out, "suite.json", data); err != nil {
			where := "it is in " + out.dir
			if !w.has(filepath.Join(out.dir, "suite.json")) {
				where = "nor could it be written to " + out.dir
			}
			stored = fmt.Errorf("suite.json not stored in %s: %w (%s)", s.Spec.Template.Results.ObjectStore.URL, err, where)
		} else {
			fmt.Fprintf(errOut, "msgbench: uploaded to %s\n", u)
		}
	}
	if f.json {
		_, _ = cmd.OutOrStdout().Write(append(data, '\n'))
		if len(w.failed) > 0 {
			w.print(errOut)
		}
	} else {
		if d.Search != nil {
			writeSearchSummary(cmd.OutOrStdout(), d)
		} else {
			writeSuiteSummary(cmd.OutOrStdout(), d)
		}
		w.printSuite(cmd.OutOrStdout(), out.dir)
	}
	outcome := suiteOutcome(d, interrupted)
	if d.Search != nil {
		outcome = searchOutcome(d, interrupted)
	}
	return errors.Join(outcome, w.err(), stored)
}

// runOne runs one of a suite's runs into dir with a progress line under label: its outcome
// (Phase empty when interrupted), whether the run was interrupted, and whether a file of it could
// not be written. The run measured when its outcome has a result: it counts in suite.json and the
// summary whether or not its folder could keep it; a file not written stops the suite after this
// run (the disk would lose the next runs' too) and makes the exit status non-zero.
func runOne(ctx context.Context, f runFlags, errOut io.Writer, o localrun.Options, mb *v1alpha1.MessagingBenchmark, label, dir string, out *runDir, w *written) (outcome suite.RunOutcome, interrupted, unwritable bool, err error) {
	var clearLine func()
	if !f.q {
		var show localrun.ProgressFunc
		show, clearLine = progressPrinter(errOut)
		o.Progress = func(pr localrun.Progress) { pr.Phase = label + " " + pr.Phase; show(pr) }
	} else {
		fmt.Fprintf(errOut, "msgbench: %s\n", label)
	}
	started := time.Now()
	res, runErr := localrun.Run(ctx, mb, o)
	if clearLine != nil {
		clearLine()
	}
	outcome = suite.RunOutcome{Name: mb.Name, Location: dir}
	select { // Ctrl-C: the suite ends here, not with an error of its own
	case <-ctx.Done():
		interrupted = true
	default:
	}
	switch {
	case interrupted:
	case runErr != nil:
		outcome.Phase, outcome.Message = string(v1alpha1.PhaseFailed), runErr.Error()
		before := len(w.failed)
		writeFailedRun(w, mb, out.runID, started, runErr, dir) // its folder says why
		unwritable = len(w.failed) > before
	default:
		res.RunID = out.runID
		data, err := resultJSON(res)
		if err != nil {
			return outcome, false, false, err
		}
		before := len(w.failed)
		writeRunFiles(w, res, data, dir)
		unwritable = len(w.failed) > before
		outcome.Phase, outcome.Message, outcome.Result = res.Phase, res.Message, res
	}
	return outcome, interrupted, unwritable, nil
}

// suiteOutcome is the error that makes `msgbench run` exit non-zero for a suite: interrupted,
// a failed run, or objectives missed or not judged (for CI pipelines).
func suiteOutcome(d *suite.Document, interrupted bool) error {
	done := d.Runs.Succeeded + d.Runs.Failed
	switch {
	case interrupted:
		return fmt.Errorf("suite %s interrupted after %d of %d runs; everything it started was stopped, and suite.json keeps the finished runs", d.Name, done, d.Runs.Total)
	case d.Verdict == suite.VerdictMissed:
		return fmt.Errorf("suite %s missed its objectives (suite.json has each point's outcome)", d.Name)
	case d.Runs.Failed > 0:
		return fmt.Errorf("suite %s: %d of %d runs failed", d.Name, d.Runs.Failed, d.Runs.Total)
	case done < d.Runs.Total:
		return fmt.Errorf("suite %s stopped after %d of %d runs", d.Name, done, d.Runs.Total)
	case d.Verdict == suite.VerdictIncomplete:
		return fmt.Errorf("suite %s: a point has no successful run, so its objectives could not be judged", d.Name)
	}
	return nil
}

// eta estimates the time left from the runs done so far (" ETA 4m10s"; "" before the first).
func eta(started time.Time, done, total int) string {
	if done == 0 {
		return ""
	}
	per := time.Since(started) / time.Duration(done)
	return " ETA " + (per * time.Duration(total-done)).Round(time.Second).String()
}

// writeSuiteSummary prints one line per point: runs, the headline figures' mean ± 95 % CI over
// the repetitions, pooled percentiles, and the objectives.
func writeSuiteSummary(w io.Writer, d *suite.Document) {
	fmt.Fprintf(w, "suite %s: %d runs, %d succeeded, %d failed; verdict %s\n", d.Name, d.Runs.Total, d.Runs.Succeeded, d.Runs.Failed, d.Verdict)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  point\truns\treceived/s (mean ± 95% CI)\tp50\tp99 (pooled)\tobjectives")
	for _, p := range d.Points {
		ok, failed := 0, 0
		for _, r := range p.Runs {
			if r.Phase == string(v1alpha1.PhaseSucceeded) {
				ok++
			} else {
				failed++
			}
		}
		runs := fmt.Sprint(ok)
		if failed > 0 {
			runs += fmt.Sprintf(" (+%d failed)", failed)
		}
		rate, p50, p99, obj := "-", "-", "-", "-"
		if st := p.Stats; st != nil {
			if f, ok := st.Figures["throughput.receivedPerSecond"]; ok && f.N > 0 {
				rate = fmt.Sprintf("%.0f", f.Mean)
				if f.N > 1 {
					rate += fmt.Sprintf(" ± %.0f", f.CI95)
				}
				if f.Unstable {
					rate += " (unstable)"
				}
			}
			if v, ok := st.Value("latency.endToEnd.p50"); ok {
				p50 = fmt.Sprintf("%.3f ms", v/1000)
			}
			if v, ok := st.Value("latency.endToEnd.p99"); ok {
				p99 = fmt.Sprintf("%.3f ms", v/1000)
			}
		}
		if p.ObjectivesMet != nil {
			obj = "met"
			if !*p.ObjectivesMet {
				obj = "MISSED: " + results.MissedObjectives(p.Objectives)
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", p.Name, runs, rate, p50, p99, obj)
	}
	_ = tw.Flush()
	for _, c := range d.Caveats {
		fmt.Fprintf(w, "  caveat: %s\n", c)
	}
}
