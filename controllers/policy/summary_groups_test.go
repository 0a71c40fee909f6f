package policy

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/results"
)

func i64(v int64) *int64 { return &v }

// TestSummarizeGroups: a run with device groups has, in its status summary, each group's sent,
// received, lost and end-to-end p99, in the result's order; a group that subscribes to nothing
// has no lost, one whose subscribers received nothing with a header no p99.
func TestSummarizeGroups(t *testing.T) {
	r := &results.Result{Sent: 1000, Received: 2990, Lost: i64(10),
		Latency: results.Latencies{EndToEnd: &results.LatencySummary{P50Micros: 200, P99Micros: 900}},
		Groups: []results.GroupResult{
			{Name: "sensors", Publishers: 2000, Sent: 1000, Acked: 1000,
				Latency: results.Latencies{PublishAck: &results.LatencySummary{P99Micros: 300}}},
			{Name: "edge-backend", Subscribers: 2, Received: 990, Expected: 1000, Lost: i64(10),
				Latency: results.Latencies{EndToEnd: &results.LatencySummary{P99Micros: 850}}},
			{Name: "dashboards", Subscribers: 2, Received: 2000, Expected: 2000, Lost: i64(0),
				Latency: results.Latencies{EndToEnd: &results.LatencySummary{P99Micros: 1200}}},
			{Name: "tiny", Subscribers: 1, Received: 5, Expected: 5, Lost: i64(0)}, // payloads under 16 bytes
		}}
	s := Summarize(r)
	want := []v1alpha1.GroupSummary{
		{Name: "sensors", Sent: 1000},
		{Name: "edge-backend", Received: 990, Lost: i64(10), EndToEndP99Micros: i64(850)},
		{Name: "dashboards", Received: 2000, Lost: i64(0), EndToEndP99Micros: i64(1200)},
		{Name: "tiny", Received: 5, Lost: i64(0)},
	}
	if !reflect.DeepEqual(s.Groups, want) {
		t.Errorf("groups:\n%s\nwant\n%s", show(s.Groups), show(want))
	}
	// The run's own headline numbers are unchanged.
	if s.Sent != 1000 || s.Received != 2990 || s.Lost != 10 || *s.LatencyP99Micros != 900 {
		t.Errorf("summary %+v", s)
	}
	// The summary does not share the result's numbers.
	*r.Groups[1].Lost, r.Groups[1].Latency.EndToEnd.P99Micros = 99, 99
	if *s.Groups[1].Lost != 10 || *s.Groups[1].EndToEndP99Micros != 850 {
		t.Errorf("the summary changed with the result: %s", show(s.Groups[1:2]))
	}
	data, _ := json.Marshal(s.Groups[0])
	if got := string(data); got != `{"name":"sensors","sent":1000,"received":0}` {
		t.Errorf("a publishing group's summary: %s", got)
	}
}

// TestSummarizeWithoutGroups: a run without device groups has no groups in its summary, not
// even an empty list.
func TestSummarizeWithoutGroups(t *testing.T) {
	s := Summarize(&results.Result{Sent: 10, Received: 10, Lost: i64(0)})
	if s.Groups != nil {
		t.Errorf("groups %v", s.Groups)
	}
	if data, _ := json.Marshal(s); strings.Contains(string(data), "groups") {
		t.Errorf("summary JSON %s", data)
	}
}

// TestSummarizeKeepsAtMostTheSchemasGroups: the status schema lists at most 32 groups (as many
// as spec.groups may have); a result with more would make the status update fail.
func TestSummarizeKeepsAtMostTheSchemasGroups(t *testing.T) {
	r := &results.Result{}
	for i := range 40 {
		r.Groups = append(r.Groups, results.GroupResult{Name: fmt.Sprintf("g%d", i), Sent: int64(i)})
	}
	s := Summarize(r)
	if len(s.Groups) != 32 || s.Groups[0].Name != "g0" || s.Groups[31].Name != "g31" {
		t.Errorf("%d groups, first %s", len(s.Groups), s.Groups[0].Name)
	}
}

func show(gs []v1alpha1.GroupSummary) string {
	data, _ := json.Marshal(gs)
	return string(data)
}
