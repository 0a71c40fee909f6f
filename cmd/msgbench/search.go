package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/localrun"
	"github.com/msgbench/msgbench/results/objectives"
	"github.com/msgbench/msgbench/suite"
)

// runSearch runs a suite's capacity search (spec.search) on this machine: one run at a time,
// each value decided by suite.Search.Next from the steps so far, into
// <out>/<suite>/<run-id>/s<step>/r<trial>/; then suite.json with the search's outcome, bracket
// and curve, and the report. Everything that can be checked is checked before the first run:
// the field, the objectives, and the template at min and at max.
func runSearch(cmd *cobra.Command, f runFlags, doc *manifest.SuiteDoc) error {
	s := doc.Suite
	if cmd.Flags().Changed("repetitions") {
		return errors.New("--repetitions: a search repeats a step with spec.search.trials in the file")
	}
	if err := suite.CheckSearch(s, doc.Template, manifest.FieldType); err != nil {
		return fmt.Errorf("%s: %w", f.file, err)
	}
	objs, err := objectives.ParseAll(s.Spec.Objectives)
	if err != nil {
		return fmt.Errorf("%s: %w", f.file, err)
	}
	x := suite.NewSearch(s.Spec.Search)
	errOut := cmd.ErrOrStderr()
	ctx, stop := runContext(cmd.Context())
	defer stop()
	o := localrun.Options{NoEmbedded: f.noEmbedded, BrokerPort: f.brokerPort,
		Logf: func(format string, args ...any) { fmt.Fprintf(errOut, "msgbench: "+format+"\n", args...) }}
	for _, v := range []int64{x.Min, x.Max} {
		mb, _, err := suite.SearchBenchmark(s, doc.Template, x, suite.Decision{Step: 1, Trial: 1, Value: v})
		if err != nil {
			return err
		}
		if _, err := localrun.Check(&mb.Spec, o); err != nil {
			return fmt.Errorf("spec.search at %d: %w", v, err)
		}
	}
	upload, out, closeMetrics, err := prepareSuite(ctx, f, errOut, &o, s)
	if err != nil {
		return err
	}
	defer closeMetrics()
	fmt.Fprintf(errOut, "msgbench: suite %s: searching %s from %d to %d (start %d, ×%d, %d %% precision, %d trial(s) per step, %s; at most %d runs), results in %s\n",
		s.Name, strings.Join(x.Fields, ", "), x.Min, x.Max, x.Start, x.Factor, x.Precision, x.Trials, s.Spec.Search.Pass, x.MaxRuns, out.dir)

	var w written
	var runs []suite.SearchRun
	outcomes := map[string]suite.RunOutcome{}
	measured, interrupted, unwritable := false, false, false
	started := time.Now()
	var d suite.Decision
	for {
		d = x.Next(x.Steps(runs, objs), time.Since(started))
		if d.Done {
			break
		}
		mb, _, err := suite.SearchBenchmark(s, doc.Template, x, d)
		if err != nil {
			return err
		}
		dir := filepath.Join(out.dir, fmt.Sprintf("s%d", d.Step), fmt.Sprintf("r%d", d.Trial))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		label := fmt.Sprintf("[run %d/≤%d s%d %s %s=%d t%d]", len(runs)+1, x.MaxRuns, d.Step, d.Kind, x.Fields[0], d.Value, d.Trial)
		outcome, stopped, full, err := runOne(ctx, f, errOut, o, mb, label, dir, out, &w)
		if err != nil {
			return err
		}
		interrupted, unwritable = stopped, full
		measured = measured || outcome.Result != nil
		if interrupted {
			_ = os.Remove(dir)
			_ = os.Remove(filepath.Dir(dir))
			break
		}
		outcomes[mb.Name] = outcome
		runs = append(runs, suite.SearchRun{Step: d.Step, Trial: d.Trial, Value: d.Value, Kind: d.Kind, Outcome: &outcome})
		trial := x.JudgeTrial(outcome, objs)
		status := "passed"
		if !trial.Passed {
			status = "failed: " + strings.Join(trial.Reasons, "; ")
		}
		fmt.Fprintf(errOut, "msgbench: %s %s\n", label, status)
		if unwritable {
			fmt.Fprintf(errOut, "msgbench: %s: %v; no further run\n", label, w.failed[len(w.failed)-1])
			break
		}
	}
	steps := x.Steps(runs, objs)
	if interrupted || unwritable {
		d = x.Next(steps, time.Since(started)) // the state it stopped in: Searching
	}
	sd := suite.SummarizeSearchSuite(s, x, steps, outcomes, d, "local", time.Now())
	return finishSuite(ctx, cmd, f, sd, out, &w, measured, upload, interrupted)
}

