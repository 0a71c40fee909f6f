package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/localrun"
	"github.com/msgbench/msgbench/results/store"
)

type runFlags struct {
	file, out           string
	set                 []string
	json, noEmbedded, q bool
	brokerPort          int
}

func newRunCommand() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run -f FILE [--out DIR] [--set path=value …] [--json]",
		Short: "Run a benchmark manifest on this machine: broker, gateway, emulated network and load generator",
		Long: `Runs a MessagingBenchmark locally, as the operator would on Kubernetes: it starts the broker
(Mosquitto when installed, otherwise an embedded broker named as such in the result), the
protocol gateway in-process, the user-space link emulator for spec.network, and the load
generator; prints a summary and writes DIR/<name>/result.json and DIR/<name>/report.html.
Everything it started is stopped at the end, on failure and on Ctrl-C.`,
		Example: `  msgbench run -f config/samples/mqtt-qos1.yaml
  msgbench run -f config/samples/mqtt-qos1.yaml --set workload.duration=5s --set qos=2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runLocal(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.file, "file", "f", "", "MessagingBenchmark manifest (YAML or JSON)")
	fl.StringVar(&f.out, "out", "results", "folder for <name>/result.json and <name>/report.html")
	fl.StringArrayVar(&f.set, "set", nil, "override a spec field, e.g. --set workload.duration=5s (repeatable)")
	fl.BoolVar(&f.json, "json", false, "print the result JSON on stdout instead of the summary")
	fl.BoolVar(&f.noEmbedded, "no-embedded-broker", false, "fail when Mosquitto is not installed instead of using the embedded broker")
	fl.IntVar(&f.brokerPort, "broker-port", 0, "port of the local broker (0: a free port)")
	fl.BoolVarP(&f.q, "quiet", "q", false, "no progress display")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

func runLocal(cmd *cobra.Command, f runFlags) error {
	mb, err := manifest.ReadFile(f.file, f.set...)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errOut := cmd.ErrOrStderr()
	o := localrun.Options{OutDir: f.out, NoEmbedded: f.noEmbedded, BrokerPort: f.brokerPort,
		Logf: func(format string, args ...any) { fmt.Fprintf(errOut, "msgbench: "+format+"\n", args...) }}
	var clearLine func()
	if !f.q {
		o.Progress, clearLine = progressPrinter(errOut)
	}
	fmt.Fprintf(errOut, "msgbench: running %s (%s, QoS %d) locally\n", mb.Name, mb.Spec.Protocol, mb.Spec.QoS)
	res, err := localrun.Run(ctx, mb, o)
	if clearLine != nil {
		clearLine()
	}
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted; everything it started was stopped: %w", err)
		}
		return err
	}
	if os := mb.Spec.Results.ObjectStore; os != nil {
		if u, err := uploadLocal(cmd, res.Name, f.out); err != nil {
			fmt.Fprintf(errOut, "msgbench: upload to %s failed: %v (the result is in %s)\n", os.URL, err, filepath.Join(f.out, res.Name))
		} else {
			fmt.Fprintf(errOut, "msgbench: uploaded to %s\n", u)
		}
	}
	dir := filepath.Join(f.out, res.Name)
	if err := emitResult(cmd, res, "", f.json); err != nil {
		return err
	}
	if !f.json {
		fmt.Fprintf(cmd.OutOrStdout(), "  files          %s, %s\n", filepath.Join(dir, "result.json"), filepath.Join(dir, "report.html"))
	}
	return nil
}

// uploadLocal uploads a local run's result.json where spec.results.objectStore says, with the
// credentials from $AWS_ACCESS_KEY_ID and $AWS_SECRET_ACCESS_KEY.
func uploadLocal(cmd *cobra.Command, name, out string) (string, error) {
	mb, err := manifest.ReadFile(cmd.Flag("file").Value.String())
	if err != nil {
		return "", err
	}
	s, err := store.New(mb.Spec.Results.ObjectStore, store.Credentials{AccessKeyID: os.Getenv("AWS_ACCESS_KEY_ID"), SecretAccessKey: os.Getenv("AWS_SECRET_ACCESS_KEY")})
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(filepath.Join(out, name, "result.json"))
	if err != nil {
		return "", err
	}
	key := fmt.Sprintf("local/%s/%s/result.json", name, time.Now().UTC().Format("20060102T150405Z"))
	if err := store.PutWithRetry(cmd.Context(), s, key, data, 4); err != nil {
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
