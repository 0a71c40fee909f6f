// Package driverstest is the conformance suite of load-generator drivers: Run checks, against
// a real server side, the contract written on drivers.Session and drivers.Handler — Completed
// once per acknowledged publish and before Drain returns, Drain bounded by its ctx, Close
// idempotent and prompt even when the peer stopped answering, no handler call after Close,
// drivers.ErrClosed afterwards — so that each driver package proves it once, as
// golang.org/x/net/nettest's TestConn does for net.Conn. Run it under -race.
package driverstest

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/internal/devicetls"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/plan"
)

// Harness describes one driver configuration and the server side it talks to, which the caller
// started (a broker, a gateway in front of one) for the whole suite.
type Harness struct {
	// Protocol is the driver's registered name; the caller's package imports the driver.
	Protocol string
	// Spec returns a defaulted spec of the run at qos. The suite sets the payload size and the
	// inflight window and compiles it (plan.Compile): the driver gets its group; the topic prefix
	// must be one the server side accepts.
	Spec func(qos int32) *v1alpha1.MessagingBenchmarkSpec
	// Address and TLS reach the server side.
	Address string
	TLS     *tls.Config
	// Network is what the driver dials, "tcp" or "udp": the suite relays it through a proxy it
	// can stall to make the server side stop answering.
	Network string
	// Stall, when set, replaces the proxy (a driver that learns further addresses from the
	// server, as Kafka clients do, cannot be proxied on one port): it makes the server stop
	// answering until resume is called.
	Stall func(t *testing.T) (resume func())
	// QoS are the levels to publish at.
	QoS []int32
	// AckEveryQoS says the protocol acknowledges every publish, QoS 0 included (HTTP: the
	// response); otherwise Completed is expected at QoS > 0 only.
	AckEveryQoS bool
	// SyncPublish says Publish returns only once its publish is acknowledged (HTTP/1.1: one
	// request in flight), so nothing is ever outstanding for Drain to give up on.
	SyncPublish bool
	// Messages is how many messages the delivery case publishes (default 200).
	Messages int
}

// CloseBound is how long Close may take against a peer that stopped answering: the MQTT
// drivers' DISCONNECT write deadline (2 s) and the MQTT-SN driver's DISCONNECT wait (1 s), with
// room for the race detector on a busy machine.
const CloseBound = 5 * time.Second

// Run runs every case of the contract against h.
func Run(t *testing.T, h Harness) {
	if h.Messages == 0 {
		h.Messages = 200
	}
	for _, qos := range h.QoS {
		t.Run(fmt.Sprintf("qos%d", qos), func(t *testing.T) {
			t.Run("Delivery", func(t *testing.T) { testDelivery(t, h, qos) })
			t.Run("CloseIdle", func(t *testing.T) { testCloseIdle(t, h, qos) })
			t.Run("CloseUnderLoad", func(t *testing.T) { testCloseUnderLoad(t, h, qos) })
			if h.acks(qos) {
				t.Run("Stalled", func(t *testing.T) { testStalled(t, h, qos) })
			}
		})
	}
}

func (h Harness) acks(qos int32) bool { return qos > 0 || h.AckEveryQoS }

// topics numbers the suite's topics, so that no case sees another's messages.
var topics atomic.Int64

func init() { topics.Store(time.Now().UnixNano() % 1e6 * 1000) }

// env is one case's driver and its client descriptions.
type env struct {
	h     Harness
	qos   int32
	group *plan.Group
	drv   drivers.Driver
	topic string
	index int
	proxy *proxy
}

func newEnv(t *testing.T, h Harness, qos int32, inflight int32, proxied bool) *env {
	t.Helper()
	spec := h.Spec(qos)
	spec.QoS = qos
	spec.MQTT.Inflight = inflight
	spec.Workload.PayloadBytes = 16
	e := &env{h: h, qos: qos, group: Group(t, spec)}
	e.index = int(topics.Add(1))
	e.topic = e.group.TopicName(e.index)
	cfg := drivers.Config{Group: e.group, Address: h.Address, TLS: h.TLS, Now: clock()}
	if proxied && h.Stall == nil {
		e.proxy = startProxy(t, h.Network, h.Address)
		cfg.Address = e.proxy.Addr()
	}
	var err error
	if e.drv, err = drivers.New(h.Protocol, cfg); err != nil {
		t.Fatal(err)
	}
	return e
}

