package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/msgbench/msgbench/internal/atomicfile"
	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/results/report"
)

type reportFlags struct {
	out, baseline, threshold string
	images, noTitles, holm   bool
	alpha                    float64
	figures                  []string
	floor                    time.Duration
}

func newReportCommand() *cobra.Command {
	var f reportFlags
	cmd := &cobra.Command{
		Use:   "report DIR|FILE… [--out DIR] [--images] [--baseline DIR|FILE… --threshold 10%]",
		Short: "Figures, tables and CSV of a run, several runs or a suite; with --baseline, a regression check for CI",
		Long: `Reads a suite's folder (suite.json and its runs), or result.json files and folders holding them
(searched recursively), and writes report.html — the figures, the points with their confidence
intervals, every latency percentile, the network, the environment, the caveats and the spec — and
each figure's CSV. For a suite the figures follow from its axes: the numeric axis it varies
(clients, round-trip time, payload size) is the horizontal, categories (protocol, QoS, TLS,
network) are the series, and the first figure is the one the study is about. --images writes
every figure as SVG, PNG and PDF as well (docs/reports.md).

--baseline compares with an earlier run or suite, point by point and figure by figure, and exits
with status 3 when a figure got worse by more than --threshold — significantly so by Welch's
t-test when both sides have two or more repetitions, by the threshold alone otherwise (the table
says which).`,
		Example: `  msgbench report runs/mqtt-qos1/latest
  msgbench report runs/dicomo2017-mqtt-mqttsn-http/latest --out figures --images
  msgbench report runs/nightly/latest --baseline runs/nightly/20261101-020000 --threshold 5%`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runReport(cmd, args, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.out, "out", "report", "folder to write report.html, the CSVs (and images) to")
	fl.BoolVar(&f.images, "images", false, "also write every figure as SVG, PNG and PDF")
	fl.BoolVar(&f.noTitles, "no-titles", false, "with --images: leave the titles out of the images, for a paper whose captions say them")
	fl.StringVar(&f.baseline, "baseline", "", "a run or suite folder (or result.json) to compare with; exit status 3 on a regression")
	fl.StringVar(&f.threshold, "threshold", "10%", "with --baseline: the change, in percent, beyond which a worse figure is a regression")
	fl.Float64Var(&f.alpha, "alpha", 0.05, "with --baseline: the significance level of Welch's t-test")
	fl.BoolVar(&f.holm, "holm", false, "with --baseline: Holm–Bonferroni correction over every tested figure and point (no false alarm across many points, fewer real ones found)")
	fl.DurationVar(&f.floor, "latency-floor", report.DefaultLatencyFloor, "with --baseline: a latency change smaller than this is never a regression (0 counts every change)")
	fl.StringSliceVar(&f.figures, "figures", nil, "with --baseline: the figures compared (default "+strings.Join(report.DefaultCompared, ",")+")")
	return cmd
}

// errRegression makes `msgbench report --baseline` exit with status 3.
type errRegression struct{ msg string }

func (e errRegression) Error() string { return e.msg }
func (errRegression) ExitCode() int   { return 3 }

func runReport(cmd *cobra.Command, args []string, f reportFlags) error {
	threshold, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f.threshold), "%")), 64)
	if err != nil || threshold < 0 || math.IsNaN(threshold) || math.IsInf(threshold, 0) {
		return fmt.Errorf("--threshold %q: a percentage such as 10%% or 2.5", f.threshold)
	}
	if f.floor < 0 {
		return fmt.Errorf("--latency-floor %s: a duration of 0 or more, such as 1ms", f.floor)
	}
	if f.alpha <= 0 || f.alpha >= 1 {
		return fmt.Errorf("--alpha %g: a probability between 0 and 1, such as 0.05", f.alpha)
	}
	d, err := loadDataset(args)
	if err != nil {
		return err
	}
	var cmp *report.Comparison
	if f.baseline != "" {
		base, err := loadDataset([]string{f.baseline})
		if err != nil {
			return fmt.Errorf("--baseline: %w", err)
		}
		if cmp, err = report.Compare(base, d, report.CompareOptions{Figures: f.figures, ThresholdPercent: threshold, Alpha: f.alpha, LatencyFloor: f.floor, Holm: f.holm}); err != nil {
			return fmt.Errorf("--figures: %w", err)
		}
		cmp.Baseline = f.baseline
	} else if len(f.figures) > 0 {
		return errors.New("--figures: only with --baseline")
	}
	written, err := report.WriteFiles(f.out, d, report.Options{Images: f.images, NoTitles: f.noTitles, Comparison: cmp})
	for _, w := range written {
		fmt.Fprintln(cmd.OutOrStdout(), w)
	}
	if err != nil {
		return err
	}
	if cmp == nil {
		return nil
	}
	writeComparison(cmd.OutOrStdout(), cmp)
	data, err := json.MarshalIndent(cmp, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(f.out, "comparison.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Fprintln(cmd.OutOrStdout(), filepath.Join(f.out, "comparison.json"))
	if n := cmp.Regressions(); n > 0 {
		return errRegression{fmt.Sprintf("%d regressions against %s beyond %g%% (report: %s)", n, f.baseline, threshold, filepath.Join(f.out, "report.html"))}
	}
	if len(cmp.Changes) == 0 {
		return fmt.Errorf("nothing to compare with %s: no point of the same name measured the same figures", f.baseline)
	}
	return nil
}

func writeComparison(w io.Writer, c *report.Comparison) {
	fmt.Fprintf(w, "\nagainst %s (regression: worse by more than %g%%, and p < %g where both sides repeat):\n", c.Baseline, c.ThresholdPercent, c.Alpha)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  POINT\tFIGURE\tBASELINE\tNOW\tCHANGE\tTEST")
	for _, ch := range c.Changes {
		verdict := ""
		if ch.Regression {
			verdict = "  REGRESSION"
		}
		change := fmt.Sprintf("%+.1f%%", ch.Percent)
		if ch.FromZero {
			change = "from 0"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s (n=%d)\t%s (n=%d)\t%s%s\t%s\n", ch.Point, ch.Figure, report.FormatValue(ch.Figure, ch.Base), ch.BaseN,
			report.FormatValue(ch.Figure, ch.Current), ch.CurN, change, verdict, ch.Test)
	}
	_ = tw.Flush()
	for _, u := range c.Unmatched {
		fmt.Fprintf(w, "  unmatched: %s\n", u)
	}
	for _, n := range c.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

// loadDataset reads what `msgbench report` is given: a suite's folder (suite.json beside its runs;
// a suite's name folder reads its latest run), or result files and folders holding them.
func loadDataset(args []string) (*report.Dataset, error) {
	if len(args) == 1 {
		if _, err := os.Stat(filepath.Join(args[0], "suite.json")); err == nil {
			return report.ReadSuite(args[0])
		}
		latest := filepath.Join(args[0], "latest")
		_, suiteErr := os.Stat(filepath.Join(latest, "suite.json"))
		_, runErr := os.Stat(filepath.Join(latest, "result.json"))
		if suiteErr == nil || runErr == nil {
			// A name folder reads its latest run; but a run beside it whose result cannot be read
			// (cut short by a full disk: it never became latest) is refused, not passed over for
			// the run before it.
			if err := checkRunFolders(args[0]); err != nil {
				return nil, err
			}
			if suiteErr == nil {
				return report.ReadSuite(latest)
			}
			args = []string{latest}
		}
	}
	var files []string
	for _, a := range args {
		fs, err := resultFiles(a)
		if err != nil {
			return nil, err
		}
		files = append(files, fs...)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no suite.json or result.json under %s", strings.Join(args, ", "))
	}
	var rs []*results.Result
	for _, f := range files {
		r, err := results.ReadFile(f)
		if err != nil {
			return nil, err
		}
		rs = append(rs, r)
	}
	sort.SliceStable(rs, func(a, b int) bool { return rs[a].Name < rs[b].Name })
	return report.FromResults(rs), nil
}

// checkRunFolders refuses a name folder (<out>/<name>) holding a run whose result.json or
// suite.json is not a whole JSON document, naming the file and the JSON error.
func checkRunFolders(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		for _, name := range []string{"suite.json", "result.json"} {
			f := filepath.Join(dir, e.Name(), name)
			data, err := os.ReadFile(f)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err == nil {
				var v json.RawMessage
				err = json.Unmarshal(data, &v)
			}
			if err != nil {
				return fmt.Errorf("%s: %w (the run in %s cannot be read; report a run's folder to read that run alone)", f, err, filepath.Dir(f))
			}
		}
	}
	return nil
}

// resultFiles is path itself when it is a file, or every result.json below it (a `latest` link
// is not followed: it repeats a run already found).
func resultFiles(path string) ([]string, error) {
	// A run's "latest" link: WalkDir does not follow a symbolic link it starts from.
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		path = resolved
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	var out []string
	err = filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "result.json" {
			out = append(out, p)
		}
		return err
	})
	return out, err
}
