// Package control is the small HTTP protocol between the operator and its load-generator worker
// pods: readiness, the synchronized start, and collecting the full result.
//
// A worker serves it on its control port; every request but /readyz carries the benchmark's
// control token (from a Secret) as a bearer token.
//
//	POST /connect  the worker connects its clients (after the network impairment is in place)
//	GET  /readyz   200 once every subscriber is connected and subscribed (the pod's readiness probe)
//	GET  /status   {"state": …, "startAt": …, "error": …, "now": …}
//	POST /start    {"at": RFC 3339 time, "clocks": [every worker's clock offset, with its groups]}
//	               → 200 {"now": the worker's clock when it answered}
//	GET  /result   the worker's full result document once the run is over (409 before)
//	POST /exit     the worker exits (0 if its run succeeded) once the operator has its result
//	GET  /metrics  the worker's live metrics, length-delimited protobuf (metrics.go)
//
// The result stays on the worker until /exit, so an operator that restarts mid-run collects it
// afterwards; nothing passes through a 4 KiB termination message.
package control

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgbench/msgbench/loadgen"
	"github.com/msgbench/msgbench/results"
)

// Worker states.
const (
	StateWaiting    = "waiting"
	StateConnecting = "connecting"
	StateReady      = "ready"
	StateStarted    = "started"
	StateDone       = "done"
	StateFailed     = "failed"
)

// Status is a worker's answer to GET /status.
type Status struct {
	State   string    `json:"state"`
	StartAt time.Time `json:"startAt,omitzero"`
	Error   string    `json:"error,omitempty"`
	// Waiting says what the worker waits for before it can get ready (its broker or gateway
	// not reachable yet, and how long it will keep trying).
	Waiting string `json:"waiting,omitempty"`
	// Now is the worker's clock when it answered, for clock-offset estimates.
	Now time.Time `json:"now"`
	// Progress is the run so far, for a progress display (nil before the worker runs).
	Progress *Progress `json:"progress,omitempty"`
}

// Progress is a running worker's progress: its phase and, in the measured window so far, the
// messages its publishers sent, its subscribers received and the errors (loadgen.Snapshot).
type Progress struct {
	Phase         string `json:"phase"`
	ElapsedMillis int64  `json:"elapsedMillis"` // since publishing began
	Sent          int64  `json:"sent"`
	Received      int64  `json:"received"`
	Errors        int64  `json:"errors"`
}

// StartRequest is the body of POST /start.
type StartRequest struct {
	At time.Time `json:"at"`
	// Clocks are the offsets of every worker's clock from the coordinator's, each with the
	// device groups it runs, when a run's groups are spread over several workers: a subscriber
	// puts a message from another worker's publisher on its own clock before it takes the
	// latency (loadgen.PeerClock).
	Clocks []loadgen.PeerClock `json:"clocks,omitempty"`
}

// StartResponse is the answer to POST /start.
type StartResponse struct {
	Now time.Time `json:"now"`
}

// Server is a worker's side.
type Server struct {
	token string

	mu       sync.Mutex
	state    string
	startAt  time.Time
	clocks   []loadgen.PeerClock
	errText  string
	waiting  string
	result   []byte
	connect  chan struct{} // closed by /connect
	started  chan struct{} // closed by the first valid /start
	exit     chan struct{} // closed by /exit
	monitor  *loadgen.Monitor
	gatherer prometheus.Gatherer // GET /metrics (nil: none)
}

// NewServer returns a worker's control server requiring token. The worker waits for /connect
// before it connects any client.
func NewServer(token string) *Server {
	return &Server{token: token, state: StateWaiting, connect: make(chan struct{}), started: make(chan struct{}), exit: make(chan struct{})}
}

