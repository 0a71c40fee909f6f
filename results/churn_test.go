package results

import (
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Two workers' churn sections merge exactly: counts add, the reconnect and queued histograms
// merge sample for sample, the storm's times are the slowest worker's and its rate is derived
// once from the sums; one worker without an expectation makes the merged one unknown.
func TestChurnMergeIsExact(t *testing.T) {
	part := func(w int64, recovery float64, reconnects []int64) *Result {
		h := map[string]*hdrhistogram.Histogram{HistReconnect: NewHistogram(), HistQueuedEndToEnd: NewHistogram()}
		for _, v := range reconnects {
			RecordMicros(h[HistReconnect], v)
			RecordMicros(h[HistQueuedEndToEnd], 1000*v)
		}
		r := &Result{Name: "b", Phase: "Succeeded", Workers: []WorkerSummary{{Index: int(w)}},
			Churn: &Churn{Connects: 10 + w, ExpectedConnects: Int64(10 + w), Disconnects: 4, Wakes: 8, ExpectedWakes: 8, ExpectedMessages: 16, LateWakes: w,
				SubscriberWakes: 3, ExpectedSubscriberWakes: 3, CollectWakes: 1, QueuedDeliveries: int64(len(reconnects)),
				Storm: &Storm{AtSeconds: 2 + float64(w)/1000, Dropped: 6, Reconnected: 6, RecoverySeconds: recovery, FailedAttempts: w, Retries: w, InFlightAtDrop: 3, Resent: 3}}}
		if err := r.Finalize(h); err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := part(0, 0.5, []int64{100, 200, 300}), part(1, 1.5, []int64{400, 5000})
	if a.Churn.Storm.Reconnect == nil || a.Churn.Storm.Reconnect.Count != 3 || a.Churn.Storm.ReconnectsPerSecond != 12 {
		t.Fatalf("worker figures not derived: %+v", a.Churn.Storm)
	}
	m, err := Merge([]*Result{a, b})
	if err != nil {
		t.Fatal(err)
	}
	c := m.Churn
	if c.Connects != 21 || *c.ExpectedConnects != 21 || c.Disconnects != 8 || c.Wakes != 16 || c.ExpectedWakes != 16 || c.ExpectedMessages != 32 || c.LateWakes != 1 ||
		c.SubscriberWakes != 6 || c.ExpectedSubscriberWakes != 6 || c.CollectWakes != 2 || c.QueuedDeliveries != 5 {
		t.Errorf("counts not summed: %+v", *c)
	}
	s := c.Storm
	if s.Dropped != 12 || s.Reconnected != 12 || s.FailedAttempts != 1 || s.Retries != 1 || s.InFlightAtDrop != 6 || s.Resent != 6 ||
		s.AtSeconds != 2.001 || s.RecoverySeconds != 1.5 || s.ReconnectsPerSecond != 8 {
		t.Errorf("storm not merged: %+v", *s)
	}
	if s.Reconnect == nil || s.Reconnect.Count != 5 || s.Reconnect.MaxMicros < 4990 || c.QueuedEndToEnd == nil || c.QueuedEndToEnd.Count != 5 {
		t.Errorf("histograms not merged: reconnect %+v queued %+v", s.Reconnect, c.QueuedEndToEnd)
	}
	if m.Histograms[HistReconnect] == "" || m.Histograms[HistQueuedEndToEnd] == "" {
		t.Error("merged histograms not encoded")
	}
	b.Churn.ExpectedConnects = nil
	if m, _ := Merge([]*Result{a, b}); m.Churn.ExpectedConnects != nil {
		t.Error("expected connects known though a worker's was not")
	}
	if row := churnSummary(c); !strings.Contains(row, "connects 21 of 21") || !strings.Contains(row, "12 dropped, all back in 1.50 s") {
		t.Errorf("summary row %q", row)
	}
	if m, _ := Merge([]*Result{{Name: "b"}, {Name: "b"}}); m.Churn != nil {
		t.Error("a churn section without churn")
	}
}
