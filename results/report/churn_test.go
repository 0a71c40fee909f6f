package report

import (
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/results"
)

// TestThroughputMarksTheStorm: a reconnect storm in the window is a dotted line on the
// throughput figure where the connections dropped (at, less the warm-up), named in the caption.
func TestThroughputMarksTheStorm(t *testing.T) {
	r := measured(20, 0, 1, 1, 1)
	r.Spec.Workload.Warmup.Duration = 2 * time.Second
	r.Timeline = []results.TimelinePoint{{T: 1, Sent: 20, Received: 20}, {T: 2, Sent: 20, Received: 0}, {T: 3, Sent: 20, Received: 40}}
	r.Churn = &results.Churn{Storm: &results.Storm{AtSeconds: 3.25, Dropped: 40, Reconnected: 40, RecoverySeconds: 0.5}}
	f := throughputFigure(r)
	if len(f.Marks) != 1 || f.Marks[0].Value != 1.25 || f.Marks[0].Label != "storm" {
		t.Fatalf("marks %+v", f.Marks)
	}
	if !strings.Contains(f.Caption, "dropped all 40 connections at 1.25 s; all 40 back 0.500 s later") {
		t.Errorf("caption %q does not name the storm", f.Caption)
	}
	r.Churn.Storm.AtSeconds = 1 // in the warm-up: nothing to mark on the window
	if f := throughputFigure(r); len(f.Marks) != 0 {
		t.Errorf("a storm in the warm-up marked at %+v", f.Marks)
	}
}
