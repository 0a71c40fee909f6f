package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Prometheus is a real Prometheus server (Debian's prometheus package) on loopback, started for
// a test with its own configuration and storage, stopped by PID.
type Prometheus struct {
	URL string
	cmd *exec.Cmd
	log *os.File
}

// StartPrometheus scrapes targets (host:port, /metrics?scraper=name) every interval. native turns
// on native histograms (Prometheus 2.40+ behind --enable-feature; without it only classic
// buckets are ingested, as by an older server).
func StartPrometheus(dir, name string, targets []string, interval time.Duration, native bool) (*Prometheus, error) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		return nil, fmt.Errorf("prometheus is not installed (make setup installs Debian's prometheus): %w", err)
	}
	quoted := make([]string, len(targets))
	for i, t := range targets {
		quoted[i] = strconv.Quote(t)
	}
	cfg := fmt.Sprintf("global: {scrape_interval: %s, scrape_timeout: %s}\nscrape_configs:\n- job_name: msgbench\n  params: {scraper: [%q]}\n  static_configs: [{targets: [%s]}]\n",
		interval, interval, name, strings.Join(quoted, ", "))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	args := []string{"--config.file=" + filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr, "--log.level=warn"}
	if native {
		args = append(args, "--enable-feature=native-histograms")
	}
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Prometheus{URL: "http://" + addr, cmd: cmd, log: logf}
	for deadline := time.Now().Add(30 * time.Second); ; {
		if resp, err := http.Get(p.URL + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		if time.Now().After(deadline) {
			_ = p.Stop()
			log, _ := os.ReadFile(logf.Name())
			return nil, fmt.Errorf("prometheus did not become ready: %s", log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Stop stops the server.
func (p *Prometheus) Stop() error {
	_ = p.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
	return p.log.Close()
}

// Series is one series of a query's answer: its labels and its values.
type Series struct {
	Metric map[string]string
	Values []float64
}

// QueryRange evaluates expr from start to end at step and returns its series.
func (p *Prometheus) QueryRange(ctx context.Context, expr string, start, end time.Time, step time.Duration) ([]Series, error) {
	v := url.Values{"query": {expr}, "start": {ts(start)}, "end": {ts(end)}, "step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)}}
	return p.query(ctx, "/api/v1/query_range", v)
}

// Query evaluates expr at t.
func (p *Prometheus) Query(ctx context.Context, expr string, t time.Time) ([]Series, error) {
	return p.query(ctx, "/api/v1/query", url.Values{"query": {expr}, "time": {ts(t)}})
}

func ts(t time.Time) string { return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64) }

func (p *Prometheus) query(ctx context.Context, path string, v url.Values) ([]Series, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL+path, strings.NewReader(v.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status, Error string
		Data          struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  []any             `json:"value"`
				Values [][]any           `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("prometheus: %s: %s", v.Get("query"), body.Error)
	}
	var out []Series
	for _, r := range body.Data.Result {
		s := Series{Metric: r.Metric}
		pts := r.Values
		if r.Value != nil {
			pts = [][]any{r.Value}
		}
		for _, pt := range pts {
			if len(pt) == 2 {
				if str, ok := pt[1].(string); ok {
					f, _ := strconv.ParseFloat(str, 64)
					s.Values = append(s.Values, f)
				}
			}
		}
		out = append(out, s)
	}
	return out, nil
}
