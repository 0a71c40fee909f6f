package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/internal/testenv"
	"github.com/msgbench/msgbench/results"
)

// dashboardQuery is one query of the dashboard: its PromQL with the variables set, and the legend.
type dashboardQuery struct{ expr, legend string }

// dashboardQueries are the PromQL expressions of the chart's Grafana dashboard, with its
// variables set for one benchmark.
func dashboardQueries(t *testing.T, benchmark, rateInterval string) map[string]dashboardQuery {
	t.Helper()
	data, err := os.ReadFile(repo("charts", "msgbench", "files", "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct {
				Expr, RefID, LegendFormat string
			}
		}
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	qs := map[string]dashboardQuery{}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			e := strings.NewReplacer("$namespace", ".*", "$benchmark", benchmark, "$__rate_interval", rateInterval).Replace(tg.Expr)
			qs[p.Title+" "+tg.RefID] = dashboardQuery{e, tg.LegendFormat}
		}
	}
	if len(qs) < 8 {
		t.Fatalf("dashboard has %d queries", len(qs))
	}
	return qs
}

// TestLiveMetricsInPrometheus: two real Prometheus servers, one with native histograms and one
// without (an older server's view), scrape `msgbench run --metrics` through a gateway with two
// workers. At the end the scraped counters equal result.json's totals, the histograms' counts
// and p99 agree with the result's, and every query of the chart's dashboard returns data on
// both servers.
var legendLabel = regexp.MustCompile(`\{\{\s*(\w+)\s*\}\}`)

func TestLiveMetricsInPrometheus(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	servers := map[string]*testenv.Prometheus{}
	for _, native := range []bool{true, false} {
		name := map[bool]string{true: "native", false: "classic"}[native]
		_ = os.MkdirAll(filepath.Join(dir, name), 0o755)
		p, err := testenv.StartPrometheus(filepath.Join(dir, name), name, []string{addr}, 500*time.Millisecond, native)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = p.Stop() }()
		servers[name] = p
	}
	start := time.Now()
	// A 1 s warm-up, not the default 5 s: the scrapes every 500 ms see it and the window.
	out, err := msgbench(t, "run", "-f", repo("config", "samples", "http-1-1.yaml"), "--name", "live", "--run-id", "m",
		"--set", "workload.warmup=1s", "--set", "workload.duration=4s", "--set", "workers.replicas=2", "--out", filepath.Join(dir, "runs"), "-q",
		"--metrics", addr, "--metrics-wait", "30s")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	end := time.Now()
	res, err := results.ReadFile(filepath.Join(dir, "runs", "live", "m", "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent == 0 || res.Latency.EndToEnd == nil {
		t.Fatalf("the run measured nothing: %+v", res)
	}
	ctx := context.Background()
	// A series' last value: the server marks it stale once msgbench has stopped serving, so the
	// last point of a range query is what the final scrape read (last_over_time would do, but
	// Prometheus 2.42 does not apply it to native histograms).
	value := func(p *testenv.Prometheus, expr string) float64 {
		t.Helper()
		s, err := p.QueryRange(ctx, expr, start, end.Add(time.Second), 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if len(s) != 1 || len(s[0].Values) == 0 {
			t.Fatalf("%s: %d series, want 1", expr, len(s))
		}
		return s[0].Values[len(s[0].Values)-1]
	}
	last := func(metric string) string { return fmt.Sprintf(`sum(%s{benchmark="live"})`, metric) }
	totals := map[string]int64{
		"msgbench_messages_sent_total": res.Sent, "msgbench_messages_acked_total": res.Acked,
		"msgbench_messages_received_total": res.Received, "msgbench_messages_expected_total": res.Expected,
		"msgbench_messages_lost_total": *res.Lost, "msgbench_errors_total": res.Errors,
		"msgbench_messages_duplicate_total": *res.Duplicates,
		"msgbench_wire_sent_bytes_total":    res.Wire.BytesSent, "msgbench_wire_received_bytes_total": res.Wire.BytesReceived,
	}
	for name, p := range servers {
		for metric, want := range totals {
			if got := value(p, last(metric)); got != float64(want) {
				t.Errorf("%s: %s = %v, result.json has %d", name, metric, got, want)
			}
		}
		// The gateway passed every measured message (and the warm-up's) both ways.
		if in := value(p, `sum(msgbench_gateway_messages_in_total{benchmark="live",component="gateway"})`); in < float64(res.Sent) {
			t.Errorf("%s: gateway passed %v messages to the broker, fewer than the %d sent", name, in, res.Sent)
		}
		if out := value(p, `sum(msgbench_gateway_messages_out_total{benchmark="live"})`); out < float64(res.Received) {
			t.Errorf("%s: gateway delivered %v messages, fewer than the %d received", name, out, res.Received)
		}
		if got := value(p, `count(msgbench_phase{benchmark="live"})`); got != 12 {
			t.Errorf("%s: %v phase series, want 6 per worker × 2", name, got)
		}
		// The end-to-end histogram: count exact, p99 within a native bucket (9 %) of the result's.
		count, p99 := `histogram_count(sum(msgbench_end_to_end_latency_seconds{benchmark="live"}))`,
			`histogram_quantile(0.99, sum(msgbench_end_to_end_latency_seconds{benchmark="live"}))`
		if name == "classic" {
			count = last("msgbench_end_to_end_latency_seconds_count")
			p99 = `histogram_quantile(0.99, sum by (le) (msgbench_end_to_end_latency_seconds_bucket{benchmark="live"}))`
		}
		if got := value(p, count); got != float64(res.Latency.EndToEnd.Count) {
			t.Errorf("%s: end-to-end count %v, result.json %d", name, got, res.Latency.EndToEnd.Count)
		}
		want := float64(res.Latency.EndToEnd.P99Micros) / 1e6
		if got := value(p, p99); name == "native" && math.Abs(got-want) > 0.1*want {
			t.Errorf("native: end-to-end p99 %v s, result.json %v s", got, want)
		} else if name == "classic" && (got <= 0 || got > 2*want+0.001) { // classic buckets are coarse
			t.Errorf("classic: end-to-end p99 %v s, result.json %v s", got, want)
		}
		for title, dq := range dashboardQueries(t, "live", "2s") {
			q := dq.expr
			series, err := p.QueryRange(ctx, q, start, end, time.Second)
			if err != nil {
				t.Errorf("%s: dashboard panel %q: %v", name, title, err)
				continue
			}
			finite := 0
			for _, s := range series {
				// The legend names only labels the series have ({{component}} …).
				for _, m := range legendLabel.FindAllStringSubmatch(dq.legend, -1) {
					if s.Metric[m[1]] == "" {
						t.Errorf("%s: dashboard panel %q: legend %q names %s, which the series %v lack", name, title, dq.legend, m[1], s.Metric)
					}
				}
				for _, v := range s.Values {
					if !math.IsNaN(v) && !math.IsInf(v, 0) {
						finite++
					}
				}
			}
			if finite == 0 {
				t.Errorf("%s: dashboard panel %q returned no data: %s", name, title, q)
			}
		}
	}
	if got := value(servers["native"], `sum(msgbench_component_cpu_seconds_total{benchmark="live",component="broker"})`); got <= 0 || got > *res.Resources.BrokerCPUSeconds+10 {
		t.Errorf("broker CPU %v s", got)
	}
}