// WaitConnect blocks until the operator allows connecting; use as loadgen.Options.Connect.
func (s *Server) WaitConnect(ctx context.Context) error {
	select {
	case <-s.connect:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Ready marks the worker ready (every subscriber connected); use as loadgen.Options.Ready.
func (s *Server) Ready() {
	s.mu.Lock()
	if s.state == StateConnecting || s.state == StateWaiting {
		s.state = StateReady
	}
	s.waiting = ""
	s.mu.Unlock()
}

// Waiting reports what the worker waits for before it can get ready; the operator shows it in
// the benchmark's status.
func (s *Server) Waiting(msg string) {
	s.mu.Lock()
	s.waiting = msg
	s.mu.Unlock()
}

// WaitStart blocks until the operator sent the start time; use as loadgen.Options.Start.
func (s *Server) WaitStart(ctx context.Context) (time.Time, error) {
	select {
	case <-s.started:
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.startAt, nil
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
}

// Clocks are the workers' clock offsets the start request brought; use as loadgen.Options.Clocks.
func (s *Server) Clocks() []loadgen.PeerClock {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clocks
}

// Finish records the run's outcome: its result, or why there is none.
func (s *Server) Finish(res *results.Result, runErr error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if runErr != nil {
		s.state, s.errText = StateFailed, runErr.Error()
		return
	}
	data, err := json.Marshal(res)
	if err != nil {
		s.state, s.errText = StateFailed, err.Error()
		return
	}
	s.state, s.result = StateDone, data
	if res.Phase != "Succeeded" {
		s.errText = res.Message
	}
}

// Exited is closed when the operator asked the worker to exit.
func (s *Server) Exited() <-chan struct{} { return s.exit }

// Handler serves the protocol.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		s.mu.Lock()
		st := s.state
		s.mu.Unlock()
		if st == StateWaiting || st == StateConnecting || st == StateFailed {
			http.Error(w, st, http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(st))
	})
	mux.HandleFunc("GET /status", s.auth(func(w http.ResponseWriter, _ *http.Request) {
		s.mu.Lock()
		st := Status{State: s.state, StartAt: s.startAt, Error: s.errText, Waiting: s.waiting, Now: time.Now()}
		m := s.monitor
		s.mu.Unlock()
		if m != nil {
			p := m.Snapshot()
			st.Progress = &Progress{Phase: p.Phase, ElapsedMillis: p.Elapsed.Milliseconds(), Sent: p.Sent, Received: p.Received, Errors: p.Errors}
		}
		writeJSON(w, st)
	}))
	mux.HandleFunc("GET /metrics", s.auth(s.serveMetrics))
	mux.HandleFunc("POST /connect", s.auth(func(w http.ResponseWriter, _ *http.Request) {
		s.mu.Lock()
		if s.state == StateWaiting {
			s.state = StateConnecting
			close(s.connect)
		}
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	mux.HandleFunc("POST /start", s.auth(func(w http.ResponseWriter, r *http.Request) {
		var req StartRequest
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil || req.At.IsZero() {
			http.Error(w, "body must be {\"at\": RFC 3339 time}", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		switch {
		case s.state == StateConnecting || s.state == StateWaiting:
			s.mu.Unlock()
			http.Error(w, "not ready: clients not connected yet", http.StatusConflict)
			return
		case s.startAt.IsZero():
			s.startAt, s.clocks = req.At, req.Clocks
			if s.state == StateReady {
				s.state = StateStarted
			}
			close(s.started)
		case !s.startAt.Equal(req.At):
			at := s.startAt
			s.mu.Unlock()
			http.Error(w, "already started for "+at.Format(time.RFC3339Nano), http.StatusConflict)
			return
		}
		s.mu.Unlock()
		writeJSON(w, StartResponse{Now: time.Now()})
	}))
	mux.HandleFunc("GET /result", s.auth(func(w http.ResponseWriter, _ *http.Request) {
		s.mu.Lock()
		data, st, e := s.result, s.state, s.errText
		s.mu.Unlock()
		if data == nil {
			http.Error(w, fmt.Sprintf("no result: worker is %s %s", st, e), http.StatusConflict)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(data)
	}))
	mux.HandleFunc("POST /exit", s.auth(func(w http.ResponseWriter, _ *http.Request) {
		s.mu.Lock()
		select {
		case <-s.exit:
		default:
			close(s.exit)
		}
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	return mux
}

func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	want := []byte("Bearer " + s.token)
	return func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			http.Error(w, "missing or wrong control token", http.StatusUnauthorized)
			return
		}
		h(w, r)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// Client is the operator's side.
type Client struct {
	HTTP  *http.Client
	Token string
}

// Status asks a worker (host:port) for its state, and estimates the offset of the worker's
// clock from ours from the answer's timestamp and the request's midpoint (error ±rtt/2).
func (c *Client) Status(ctx context.Context, addr string) (st Status, offset time.Duration, err error) {
	sent := time.Now()
	if err := c.do(ctx, http.MethodGet, addr, "/status", nil, &st); err != nil {
		return st, 0, err
	}
	rtt := time.Since(sent)
	return st, st.Now.Sub(sent.Add(rtt / 2)), nil
}

// Start tells a worker when to start. It returns the estimated offset of the worker's clock
// from ours (NTP-style, from the request's midpoint) and the round trip, which bounds the
// estimate's error to ±rtt/2.
// clocks, when the run's groups are spread over several workers, are every worker's offset
// (ClockOffset) with the groups it runs.
func (c *Client) Start(ctx context.Context, addr string, at time.Time, clocks []loadgen.PeerClock) (offset, rtt time.Duration, err error) {
	sent := time.Now()
	var resp StartResponse
	if err := c.do(ctx, http.MethodPost, addr, "/start", StartRequest{At: at, Clocks: clocks}, &resp); err != nil {
		return 0, 0, err
	}
	received := time.Now()
	rtt = received.Sub(sent)
	mid := sent.Add(rtt / 2)
	return resp.Now.Sub(mid), rtt, nil
}

// Connect lets a worker connect its clients.
func (c *Client) Connect(ctx context.Context, addr string) error {
	return c.do(ctx, http.MethodPost, addr, "/connect", nil, nil)
}

// Result fetches a worker's full result.
func (c *Client) Result(ctx context.Context, addr string) (*results.Result, error) {
	var r results.Result
	if err := c.do(ctx, http.MethodGet, addr, "/result", nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// ClockOffset estimates the offset of a worker's clock from ours from the best of three
// /status calls: the one with the shortest round trip, which bounds the error to ± rtt/2.
// Call it on its own, not while results download: one call alone, among 50 result downloads
// under -race, was seen to take 78 ms.
func (c *Client) ClockOffset(ctx context.Context, addr string) (offset, rtt time.Duration, err error) {
	for range 3 {
		sent := time.Now()
		_, o, err := c.Status(ctx, addr)
		if err != nil {
			return 0, 0, err
		}
		if d := time.Since(sent); rtt == 0 || d < rtt {
			offset, rtt = o, d
		}
	}
	return offset, rtt, nil
}

// OnOurClock puts a worker's result on the coordinator's clock: the worker measured its start
// skew on its own clock, and offset (ClockOffset) puts every worker's start on one time base; the
// result keeps the offset and the round trip that bounds it. The operator and a local run's
// worker processes collect alike.
func OnOurClock(res *results.Result, offset, rtt time.Duration) {
	for i := range res.Workers {
		res.Workers[i].StartSkewMicros -= offset.Microseconds()
		res.Workers[i].ClockOffsetMicros = offset.Microseconds()
		res.Workers[i].ControlRTTMicros = max(rtt.Microseconds(), 1)
	}
}

// Exit tells a worker to exit.
func (c *Client) Exit(ctx context.Context, addr string) error {
	return c.do(ctx, http.MethodPost, addr, "/exit", nil, nil)
}

// ErrConflict is a 409 answer: the worker is not in the state the request needs.
var ErrConflict = errors.New("worker not in the needed state")

func (c *Client) do(ctx context.Context, method, addr, path string, body, out any) error {
	var rd *jsonBody
	if body != nil {
		rd = newJSONBody(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+path, rd.reader())
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("worker %s: %w", addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusConflict {
		return fmt.Errorf("worker %s %s: %w: %s", addr, path, ErrConflict, readSmall(resp))
	}
	if resp.StatusCode >= 300 {
		return fmt.Errorf("worker %s %s: HTTP %d: %s", addr, path, resp.StatusCode, readSmall(resp))
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("worker %s %s: %w", addr, path, err)
	}
	return nil
}