// Group is spec's one group, compiled as a worker does (plan.Admitted): what a test gives a
// driver (drivers.Config.Group). A spec that does not compile fails the test.
func Group(t testing.TB, spec *v1alpha1.MessagingBenchmarkSpec) *plan.Group {
	t.Helper()
	p, err := plan.Compile(spec, plan.Admitted)
	if err != nil {
		t.Fatal(err)
	}
	return &p.Groups[0]
}

// TLSPath is how spec's one group reaches its server, compiled as Group does: what a test gives
// devicetls.Client with the spec.
func TLSPath(t testing.TB, spec *v1alpha1.MessagingBenchmarkSpec) devicetls.Path {
	t.Helper()
	p, err := plan.Compile(spec, plan.Admitted)
	if err != nil {
		t.Fatal(err)
	}
	return p.TLSPath(p.Groups[0])
}

// stall makes the server side stop answering; the returned function resumes it.
func (e *env) stall(t *testing.T) func() {
	if e.h.Stall != nil {
		return e.h.Stall(t)
	}
	return e.proxy.Stall(t)
}

// clock is a driver's Now that never returns the same time twice, so that a sentAt names one
// publish and a second Completed for it shows.
func clock() func() int64 {
	start := time.Now()
	var last atomic.Int64
	return func() int64 {
		for {
			now, prev := int64(time.Since(start)), last.Load()
			now = max(now, prev+1)
			if last.CompareAndSwap(prev, now) {
				return now
			}
		}
	}
}

// handler records what a session reports and whether it called after Close returned.
type handler struct {
	t        *testing.T
	name     string
	mu       sync.Mutex
	closed   bool // Close returned
	late     int  // calls after that
	seen     map[int64]int
	ok, nok  int
	messages map[uint64]int
	received int
	calls    atomic.Int64 // Completed calls begun
	slowAt   int64        // the call that takes lastCompletedDelay
}

func newHandler(t *testing.T, name string) *handler {
	return &handler{t: t, name: name, seen: map[int64]int{}, messages: map[uint64]int{}}
}

func (h *handler) Message(payload []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		h.late++
	}
	h.received++
	if len(payload) >= 8 {
		h.messages[binary.BigEndian.Uint64(payload)]++
	}
}

// completedDelay and lastCompletedDelay widen the window in which a driver that frees an
// acknowledgement's window slot (or lets Drain return) before Completed has returned shows its
// bug, instead of catching it by luck: every Completed takes a little while, the last one of a
// case longer than Drain's polling.
const (
	completedDelay     = 50 * time.Microsecond
	lastCompletedDelay = 5 * time.Millisecond
)

func (h *handler) Completed(sentAt int64, ok bool) {
	if n := h.calls.Add(1); n == h.slowAt {
		time.Sleep(lastCompletedDelay)
	} else {
		time.Sleep(completedDelay)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		h.late++
	}
	h.seen[sentAt]++
	if ok {
		h.ok++
	} else {
		h.nok++
	}
}

// completions is how many Completed calls came, and how many publishes were reported twice.
func (h *handler) completions() (n, twice int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.seen {
		n += c
		if c > 1 {
			twice++
		}
	}
	return n, twice
}

// closeChecked closes s (twice), checks the Close contract and marks the handler closed.
func closeChecked(t *testing.T, s drivers.Session, h *handler) {
	t.Helper()
	start := time.Now()
	if err := s.Close(); err != nil { // a graceful end that could not be sent: not a breach
		t.Logf("%s: Close: %v", h.name, err)
	}
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	if d := time.Since(start); d > CloseBound {
		t.Errorf("%s: Close took %v, more than %v", h.name, d, CloseBound)
	}
	if err := s.Close(); err != nil {
		t.Errorf("%s: second Close: %v, want nil", h.name, err)
	}
	select {
	case <-s.Done():
	default:
		t.Errorf("%s: Done not closed after Close", h.name)
	}
}

// afterClose checks the calls a closed session answers with drivers.ErrClosed, and that no
// handler call came after Close returned.
func afterClose(t *testing.T, s drivers.Session, h *handler, publisher bool) {
	t.Helper()
	if publisher {
		if err := s.Publish(make([]byte, 16), true); !errors.Is(err, drivers.ErrClosed) {
			t.Errorf("%s: Publish after Close: %v, want drivers.ErrClosed", h.name, err)
		}
		if err := s.Flush(); !errors.Is(err, drivers.ErrClosed) {
			t.Errorf("%s: Flush after Close: %v, want drivers.ErrClosed", h.name, err)
		}
		if err := s.Drain(context.Background()); !errors.Is(err, drivers.ErrClosed) {
			t.Errorf("%s: Drain after Close: %v, want drivers.ErrClosed", h.name, err)
		}
	}
	time.Sleep(100 * time.Millisecond) // time for a stray handler call to show
	h.mu.Lock()
	late := h.late
	h.mu.Unlock()
	if late > 0 {
		t.Errorf("%s: %d handler calls after Close returned", h.name, late)
	}
}

