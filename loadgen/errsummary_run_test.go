package loadgen_test

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/msgbench/msgbench/internal/wire"
	"github.com/msgbench/msgbench/loadgen"
	"github.com/msgbench/msgbench/loadgen/drivers"
)

// refusingDriver refuses the connection of the subscriber whose id ends in refuse; the others
// get sessions that do nothing.
type refusingDriver struct{ refuse string }

func (d refusingDriver) Connect(_ context.Context, c drivers.Client, _ drivers.Handler) (drivers.Session, error) {
	if strings.HasSuffix(c.ID, d.refuse) {
		return nil, errors.New("refused by the test")
	}
	return idleSession{make(chan struct{})}, nil
}

type idleSession struct{ done chan struct{} }

func (idleSession) Subscribe(context.Context) error { return nil }
func (idleSession) Publish([]byte, bool) error      { return nil }
func (idleSession) Flush() error                    { return nil }
func (idleSession) Drain(context.Context) error     { return nil }
func (idleSession) ConnectBytes() int64             { return 0 }
func (idleSession) Counters() wire.Counters         { return wire.Counters{} }
func (s idleSession) Done() <-chan struct{}         { return s.done }
func (idleSession) Err() error                      { return nil }
func (idleSession) Close() error                    { return nil }

func init() {
	drivers.Register("test-refuse-s2", func(drivers.Config) (drivers.Driver, error) { return refusingDriver{"-s2"}, nil })
}

// TestClientErrorNamesTheClientOnce: a subscriber that cannot connect is named once, by its own
// index ("subscriber 6: subscriber 6: connect …" named it twice, the second time by its topic's
// index).
func TestClientErrorNamesTheClientOnce(t *testing.T) {
	spec := baseSpec()
	spec.Protocol = "test-refuse-s2"
	spec.Workload.Publishers, spec.Workload.Subscribers, spec.Workload.Topics = 1, 3, 1 // subscriber 2 is on topic 0
	_, err := loadgen.Run(context.Background(), loadgen.Options{Name: "test", Spec: spec, Address: "broker:1883"})
	if want := "subscriber 2: connect to broker:1883: refused by the test"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

// TestKilledBrokerIsOneCause: a broker killed mid-run ends the run with one short message that
// starts with the cause and counts the clients it took, not a line per client and operation
// (78 lines, the cause last, before).
func TestKilledBrokerIsOneCause(t *testing.T) {
	t.Parallel() // its own broker
	b := startMosquitto(t, "")
	spec := baseSpec()
	spec.Workload.Publishers, spec.Workload.Subscribers, spec.Workload.Topics = 8, 8, 8
	spec.Workload.Rate = 400
	spec.Workload.Warmup.Duration = 0
	spec.Workload.Duration.Duration = 2 * time.Second
	ready := func() {
		go func() {
			time.Sleep(500 * time.Millisecond)
			_ = syscall.Kill(b.PID(), syscall.SIGKILL)
		}()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := loadgen.Run(ctx, loadgen.Options{Name: "test", Spec: spec, Address: b.Addr, Ready: ready, AckWait: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	msg := res.Message
	if res.Phase != "Failed" || !strings.HasPrefix(msg, "broker connection lost (") || !strings.Contains(msg, " of 16 clients (") {
		t.Errorf("phase %s, message %q; want a failure starting with the lost connection, counted over 16 clients", res.Phase, msg)
	}
	if strings.Contains(msg, "\n") || len(msg) > 700 || strings.Count(msg, "broker connection lost") > 2 {
		t.Errorf("message of %d characters, %d lines:\n%s", len(msg), strings.Count(msg, "\n")+1, msg)
	}
	t.Log(msg)
}
