package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/suite"
)

// linkSearch searches the rate one publisher can send 1000-byte QoS 0 messages at over a
// 1 Mbit/s uplink (5 ms each way, a fast downlink). The link is a serial line counting IP bytes,
// so its capacity follows from the wire bytes per message.
const linkSearch = `apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmarkSuite
metadata:
  name: link
spec:
  template:
    protocol: mqtt
    qos: 0
    network:
      profile: custom
      delay: 5ms
      up: {bandwidth: 1mbit}
      down: {bandwidth: 100mbit}
    workload: {publishers: 1, subscribers: 1, topics: 1, payloadBytes: 1000, rate: 10, duration: 3s, warmup: 1s}
  search:
    field: workload.rate
    min: 20
    max: 1000
    start: 80
    precisionPercent: 5
  objectives: ["latency.endToEnd.p99 <= 1s"]
`

// TestSearchFindsALinksCapacity: the search lands within its precision of the capacity the
// link's bandwidth and the measured wire bytes per message give, confirms it, keeps every run,
// and the same link with an objective below its own delay ends BelowRange with no number.
func TestSearchFindsALinksCapacity(t *testing.T) {
	needRoot(t)
	// An objective no load meets: p99 under the link's own 5 ms one-way delay.
	impossible := strings.Replace(linkSearch, `"latency.endToEnd.p99 <= 1s"`, `"latency.endToEnd.p99 <= 4ms"`, 1)
	impossible = strings.Replace(impossible, "start: 80", "start: 20", 1)
	out := t.TempDir()
	output, err := msgbenchProcess(t, 2*time.Minute, nil, "run", "-f", writeSuite(t, impossible), "--out", out, "-q", "--json")
	var d suite.Document
	if jerr := decodeFirst(output, &d); jerr != nil || d.Search == nil {
		t.Fatalf("no suite.json on stdout (%v): %s", jerr, output)
	}
	if err == nil || d.Search.Outcome != v1alpha1.SearchBelowRange || d.Search.Capacity != nil || d.Search.Runs != 1 || d.Verdict != suite.VerdictMissed {
		t.Errorf("an objective no load meets: err %v, outcome %s, capacity %v, %d runs, verdict %s", err, d.Search.Outcome, d.Search.Capacity, d.Search.Runs, d.Verdict)
	}
	if len(d.Search.Steps) != 1 || !strings.Contains(strings.Join(d.Search.Steps[0].Trials[0].Reasons, ";"), "latency.endToEnd.p99 <= 4ms: measured") {
		t.Errorf("the failed step does not say why: %+v", d.Search.Steps)
	}

	out = t.TempDir()
	output, err = msgbenchProcess(t, 5*time.Minute, nil, "run", "-f", writeSuite(t, linkSearch), "--out", out, "-q", "--json")
	d = suite.Document{}
	if jerr := decodeFirst(output, &d); err != nil || jerr != nil || d.Search == nil {
		t.Fatalf("err %v, %v: %s", err, jerr, output)
	}
	sr := d.Search
	if sr.Outcome != v1alpha1.SearchFound || sr.Capacity == nil || sr.FirstFail == nil || d.Verdict != suite.VerdictPassed {
		t.Fatalf("outcome %s: %s", sr.Outcome, sr.Message)
	}
	last := sr.Steps[len(sr.Steps)-1]
	if last.Kind != suite.StepConfirm || last.Value != *sr.Capacity || sr.Runs > 30 {
		t.Errorf("last step %+v, %d runs", last.Step, sr.Runs)
	}
	// The truth, from a passing run's own counters: every message is one IP packet of the
	// PUBLISH's bytes plus 52 bytes of TCP/IP headers (timestamps on), and the uplink also
	// carries the subscriber's ACKs, 52 bytes each.
	dir := filepath.Join(out, "link", d.RunID, "s"+strconv.Itoa(last.Index), "r1")
	data, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res results.Result
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	publishes := float64(res.Sent) * (res.MeasuredSeconds + 1) / res.MeasuredSeconds // the warm-up's too
	acks := min(1, max(0, (float64(*res.Wire.SegmentsSent)-publishes)/publishes))
	bits := 8 * (*res.Wire.PublishBytesPerMessage + 52 + 52*acks)
	capacity := 1e6 / bits
	p := float64(sr.PrecisionPercent) / 100
	t.Logf("link capacity %.1f msg/s (%.0f bits per message, %.2f ACKs per message); search: %s", capacity, bits, acks, sr.Message)
	// Found within its precision: the truth lies in the bracket, widened by the precision.
	if float64(*sr.LastPass) > capacity*(1+p) || float64(*sr.FirstFail) < capacity*(1-p) {
		t.Errorf("bracket [%d, %d) is not within %.0f %% of the link's capacity %.1f msg/s", *sr.LastPass, *sr.FirstFail, 100*p, capacity)
	}
	if *sr.FirstFail-*sr.LastPass > max(1, *sr.LastPass*sr.PrecisionPercent/100) {
		t.Errorf("bracket [%d, %d) wider than %d %%", *sr.LastPass, *sr.FirstFail, sr.PrecisionPercent)
	}
	// Every run kept, one folder per trial; the curve has every value, the report is written.
	n := 0
	for _, st := range sr.Steps {
		for k := range st.Trials {
			if _, err := os.Stat(filepath.Join(out, "link", d.RunID, "s"+strconv.Itoa(st.Index), "r"+strconv.Itoa(k+1), "result.json")); err != nil {
				t.Error(err)
			}
			n++
		}
	}
	if n != sr.Runs || d.Runs.Total != int32(n) {
		t.Errorf("%d trials, runs %d, total %d", n, sr.Runs, d.Runs.Total)
	}
	if _, err := os.Stat(filepath.Join(out, "link", d.RunID, "report.html")); err != nil {
		t.Error(err)
	}
}

// decodeFirst decodes the first JSON object in output (stdout and stderr together).
func decodeFirst(output string, v any) error {
	i := strings.Index(output, "\n{") + 1
	if i == 0 {
		i = max(0, strings.Index(output, "{"))
	}
	return json.NewDecoder(strings.NewReader(output[i:])).Decode(v)
}