// searchOutcome makes `msgbench run` exit non-zero for a search that was interrupted, capped,
// or found no value in its range that meets the objectives; found, or met at max, is success.
func searchOutcome(d *suite.Document, interrupted bool) error {
	sr := d.Search
	switch {
	case interrupted:
		return fmt.Errorf("suite %s interrupted after %d runs; everything it started was stopped, and suite.json keeps the finished runs", d.Name, sr.Runs)
	case sr.Outcome == v1alpha1.SearchFound || sr.Outcome == v1alpha1.SearchAboveRange:
		return nil
	case sr.Outcome == v1alpha1.SearchSearching:
		return fmt.Errorf("suite %s stopped after %d runs, before the search ended", d.Name, sr.Runs)
	}
	return fmt.Errorf("suite %s: search %s: %s", d.Name, sr.Outcome, sr.Message)
}

// writeSearchSummary prints the outcome, then one line per step: its value, trials, the
// headline figures and, for a failed step, the first reason.
func writeSearchSummary(w io.Writer, d *suite.Document) {
	sr := d.Search
	fmt.Fprintf(w, "suite %s: search of %s, %d runs: %s\n", d.Name, strings.Join(sr.Fields, ", "), sr.Runs, sr.Outcome)
	fmt.Fprintf(w, "  %s\n", sr.Message)
	if sr.Knee != nil {
		fmt.Fprintf(w, "  knee of the p99 latency curve at %d\n", *sr.Knee)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  step\tkind\tvalue\ttrials\tresult\treceived/s\tp50\tp99\tlost\twhy not")
	for _, st := range sr.Steps {
		pass := 0
		why := ""
		for _, t := range st.Trials {
			if t.Passed {
				pass++
			} else if why == "" && len(t.Reasons) > 0 {
				why = t.Reasons[0]
			}
		}
		result := "undecided"
		if st.Passed != nil {
			result = map[bool]string{true: "pass", false: "FAIL"}[*st.Passed]
		}
		rate, p50, p99, lost := "-", "-", "-", "-"
		if c := st.Figures; c != nil {
			if c.ReceivedPerSecond != nil {
				rate = fmt.Sprintf("%.0f", *c.ReceivedPerSecond)
			}
			if c.LatencyP50Micros != nil {
				p50 = fmt.Sprintf("%.3f ms", *c.LatencyP50Micros/1000)
			}
			if c.LatencyP99Micros != nil {
				p99 = fmt.Sprintf("%.3f ms", *c.LatencyP99Micros/1000)
			}
			if c.LostPercent != nil {
				lost = fmt.Sprintf("%.2f %%", *c.LostPercent)
			}
		}
		if len(why) > 120 {
			why = why[:117] + "..."
		}
		fmt.Fprintf(tw, "  s%d\t%s\t%d\t%d/%d\t%s\t%s\t%s\t%s\t%s\t%s\n", st.Index, st.Kind, st.Value, pass, len(st.Trials), result, rate, p50, p99, lost, why)
	}
	_ = tw.Flush()
	for _, c := range d.Caveats {
		fmt.Fprintf(w, "  caveat: %s\n", c)
	}
}
