//go:build linux

package emulator

import (
	"context"
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/msgbench/msgbench/netem"
)

// TestTiming checks delay, jitter and reordering. Its subtests run in parallel with each other
// (they mostly wait) but with nothing else: the emulator's timing needs CPU headroom, and the
// throughput tests would take it.
func TestTiming(t *testing.T) {
	t.Run("delay", testDelay)
	t.Run("jitter", testJitter)
	t.Run("jitter keeps order", testJitterKeepsOrder)
	t.Run("reorder", testReorder)
}

// testDelay measures round trips over UDP and TCP handshakes against the configured one-way
// delays: each must be within 1 ms or 2 % of up + down, and none may be shorter.
func testDelay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		up, down time.Duration
		ipv6     bool
		pings    int
	}{
		{"no delay", 0, 0, false, 50},
		{"10ms each way", 10 * ms, 10 * ms, false, 30},
		{"35ms up 5ms down over IPv6", 35 * ms, 5 * ms, true, 20},
		{"nb-iot 200ms up 400ms down", 200 * ms, 400 * ms, false, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			retryWhenBusy(t, func(a *attempt) { measureDelay(t, a, tt.up, tt.down, tt.ipv6, tt.pings) })
		})
	}
}

// measureDelay is one measurement of testDelay. Arriving early is wrong on any machine; missing
// the tolerance may be a busy machine's fault, so it goes to the attempt.
func measureDelay(t *testing.T, a *attempt, up, down time.Duration, ipv6 bool, pings int) {
	l := a.link(t, netem.Link{Up: netem.Impairment{Delay: up}, Down: netem.Impairment{Delay: down}}, Options{})
	want := up + down
	tol := max(time.Millisecond, want/50)

	addr := serverAddr(t, l, ipv6, 7)
	udpEcho(t, l, addr)
	rtts := udpRTTs(t, l, addr, pings)
	if m := median(rtts); !within(m, want, tol) {
		a.Errorf("UDP round trip median %v, want %v ± %v (all: %v)", m, want, tol, rtts)
	}
	for _, r := range rtts {
		if r < want {
			t.Errorf("a round trip took %v, less than the configured %v", r, want)
		}
	}

	// A TCP connect returns after SYN and SYN-ACK: one round trip.
	ln, err := l.Server().Listen(context.Background(), "tcp", serverAddr(t, l, ipv6, 80))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	var connects []time.Duration
	for range min(pings, 10) {
		start := time.Now()
		c, err := l.Device().DialContext(context.Background(), "tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		connects = append(connects, time.Since(start))
		_ = c.Close()
	}
	if m := median(connects); !within(m, want, tol) {
		a.Errorf("TCP connect median %v, want one round trip %v ± %v (all: %v)", m, want, tol, connects)
	}
	t.Logf("UDP RTT median %v, TCP connect median %v, configured %v; connects %v", median(rtts), median(connects), want, connects)
}

// testJitter sends datagrams 20 ms apart over a 20 ms ± 4 ms uplink and measures each one-way
// delay (sender and receiver share this process's clock): the median and the spread must match
// (robust estimates, so that a scheduling hiccup of a busy machine does not decide the test),
// about 68 % must lie within one standard deviation, and none may arrive out of order.
func testJitter(t *testing.T) {
	t.Parallel()
	const (
		delay  = 20 * ms
		jitter = 4 * ms
		gap    = 20 * ms // 3.5 standard deviations of the difference of two delays: clamping is rare
		n      = 250
	)
	retryWhenBusy(t, func(a *attempt) {
		l := a.link(t, netem.Link{Up: netem.Impairment{Delay: delay, Jitter: jitter}}, Options{Seed: 7})
		delays, order := oneWayDelays(t, l, n, gap)
		if len(delays) != n {
			t.Fatalf("received %d of %d datagrams on a lossless link", len(delays), n)
		}
		if order > 0 {
			t.Errorf("%d datagrams arrived out of order; jitter must not reorder", order)
		}
		sorted := append([]time.Duration(nil), delays...)
		slices.Sort(sorted)
		med := sorted[n/2]
		// For a normal distribution the interquartile range is 1.349 standard deviations.
		sd := time.Duration(float64(sorted[3*n/4]-sorted[n/4]) / 1.349)
		inside := 0
		for _, d := range delays {
			if within(d, delay, jitter) {
				inside++
			}
		}
		st := l.Stats().Up
		t.Logf("%d one-way delays: median %v, standard deviation (from the IQR) %v, %d within one deviation; forwarder late %d times, at worst %v",
			n, med, sd, inside, st.Late, st.MaxLate)
		if !within(med, delay, ms/2) {
			a.Errorf("median one-way delay %v, want 20 ms ± 0.5 ms", med)
		}
		if sd < 3400*time.Microsecond || sd > 4600*time.Microsecond {
			a.Errorf("standard deviation %v, want 4 ms ± 15 %%", sd)
		}
		if frac := float64(inside) / n; frac < 0.60 || frac > 0.76 {
			a.Errorf("%.0f %% within one standard deviation, want about 68 %%", frac*100)
		}
	})
}

// testJitterKeepsOrder sends a dense stream (0.2 ms apart) over 10 ms ± 5 ms: with netem's
// defaults most would overtake each other, here none may.
func testJitterKeepsOrder(t *testing.T) {
	t.Parallel()
	l := startLink(t, netem.Link{Up: netem.Impairment{Delay: 10 * ms, Jitter: 5 * ms}}, Options{})
	delays, order := oneWayDelays(t, l, 2000, 200*time.Microsecond)
	if order > 0 {
		t.Errorf("%d of %d datagrams arrived out of order", order, len(delays))
	}
	// Kernel queues may drop a few while a busy machine stalls the test; the forwarder must not,
	// and enough must arrive for the order to mean something.
	if st := l.Stats().Up; st.QueueDrops+st.WriteErrors > 0 || len(delays) < 1000 {
		t.Errorf("received %d of 2000 datagrams; forwarder queue drops %d, write errors %d", len(delays), st.QueueDrops, st.WriteErrors)
	}
}

// oneWayDelays sends n sequence-numbered datagrams gap apart from the device side and returns
// each one's delay and how many arrived after a later one.
func oneWayDelays(t *testing.T, l *Link, n int, gap time.Duration) ([]time.Duration, int) {
	t.Helper()
	ctx := context.Background()
	addr := serverAddr(t, l, false, 9)
	pc, err := l.Server().ListenPacket(ctx, "udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	// Room for every datagram, should this goroutine not be scheduled for a while.
	setReceiveBuffer(t, pc.(*net.UDPConn), 16<<20)
	sent := make([]time.Time, n)
	type arrival struct {
		seq int
		at  time.Time
	}
	arrivals := make(chan arrival, n)
	go func() {
		buf := make([]byte, 64)
		for {
			m, _, err := pc.ReadFrom(buf)
			if err != nil {
				close(arrivals)
				return
			}
			var seq int
			if _, err := fmt.Sscanf(string(buf[:m]), "%d", &seq); err == nil && seq < n {
				arrivals <- arrival{seq, time.Now()}
			}
		}
	}()
	c, err := l.Device().DialContext(ctx, "udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	start := time.Now()
	for i := range n {
		// Absolute schedule, so sleeping late does not stretch the run.
		time.Sleep(time.Until(start.Add(time.Duration(i) * gap)))
		sent[i] = time.Now()
		if _, err := fmt.Fprintf(c, "%d", i); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(200 * ms)
	_ = pc.Close()
	var delays []time.Duration
	outOfOrder, last := 0, -1
	for a := range arrivals {
		delays = append(delays, a.at.Sub(sent[a.seq]))
		if a.seq < last {
			outOfOrder++
		}
		last = max(last, a.seq)
	}
	return delays, outOfOrder
}
