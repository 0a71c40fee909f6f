package control

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/msgbench/msgbench/loadgen"
	"github.com/msgbench/msgbench/results"
)

// DefaultConnectRetry bounds a worker's retries when its spec sets no timeout.
const DefaultConnectRetry = 15 * time.Minute

// Run runs a worker pod's benchmark under the operator's control — `msgbench loadgen --control`,
// and the envtest suite's kubelet, so the two cannot drift: it connects when the operator says
// (/connect), reports ready, starts at the agreed time, and records the outcome for /result.
//
// When its clients cannot reach the broker or gateway before it is ready (nothing has been
// measured yet), it starts over after a pause, for as long as the run allows (spec.timeout, which
// the operator enforces too), and says so in /status (Waiting), which the operator shows in the
// benchmark's status. Kubernetes programs a new Service on each node some time after the pods
// behind it became ready, and DNS can lag as long on a busy node: a real node's worker that gave
// up after 60 s of dial timeouts to its broker's Service failed a run that would have worked. Any
// other failure, or one after the clients were connected, ends it at once.
func (s *Server) Run(ctx context.Context, o loadgen.Options, logf func(string, ...any)) (*results.Result, error) {
	o.Connect, o.Start, o.Clocks = s.WaitConnect, s.WaitStart, s.Clocks
	if o.Monitor == nil {
		o.Monitor = &loadgen.Monitor{}
	}
	s.mu.Lock()
	s.monitor = o.Monitor // for /status's progress
	s.mu.Unlock()
	res, err := runRetrying(ctx, o, s.Ready, s.Waiting, logf)
	s.Finish(res, err)
	return res, err
}

func runRetrying(ctx context.Context, o loadgen.Options, ready func(), waiting func(string), logf func(string, ...any)) (*results.Result, error) {
	if err := o.Resolve(); err != nil {
		return nil, err
	}
	limit := o.Plan.Timing.Timeout
	if limit <= 0 {
		limit = DefaultConnectRetry
	}
	deadline := time.Now().Add(limit)
	also := o.Ready
	for pause := 500 * time.Millisecond; ; pause = min(2*pause, 4*time.Second) {
		var connected atomic.Bool
		o.Ready = func() {
			connected.Store(true)
			ready()
			if also != nil {
				also()
			}
		}
		res, err := loadgen.Run(ctx, o)
		if err == nil || connected.Load() || !Unreachable(err) || ctx.Err() != nil || time.Now().Add(pause).After(deadline) {
			return res, err
		}
		msg, _, _ := strings.Cut(err.Error(), "\n")
		logf("%s; connecting again in %s", msg, pause)
		waiting(fmt.Sprintf("cannot reach %s yet (%s); retrying until %s", o.Address, msg, deadline.UTC().Format("15:04:05")))
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Unreachable reports an error of a peer that cannot be reached (yet): connection refused, no
// route, a dial that timed out, a name not found; not one that answered wrongly.
func Unreachable(err error) bool {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) ||
		(errors.As(err, &dnsErr) && (dnsErr.IsNotFound || dnsErr.IsTemporary || dnsErr.IsTimeout)) ||
		(errors.As(err, &opErr) && opErr.Op == "dial" && opErr.Timeout())
}