func (e *env) connect(t *testing.T, role drivers.Role, h *handler) drivers.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := drivers.Client{ID: fmt.Sprintf("conf-%s-%d", role, e.index), Role: role, Topic: e.topic, TopicIndex: e.index}
	s, err := e.drv.Connect(ctx, c, h)
	if err != nil {
		t.Fatalf("%s: connect: %v", h.name, err)
	}
	if role == drivers.Subscriber {
		if err := s.Subscribe(ctx); err != nil {
			_ = s.Close()
			t.Fatalf("%s: subscribe: %v", h.name, err)
		}
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func payload(seq uint64) []byte {
	b := make([]byte, 16)
	binary.BigEndian.PutUint64(b, seq)
	return b
}

// testDelivery publishes h.Messages messages (half flushed at once, half batched) to a
// subscriber: Drain returns nil only after every acknowledged publish's Completed, each exactly
// once; the subscriber gets every message (at QoS > 0, without duplicates at QoS 2); the
// counters move.
func testDelivery(t *testing.T, h Harness, qos int32) {
	e := newEnv(t, h, qos, 8, false)
	subH, pubH := newHandler(t, "subscriber"), newHandler(t, "publisher")
	sub := e.connect(t, drivers.Subscriber, subH)
	pub := e.connect(t, drivers.Publisher, pubH)
	// A cleartext HTTP/1.1 publisher is usable once TCP connected, before any byte: 0 is right.
	pubH.slowAt = int64(h.Messages)
	before := pub.Counters()
	if cb := pub.ConnectBytes(); cb < 0 || cb > before.BytesSent+before.BytesReceived {
		t.Errorf("publisher's ConnectBytes %d, want 0 to the %d bytes its counters saw", cb, before.BytesSent+before.BytesReceived)
	}
	if sub.ConnectBytes() <= 0 {
		t.Errorf("subscriber's ConnectBytes %d, want > 0", sub.ConnectBytes())
	}
	n := h.Messages
	for i := range n {
		if err := pub.Publish(payload(uint64(i)), i%2 == 0); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
	}
	if err := pub.Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err := pub.Drain(ctx)
	cancel()
	if err != nil {
		t.Fatalf("Drain: %v", err)
	}
	got, twice := pubH.completions()
	if h.acks(qos) && got != n {
		t.Errorf("Drain returned with %d of %d publishes Completed", got, n)
	}
	if !h.acks(qos) && pubH.ok > 0 {
		t.Errorf("%d Completed(ok) at QoS %d, which has no acknowledgement", pubH.ok, qos)
	}
	if after := pub.Counters(); after.BytesSent <= before.BytesSent {
		t.Errorf("publisher's bytes sent did not move: %d then %d", before.BytesSent, after.BytesSent)
	}
	// Deliveries: all of them at QoS > 0 (loopback, so QoS 0 loses nothing either in practice,
	// but only one is required).
	want := n
	if qos <= 0 {
		want = 1
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		subH.mu.Lock()
		distinct := len(subH.messages)
		subH.mu.Unlock()
		if distinct >= want || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // late duplicates and completions
	if got2, twice2 := pubH.completions(); got2 != got || twice2 > 0 || twice > 0 {
		t.Errorf("Completed: %d by Drain's return, %d later, %d publishes reported more than once", got, got2-got, max(twice, twice2))
	}
	subH.mu.Lock()
	distinct, received := len(subH.messages), subH.received
	subH.mu.Unlock()
	if distinct < want {
		t.Errorf("subscriber got %d distinct of %d messages", distinct, n)
	}
	if qos == 2 && received != distinct {
		t.Errorf("QoS 2: subscriber got %d deliveries of %d distinct messages", received, distinct)
	}
	if c := sub.Counters(); c.BytesReceived <= 0 {
		t.Errorf("subscriber's bytes received: %d", c.BytesReceived)
	}
	closeChecked(t, pub, pubH)
	closeChecked(t, sub, subH)
	for _, s := range []drivers.Session{pub, sub} {
		if err := s.Err(); err != nil {
			t.Errorf("Err after Close: %v, want nil", err)
		}
	}
	afterClose(t, pub, pubH, true)
	afterClose(t, sub, subH, false)
}

// testCloseIdle closes sessions that did nothing.
func testCloseIdle(t *testing.T, h Harness, qos int32) {
	e := newEnv(t, h, qos, 8, false)
	subH, pubH := newHandler(t, "subscriber"), newHandler(t, "publisher")
	sub := e.connect(t, drivers.Subscriber, subH)
	pub := e.connect(t, drivers.Publisher, pubH)
	closeChecked(t, pub, pubH)
	closeChecked(t, sub, subH)
	if err := pub.Err(); err != nil {
		t.Errorf("Err after Close: %v, want nil", err)
	}
	afterClose(t, pub, pubH, true)
	afterClose(t, sub, subH, false)
}

// testCloseUnderLoad closes a publisher while it publishes in a closed loop and
// acknowledgements arrive: the interrupted Publish returns drivers.ErrClosed, and no Completed
// comes after Close returned.
func testCloseUnderLoad(t *testing.T, h Harness, qos int32) {
	e := newEnv(t, h, qos, 8, false)
	pubH := newHandler(t, "publisher")
	pub := e.connect(t, drivers.Publisher, pubH)
	errc := make(chan error, 1)
	var sent atomic.Int64
	go func() {
		for i := uint64(0); ; i++ {
			if err := pub.Publish(payload(i), i%4 == 0); err != nil {
				errc <- err
				return
			}
			sent.Add(1)
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for sent.Load() < 50 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n, _ := pubH.completions(); h.acks(qos) && n == 0 {
		time.Sleep(50 * time.Millisecond)
	}
	closeChecked(t, pub, pubH)
	select {
	case err := <-errc:
		if !errors.Is(err, drivers.ErrClosed) {
			t.Errorf("Publish interrupted by Close: %v, want drivers.ErrClosed", err)
		}
	case <-time.After(CloseBound):
		t.Fatalf("Publish still running %v after Close returned", CloseBound)
	}
	if _, twice := pubH.completions(); twice > 0 {
		t.Errorf("%d publishes Completed more than once", twice)
	}
	afterClose(t, pub, pubH, true)
}

// testStalled stalls the server side: Drain gives up with its ctx, naming what is outstanding;
// Close unblocks a Publish blocked on the full window (or waiting for its response) within
// CloseBound; nothing is reported after Close, even once the server answers again.
func testStalled(t *testing.T, h Harness, qos int32) {
	e := newEnv(t, h, qos, 4, true)
	pubH := newHandler(t, "publisher")
	pub := e.connect(t, drivers.Publisher, pubH)
	// One acknowledged publish first: the path works (and Kafka knows the partition's leader).
	if err := pub.Publish(payload(0), true); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err := pub.Drain(ctx)
	cancel()
	if err != nil {
		t.Fatalf("Drain: %v", err)
	}
	resume := e.stall(t)
	resumed := false
	defer func() {
		if !resumed {
			resume()
		}
	}()
	if !h.SyncPublish {
		if err := pub.Publish(payload(1), true); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		start := time.Now()
		err := pub.Drain(ctx)
		cancel()
		var de *drivers.DrainError
		switch {
		case time.Since(start) > 2*time.Second:
			t.Errorf("Drain returned %v after its ctx ended", time.Since(start)-200*time.Millisecond)
		case !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &de):
			t.Errorf("Drain with a stalled peer: %v, want a *drivers.DrainError wrapping context.DeadlineExceeded", err)
		case de.Unacknowledged < 1:
			t.Errorf("Drain: %v: want at least 1 unacknowledged", err)
		}
	}
	// Fill the window: a Publish blocks.
	errc := make(chan error, 1)
	var sent atomic.Int64
	go func() {
		for i := uint64(2); ; i++ {
			if err := pub.Publish(payload(i), true); err != nil {
				errc <- err
				return
			}
			sent.Add(1)
		}
	}()
	time.Sleep(500 * time.Millisecond)
	select {
	case err := <-errc:
		t.Fatalf("Publish with a stalled peer failed instead of blocking: %v", err)
	default:
	}
	if s := sent.Load(); s > 1000 {
		t.Fatalf("%d publishes went through a stalled peer: no window blocks them", s)
	}
	closeChecked(t, pub, pubH)
	select {
	case err := <-errc:
		if !errors.Is(err, drivers.ErrClosed) {
			t.Errorf("blocked Publish ended by Close: %v, want drivers.ErrClosed", err)
		}
	case <-time.After(CloseBound):
		t.Fatalf("Publish still blocked %v after Close returned", CloseBound)
	}
	resume() // whatever the server still sends must not reach the handler
	resumed = true
	time.Sleep(200 * time.Millisecond)
	afterClose(t, pub, pubH, true)
}
