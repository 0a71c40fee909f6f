package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/internal/metricserver"
	"github.com/msgbench/msgbench/localrun"
	"github.com/msgbench/msgbench/results/store"
)

type runFlags struct {
	file, out, name, runID string
	set                    []string
	json, noEmbedded, q    bool
	force                  bool
	brokerPort             int
	repetitions            int
	metrics                string
	metricsWait            time.Duration
}

func newRunCommand() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run -f FILE [--out DIR] [--set path=value …] [--name NAME] [--run-id ID] [--json]",
		Short: "Run a benchmark manifest on this machine: broker, gateway, emulated network and load generator",
		Long: `Runs a MessagingBenchmark locally, as the operator would on Kubernetes: it starts the broker
(Mosquitto when installed, otherwise an embedded broker named as such in the result), the
protocol gateway in-process, the user-space link emulator for spec.network, and the load
generator; prints a summary and writes DIR/<name>/<run-id>/result.json and report.html
(DIR/<name>/latest points at the newest run). Everything it can check — the manifest, the
output folder, the object store and its credentials — is checked before anything starts.
Everything it started is stopped at the end, on failure, on Ctrl-C and when the terminal
closes. The exit status is non-zero when the run failed, measured nothing, or its results
could not be stored.

A MessagingBenchmarkSuite runs the same way, one run at a time in the suite's order: every
point's repetitions, each into DIR/<suite>/<run-id>/<point>/r<k>/, then suite.json (statistics
per point, objectives, verdict) and a comparison report.html; --set applies to the template. It
exits non-zero when a run failed, an objective was missed or the suite was interrupted.`,
		Example: `  msgbench run -f config/samples/mqtt-qos1.yaml
  msgbench run -f config/samples/mqtt-qos1.yaml --set workload.duration=5s --set qos=2 --name mqtt-qos2-short
  msgbench run -f config/samples/studies/ipsj2022-mqtt-vs-mqtts.yaml --set workload.duration=5s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runLocal(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.file, "file", "f", "", "MessagingBenchmark or MessagingBenchmarkSuite manifest (YAML or JSON)")
	fl.StringVar(&f.out, "out", "runs", "folder for <name>/<run-id>/result.json and report.html")
	fl.StringVar(&f.name, "name", "", "name the benchmark (replaces metadata.name): results go to <out>/<name>/")
	fl.StringVar(&f.runID, "run-id", "", "name this run's folder under <out>/<name>/ (default: the UTC start time, e.g. 20261124-113103)")
	fl.BoolVar(&f.force, "force", false, "replace an earlier run's folder of the same --run-id")
	fl.StringArrayVar(&f.set, "set", nil, "override a spec field, e.g. --set workload.duration=5s (repeatable)")
	fl.BoolVar(&f.json, "json", false, "print the result JSON on stdout instead of the summary")
	fl.BoolVar(&f.noEmbedded, "no-embedded-broker", false, "fail when Mosquitto is not installed instead of using the embedded broker")
	fl.IntVar(&f.brokerPort, "broker-port", 0, "port of the local broker (0: a free port)")
	fl.BoolVarP(&f.q, "quiet", "q", false, "no progress display")
	fl.IntVar(&f.repetitions, "repetitions", 0, "a suite only: run every point this many times instead of spec.repetitions (e.g. 1 for a quick look)")
	fl.StringVar(&f.metrics, "metrics", "", "serve live Prometheus metrics on HOST:PORT/metrics while it runs (e.g. 127.0.0.1:9464; docs/metrics.md)")
	fl.DurationVar(&f.metricsWait, "metrics-wait", 30*time.Second, "with --metrics: after the run, wait at most this long for a scrape to read the final values (Ctrl-C skips)")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

// serveMetrics starts --metrics (nil without it) for the run o, before anything else starts.
func serveMetrics(f runFlags, errOut io.Writer, o *localrun.Options) (*metricserver.Server, error) {
	if f.metrics == "" {
		return nil, nil
	}
	srv, err := metricserver.Listen(f.metrics)
	if err != nil {
		return nil, fmt.Errorf("--metrics: %w", err)
	}
	o.Metrics = srv.Registry
	fmt.Fprintf(errOut, "msgbench: live metrics on http://%s/metrics\n", srv.Addr())
	return srv, nil
}

// finalScrape waits, once the result is written, until a scraper has read the final values.
func finalScrape(ctx context.Context, srv *metricserver.Server, wait time.Duration, errOut io.Writer) {
	if srv == nil || wait <= 0 || !srv.Scraped() {
		return
	}
	fmt.Fprintf(errOut, "msgbench: waiting up to %s for a scrape of the final metrics (Ctrl-C skips)\n", wait)
	if !srv.WaitScrape(ctx, wait) {
		fmt.Fprintf(errOut, "msgbench: the final metrics were not scraped (they are in the result)\n")
	}
}

func runLocal(cmd *cobra.Command, f runFlags) error {
	if data, err := os.ReadFile(f.file); err == nil && manifest.Kind(data) == "MessagingBenchmarkSuite" {
		return runSuite(cmd, f)
	}
	if cmd.Flags().Changed("repetitions") {
		return fmt.Errorf("--repetitions %d: only a MessagingBenchmarkSuite has repetitions; %s is a MessagingBenchmark", f.repetitions, f.file)
	}
	mb, err := manifest.ReadFile(f.file, f.set...)
	if err != nil {
		return err
	}
	if f.name != "" {
		if msgs := validation.IsDNS1123Subdomain(f.name); len(msgs) > 0 {
			return fmt.Errorf("--name %q: %s", f.name, strings.Join(msgs, "; "))
		}
		mb.Name = f.name
	}
	errOut := cmd.ErrOrStderr()

	// Everything that can be checked is checked before anything starts: a run must not be lost
	// at its end to an unwritable folder or an unreachable bucket. The checks start no process and
	// no temporary folder, so the guardian (runContext), which cleans up after a killed msgbench,
	// starts after them: a refused spec costs no guardian start (~1.3 s) and leaves nothing. Until
	// then a signal cancels checkCtx: the object store's check stops and the run does not start.
	checkCtx, stopChecks := signal.NotifyContext(cmd.Context(), runSignals...)
	defer stopChecks()
	o := localrun.Options{NoEmbedded: f.noEmbedded, BrokerPort: f.brokerPort, ManifestDir: filepath.Dir(f.file),
		Logf: func(format string, args ...any) { fmt.Fprintf(errOut, "msgbench: "+format+"\n", args...) }}
	compiled, err := localrun.Check(&mb.Spec, o)
	if err != nil {
		return err
	}
	metrics, err := serveMetrics(f, errOut, &o)
	if err != nil {
		return err
	}
	defer metrics.Close()
	upload, err := checkObjectStore(checkCtx, mb.Spec.Results.ObjectStore)
	if err != nil {
		return err
	}
	out, err := prepareRunDir(f.out, mb.Name, f.runID, f.force, time.Now())
	if err != nil {
		return err
	}
	kept := false
	defer func() {
		if !kept {
			out.discard()
		}
	}()
	// From here on processes, temporary folders and namespaces may start: the guardian first.
	// (Its deferred stop runs before the folder's discard and the metrics' close above, neither of
	// which it knows of; the run's own cleanup is done by then: localrun.Run returned.)
	ctx, stop := runContext(cmd.Context())
	defer stop()
	// A signal from now on cancels ctx; one before cancelled checkCtx (stopChecks cancels it too).
	interrupted := checkCtx.Err() != nil
	stopChecks()
	if interrupted {
		return errors.New("interrupted before the run started")
	}

	var clearLine func()
	if !f.q {
		o.Progress, clearLine = progressPrinter(errOut)
	}
	g := &compiled.Groups[0]
	fmt.Fprintf(errOut, "msgbench: running %s (%s, QoS %d) locally, results in %s\n", mb.Name, g.Protocol, g.QoS, out.dir)
	started := time.Now()
	res, err := localrun.Run(ctx, mb, o)
	if clearLine != nil {
		clearLine()
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("interrupted; everything it started was stopped: %w", err)
		}
		// The folder keeps the run: its result.json says it failed and why.
		var w written
		writeFailedRun(&w, mb, out.runID, started, err, out.dir)
		if kept = len(w.files) > 0; kept {
			out.markLatest()
			fmt.Fprintf(errOut, "msgbench: the run failed; %s says why\n", w.files[0])
		}
		return err
	}
	res.RunID = out.runID
	// The measurements are never lost to the end: every file is tried (each written whole or
	// not at all), the upload is tried from memory whatever the folder kept, and the summary is
	// printed; what could not be written makes the exit status non-zero afterwards.
	data, err := resultJSON(res)
	if err != nil {
		return err
	}
	var w written
	writeRunFiles(&w, res, data, out.dir)
	kept = len(w.files) > 0
	if w.has(filepath.Join(out.dir, "result.json")) {
		out.markLatest()
	}
	var stored error
	if upload != nil {
		if u, err := uploadLocal(ctx, upload, res.Name, out, "result.json", data); err != nil {
			where := "they are in " + out.dir
			if !w.has(filepath.Join(out.dir, "result.json")) {
				where = "nor could they be written to " + out.dir
			}
			stored = fmt.Errorf("results not stored in %s: %w (%s)", mb.Spec.Results.ObjectStore.URL, err, where)
		} else {
			fmt.Fprintf(errOut, "msgbench: uploaded to %s\n", u)
		}
	}
	failed := emitResult(cmd, res, "", f.json)
	if !f.json {
		w.print(cmd.OutOrStdout())
	} else if len(w.failed) > 0 {
		w.print(errOut)
	}
	finalScrape(ctx, metrics, f.metricsWait, errOut)
	return errors.Join(failed, w.err(), stored)
}

// checkObjectStore refuses an object store a local run must not or cannot use, before the run:
// a name that is not this machine's, missing or wrong credentials, a missing bucket or an
// unwritable folder. It returns the store to upload to (nil: none asked for).
func checkObjectStore(ctx context.Context, spec *v1alpha1.ObjectStoreSpec) (store.Store, error) {
	if spec == nil {
		return nil, nil
	}
	if err := store.LocalOnly(spec); err != nil {
		return nil, err
	}
	creds := store.Credentials{AccessKeyID: os.Getenv("AWS_ACCESS_KEY_ID"), SecretAccessKey: os.Getenv("AWS_SECRET_ACCESS_KEY")}
	if strings.HasPrefix(spec.URL, "s3://") && (creds.AccessKeyID == "") != (creds.SecretAccessKey == "") {
		return nil, errors.New("spec.results.objectStore: set both $AWS_ACCESS_KEY_ID and $AWS_SECRET_ACCESS_KEY (or neither, for a bucket that allows anonymous writes)")
	}
	s, err := store.New(spec, creds)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := s.Check(cctx); err != nil {
		return nil, fmt.Errorf("%w (checked before starting; credentials come from $AWS_ACCESS_KEY_ID and $AWS_SECRET_ACCESS_KEY)", err)
	}
	return s, nil
}

// uploadLocal uploads file (result.json, or a suite's suite.json) of a local run to the object
// store, under local/<name>/<run-id>/<file>. data is the file's content, from memory: the upload
// keeps the measurements even when the run's folder could not.
func uploadLocal(ctx context.Context, s store.Store, name string, out *runDir, file string, data []byte) (string, error) {
	key := fmt.Sprintf("local/%s/%s/%s", name, out.runID, file)
	// The run is over: an interrupt now should not lose the upload's error, so it gets its own
	// bounded context.
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := store.PutWithRetry(uctx, s, key, data, 4); err != nil {
		return "", err
	}
	return s.URL(key), nil
}

// progressPrinter shows progress as one updating line on a terminal and as a log line every
// five seconds otherwise.
func progressPrinter(w io.Writer) (localrun.ProgressFunc, func()) {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	var lastLog time.Time
	var lastLen int
	show := func(p localrun.Progress) {
		elapsed := p.Elapsed.Truncate(100 * time.Millisecond).String()
		if p.Total > 0 {
			elapsed += "/" + p.Total.String()
		}
		line := fmt.Sprintf("%-10s %s  sent %d  received %d  %.0f msg/s  errors %d", p.Phase, elapsed, p.Sent, p.Received, p.RecentPerSecond, p.Errors)
		if tty {
			pad := ""
			if n := lastLen - len(line); n > 0 {
				pad = strings.Repeat(" ", n)
			}
			fmt.Fprintf(w, "\r%s%s", line, pad)
			lastLen = len(line)
			return
		}
		if time.Since(lastLog) >= 5*time.Second {
			fmt.Fprintf(w, "msgbench: %s\n", line)
			lastLog = time.Now()
		}
	}
	clear := func() {
		if tty && lastLen > 0 {
			fmt.Fprintf(w, "\r%s\r", strings.Repeat(" ", lastLen))
		}
	}
	return show, clear
}
