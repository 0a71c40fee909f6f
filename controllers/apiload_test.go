package controllers_test

import (
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// requestCounter counts the operator's API requests by verb: reads (GET, LIST), watches, and
// writes (POST, PUT, PATCH, DELETE), each write also by resource.
type requestCounter struct {
	mu       sync.Mutex
	reads    int
	watches  int
	writes   int
	byTarget map[string]int
}

func (c *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		c.mu.Lock()
		switch {
		case req.URL.Query().Get("watch") == "true":
			c.watches++
		case req.Method == http.MethodGet:
			c.reads++
		default:
			c.writes++
			if c.byTarget == nil {
				c.byTarget = map[string]int{}
			}
			c.byTarget[req.Method+" "+resourceOf(req.URL.Path)]++
		}
		c.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

// resourceOf is the resource (and subresource) of an API path, without names.
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i, p := range parts {
		if p == "namespaces" && i+2 < len(parts) {
			rest := parts[i+2:]
			if len(rest) >= 3 {
				return rest[0] + "/" + rest[2]
			}
			return rest[0]
		}
	}
	return path
}

func (c *requestCounter) snapshot() (reads, watches, writes int, targets string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ts []string
	for k, v := range c.byTarget {
		ts = append(ts, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(ts)
	return c.reads, c.watches, c.writes, strings.Join(ts, ", ")
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestAPIRequestsPerBenchmark counts the operator's API requests for benchmarks run from start to
// Succeeded (MSGBENCH_API_LOAD=N runs N at once; docs/operator.md quotes the numbers). A pass
// where nothing changed must make no write: the writes of a run are bounded by what changes
// (objects created, phases, conditions), not by how long it polls.
func TestAPIRequestsPerBenchmark(t *testing.T) {
	t.Parallel()
	n := 1
	if v, err := strconv.Atoi(os.Getenv("MSGBENCH_API_LOAD")); err == nil && v > 0 {
		n = v
	}
	var counter requestCounter
	cfg := rest.CopyConfig(env.Config)
	cfg.WrapTransport = counter.wrap
	cfg.QPS, cfg.Burst = 1000, 2000 // count, do not throttle
	ns := newNamespace(t)
	startOperatorWith(t, ns, cfg, nil)
	startKubelet(t, ns, nil)
	start := time.Now()
	for i := range n {
		createBenchmark(t, ns, fmt.Sprintf("load-%d", i), "protocol: mqtt\nqos: 1\nworkers: {replicas: 1}\nworkload: {publishers: 1, subscribers: 1, topics: 1, payloadBytes: 64, rate: 20, duration: 3s, warmup: 500ms}")
	}
	for i := range n {
		mb := waitFinished(t, ns, fmt.Sprintf("load-%d", i), 3*time.Minute)
		if mb.Status.Phase != v1alpha1.PhaseSucceeded {
			t.Fatalf("load-%d: %s: %s", i, mb.Status.Phase, mb.Status.Message)
		}
	}
	took := time.Since(start)
	reads, watches, writes, targets := counter.snapshot()
	t.Logf("%d benchmark(s) in %s: per benchmark %.1f writes, %.1f reads (%d watches in all); writes: %s",
		n, took.Round(100*time.Millisecond), float64(writes)/float64(n), float64(reads)/float64(n), watches, targets)
	// A run makes about 20 writes for what changes: its objects (Secret, ConfigMap,
	// ServiceAccount, broker Deployment/Service/ConfigMap, Job, result ConfigMap), about a dozen
	// status updates (phases, conditions, the workers' counts) and events. Re-applying every
	// object on every 200 ms pass cost about 9 writes per pass, over 150 per run.
	if per := float64(writes) / float64(n); per > 45 {
		t.Errorf("%.1f writes per benchmark: passes where nothing changed still write (%s)", per, targets)
	}
}
