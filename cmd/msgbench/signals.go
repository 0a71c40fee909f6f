package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/msgbench/msgbench/internal/guardian"
)

// `msgbench __guardian` is the guardian of a run (internal/guardian). It is recognised here,
// before the command line is parsed, so that it has no flags, no help entry and nothing to start
// but itself.
func init() {
	if len(os.Args) == 2 && os.Args[1] == guardian.Arg {
		os.Exit(guardian.Main())
	}
}

// runSignals are the signals that end `msgbench run` the way Ctrl-C does: everything it started
// is stopped, and it exits non-zero saying it was interrupted. SIGHUP is what closing the
// terminal sends.
var runSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// runContext is the context of `msgbench run`, cancelled by runSignals, and the function that
// ends it (call it once the run has cleaned up). It also:
//
//   - keeps a closed stdout or stderr (`msgbench run … | head -1`) from killing msgbench in the
//     middle of the run: Go ends a program writing to a broken pipe on fd 1 or 2 with SIGPIPE
//     unless SIGPIPE is notified. Notified, the write only fails; the run goes on and stops
//     everything it started as usual. (SIGPIPE cannot mean "stop": a broker closing a socket
//     raises it too.) It stays notified until msgbench exits, for its last error message.
//   - starts the guardian, which kills the run's processes and removes its folders if msgbench
//     dies without doing so (SIGKILL). Without one msgbench still runs, and says so.
func runContext(parent context.Context) (context.Context, context.CancelFunc) {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stopSignals := signal.NotifyContext(parent, runSignals...)
	g, err := guardian.Start(os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "msgbench: %v; if msgbench is killed (SIGKILL), its temporary folders stay behind\n", err)
	}
	return ctx, func() {
		if g != nil {
			if err := g.Close(10 * time.Second); err != nil {
				fmt.Fprintf(os.Stderr, "msgbench: %v\n", err)
			}
		}
		// Until here a second Ctrl-C is caught and ignored: the cleanup is not cut short.
		stopSignals()
	}
}
