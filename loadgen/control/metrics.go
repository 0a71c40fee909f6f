package control

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/encoding/protodelim"
)

// GET /metrics (with the token) answers a worker's live metrics as length-delimited protobuf
// MetricFamily messages, native histograms included: `msgbench run` serves its worker processes'
// metrics as its own (--metrics) from them.

// ServeMetrics makes GET /metrics answer g's metrics.
func (s *Server) ServeMetrics(g prometheus.Gatherer) {
	s.mu.Lock()
	s.gatherer = g
	s.mu.Unlock()
}

func (s *Server) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	g := s.gatherer
	s.mu.Unlock()
	if g == nil {
		http.Error(w, "this worker serves no metrics", http.StatusNotFound)
		return
	}
	mfs, err := g.Gather()
	if err != nil && len(mfs) == 0 {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited")
	bw := bufio.NewWriter(w)
	for _, mf := range mfs {
		if _, err := protodelim.MarshalTo(bw, mf); err != nil {
			return
		}
	}
	_ = bw.Flush()
}

// Metrics fetches a worker's live metrics.
func (c *Client) Metrics(ctx context.Context, addr string) ([]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", http.NoBody)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("worker %s: %w", addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("worker %s /metrics: HTTP %d: %s", addr, resp.StatusCode, readSmall(resp))
	}
	br := bufio.NewReader(resp.Body)
	var mfs []*dto.MetricFamily
	for {
		mf := &dto.MetricFamily{}
		if err := protodelim.UnmarshalFrom(br, mf); errors.Is(err, io.EOF) {
			return mfs, nil
		} else if err != nil {
			return nil, fmt.Errorf("worker %s /metrics: %w", addr, err)
		}
		mfs = append(mfs, mf)
	}
}
