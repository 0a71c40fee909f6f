package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/msgbench/msgbench/internal/mqtt"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/plan"
)

func TestSummarizeErrors(t *testing.T) {
	pub := func(i int, err error) error { return clientErr(drivers.Publisher, i, err) }
	sub := func(i int, err error) error { return clientErr(drivers.Subscriber, i, err) }
	eof := fmt.Errorf("broker closed the connection (%w)", io.EOF)
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	refused := &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1883}, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	closedWrite := &net.OpError{Op: "write", Net: "tcp", Err: net.ErrClosed}
	var brokerGone []error
	for i := range 8 { // what a broker killed mid-run left: each publisher's write, its session, its drain
		brokerGone = append(brokerGone, pub(i, closedWrite))
	}
	for i := range 8 {
		brokerGone = append(brokerGone, pub(i, eof), pub(i, fmt.Errorf("drain: %w", mqtt.ErrClosed)))
	}
	for i := range 8 {
		brokerGone = append(brokerGone, sub(i, eof))
	}
	for _, tc := range []struct {
		name    string
		errs    []error
		clients int
		want    string
	}{
		{"none", nil, 4, ""},
		{"nil errors", []error{nil, nil}, 4, ""},
		{"broker killed", brokerGone, 16,
			"broker connection lost (EOF) for 16 of 16 clients (publishers 0–7, subscribers 0–7)"},
		{"one client, its whole message", []error{sub(6, errors.New("subscribe msgbench-6: broker refused (SUBACK [128])"))}, 8,
			"subscriber 6: subscribe msgbench-6: broker refused (SUBACK [128])"},
		{"one client, a named cause", []error{pub(3, reset)}, 8,
			"broker connection lost (connection reset) for 1 of 8 clients (publisher 3)"},
		{"most common first", []error{
			pub(0, errors.New("refused: not authorized")),
			sub(1, fmt.Errorf("connect to x: %w", refused)), sub(2, fmt.Errorf("connect to x: %w", refused)), sub(4, refused),
		}, 8, "connect to 127.0.0.1:1883: connection refused for 3 of 8 clients (subscribers 1–2, 4); publisher 0: refused: not authorized"},
		{"unnamed cause shared: innermost message and an example", []error{
			pub(0, fmt.Errorf("MQTT mbx-p0: %w", context.DeadlineExceeded)), pub(1, fmt.Errorf("MQTT mbx-p1: %w", context.DeadlineExceeded)),
		}, 2, "context deadline exceeded for 2 of 2 clients (publishers 0–1), e.g. MQTT mbx-p0: context deadline exceeded"},
		{"not a client's", []error{context.Canceled, pub(1, eof), context.Canceled}, 0,
			"context canceled (2 times); broker connection lost (EOF) for 1 client (publisher 1)"},
		{"a write on the closed connection alone is still reported", []error{pub(2, closedWrite)}, 1,
			"publisher 2: write tcp: use of closed network connection"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := summarizeErrors(tc.errs, tc.clients); got != tc.want {
				t.Errorf("got\n  %s\nwant\n  %s", got, tc.want)
			}
		})
	}
}

// TestSummarizeErrorsIsBounded: ten thousand clients failing in as many different ways make
// a message of a few hundred characters, not ten thousand lines.
func TestSummarizeErrorsIsBounded(t *testing.T) {
	var errs []error
	for i := range 10000 {
		errs = append(errs, clientErr(drivers.Role(i%2), i, fmt.Errorf("cause %d: %s", i%50, strings.Repeat("x", 500))))
	}
	got := summarizeErrors(errs, 10000)
	if len(got) > (maxCauses+1)*(maxCauseChars+10) || strings.Count(got, "\n") > 0 {
		t.Errorf("message of %d characters, %d lines: %.200s…", len(got), strings.Count(got, "\n")+1, got)
	}
	if !strings.Contains(got, "and 9200 more failures of 46 other causes") {
		t.Errorf("the causes left out are not counted: …%s", got[max(0, len(got)-120):])
	}
	if r := indexRanges([]int{9, 1, 2, 3, 5, 7, 11, 13, 15, 17}); r != "1–3, 5, 7, 9, 11, 13, …" {
		t.Errorf("indexRanges: %s", r)
	}
}

// In a run with device groups, two groups' publisher 0 are two clients, each named with its
// group: the summary once merged them into one "publisher 0" and named no group.
func TestSummarizeNamesTheGroup(t *testing.T) {
	sensors := &groupRun{g: &plan.Group{Name: "sensors", Fleet: &plan.Fleet{}}}
	meters := &groupRun{g: &plan.Group{Name: "meters", Fleet: &plan.Fleet{}}}
	backend := &groupRun{g: &plan.Group{Name: "backend", Fleet: &plan.Fleet{}}}
	lost := fmt.Errorf("read: %w", io.EOF)
	got := summarizeErrors([]error{
		sensors.clientErr(drivers.Publisher, 0, lost),
		meters.clientErr(drivers.Publisher, 0, lost),
		meters.clientErr(drivers.Publisher, 1, lost),
		backend.clientErr(drivers.Subscriber, 0, lost),
		backend.clientErr(drivers.Subscriber, 1, errors.New("subscribe: timed out")),
	}, 9)
	want := "broker connection lost (EOF) for 4 of 9 clients (publisher 0 of group sensors, publishers 0–1 of group meters, subscriber 0 of group backend); " +
		"subscriber 1 of group backend: subscribe: timed out"
	if got != want {
		t.Errorf("summary\n got %q\nwant %q", got, want)
	}
}
