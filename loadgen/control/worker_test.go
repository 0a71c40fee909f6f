package control

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/loadgen"
	_ "github.com/msgbench/msgbench/loadgen/drivers/mqtt"
)

// TestWorkerWaitsForTheBroker: a worker pod whose broker Service does not route yet (connection
// refused, as seen on a real node right after the broker became ready) connects again until it
// does, instead of failing the run.
func TestWorkerWaitsForTheBroker(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	mb, err := manifest.ReadFile("../../config/samples/mqtt-qos1.yaml", "workload.duration=1s", "workload.warmup=100ms")
	if err != nil {
		t.Fatal(err)
	}
	var b *mosquitto.Process
	var bErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(1500 * time.Millisecond)
		b, bErr = mosquitto.Start(context.Background(), mosquitto.Options{Host: "127.0.0.1", Port: port})
	}()
	defer func() {
		wg.Wait()
		if b != nil {
			_ = b.Stop()
		}
	}()
	var logs []string
	ready := make(chan struct{})
	o := loadgen.Options{Name: mb.Name, Spec: &mb.Spec, Address: fmt.Sprintf("127.0.0.1:%d", port), RunID: "retry",
		Start: func(context.Context) (time.Time, error) { return time.Now(), nil }}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var waited []string
	res, err := runRetrying(ctx, o, func() { close(ready) }, func(m string) { waited = append(waited, m) }, func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) })
	if bErr != nil {
		t.Fatal(bErr)
	}
	if err != nil || res.Phase != "Succeeded" {
		t.Fatalf("worker: %v (logs %q)", err, logs)
	}
	select {
	case <-ready:
	default:
		t.Error("ready was not called")
	}
	if len(logs) == 0 || !strings.Contains(logs[0], "connection refused") || !strings.Contains(logs[0], "connecting again") {
		t.Errorf("logs %q: want the refused connection and the retry", logs)
	}
	if len(waited) == 0 || !strings.Contains(waited[0], "cannot reach 127.0.0.1:") || !strings.Contains(waited[0], "retrying until") {
		t.Errorf("waiting reports %q: want the address and how long it keeps trying", waited)
	}
}

func TestUnreachable(t *testing.T) {
	_, refused := net.Dial("tcp", "127.0.0.1:1")
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{refused, true},
		{fmt.Errorf("subscriber 0: %w", errors.Join(errors.New("other"), refused)), true},
		{&net.DNSError{Err: "no such host", Name: "x.svc", IsNotFound: true}, true},
		{errors.New("CONNACK: not authorized"), false},
		{context.Canceled, false},
	} {
		if got := Unreachable(tc.err); got != tc.want {
			t.Errorf("Unreachable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
