// Package metricserver serves a registry's /metrics for scrapers while a run lasts, and lets the
// run wait, once it is over, until a scraper has read the final values (a run's last seconds are
// otherwise gone before the next scrape comes).
package metricserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Server serves /metrics.
type Server struct {
	Registry *prometheus.Registry
	srv      *http.Server
	mux      *http.ServeMux
	ln       net.Listener

	mu sync.Mutex
	// scrapers seen so far, by address, user agent and query (two Prometheus servers on one host
	// differ in their query parameters or agents), with when their latest answered scrape began
	scrapers map[string]time.Time
	changed  chan struct{} // closed (and replaced) on every answered scrape
}

// Listen serves a new registry's /metrics on addr (host:port; port 0 picks one). The registry
// already holds the process's own CPU, memory and Go runtime figures.
func Listen(addr string) (*Server, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("metrics address %q: want HOST:PORT, e.g. 127.0.0.1:9464", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics address %s: %w", addr, err)
	}
	s := &Server{Registry: prometheus.NewRegistry(), ln: ln, scrapers: map[string]time.Time{}, changed: make(chan struct{})}
	s.Registry.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	mux := http.NewServeMux()
	h := promhttp.HandlerFor(s.Registry, promhttp.HandlerOpts{EnableOpenMetrics: true, ErrorHandling: promhttp.ContinueOnError})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		began := time.Now()
		h.ServeHTTP(w, r)
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		s.mu.Lock()
		s.scrapers[host+" "+r.UserAgent()+" "+r.URL.RawQuery] = began
		close(s.changed)
		s.changed = make(chan struct{})
		s.mu.Unlock()
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "msgbench: metrics at /metrics")
	})
	s.mux = mux
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Handle serves h at path beside /metrics (a component's /usage).
func (s *Server) Handle(path string, h http.Handler) { s.mux.Handle(path, h) }

// Addr is the address served.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// WaitScrape waits until every scraper seen so far has scraped again after this call, for at
// most max, and reports whether they did. Call it once the final values are in place. Nobody
// scraped: nobody to wait for (a worker pod without a PodMonitor exits at once).
func (s *Server) WaitScrape(ctx context.Context, max time.Duration) bool {
	armed := time.Now()
	if !s.Scraped() {
		return false
	}
	t := time.NewTimer(max)
	defer t.Stop()
	for {
		s.mu.Lock()
		done := true
		for _, last := range s.scrapers {
			done = done && last.After(armed)
		}
		changed := s.changed
		s.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-changed:
		case <-t.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// Scraped reports whether anyone has scraped /metrics yet.
func (s *Server) Scraped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.scrapers) > 0
}

// Close stops serving (nil: nothing to stop).
func (s *Server) Close() error {
	if s == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return s.srv.Close()
	}
	return nil
}
