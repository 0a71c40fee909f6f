//go:build linux

package emulator

import (
	"context"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/msgbench/msgbench/netem"
)

// TestRandomImpairments sends 20000 UDP datagrams up and counts what arrives: the fraction lost,
// duplicated or corrupted (a flipped bit fails the IP or UDP checksum, so the receiving kernel
// drops the datagram) must lie in the 99 % binomial interval of the configured probability, and
// the forwarder's own counters must agree with what the receiver saw.
func TestRandomImpairments(t *testing.T) {
	const n = 20000
	tests := []struct {
		name string
		imp  netem.Impairment
		// arrivals is the expected fraction of n that arrives
		arrivals float64
		counter  func(DirectionStats) uint64
	}{
		{"10% loss", netem.Impairment{Loss: 100_000_000}, 0.90, func(s DirectionStats) uint64 { return s.Lost }},
		{"0.5% loss", netem.Impairment{Loss: 5_000_000}, 0.995, func(s DirectionStats) uint64 { return s.Lost }},
		{"5% duplicate", netem.Impairment{Duplicate: 50_000_000}, 1.05, func(s DirectionStats) uint64 { return s.Duplicated }},
		{"5% corrupt", netem.Impairment{Corrupt: 50_000_000}, 0.95, func(s DirectionStats) uint64 { return s.Corrupted }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// A fixed seed makes the draws repeatable (the link carries only the test's datagrams,
			// so each run sees the same sequence): the interval is checked once, not re-rolled.
			l := startLink(t, netem.Link{Up: tt.imp}, Options{Seed: 1})
			got := countArrivals(t, l, n)
			p := tt.arrivals
			if p > 1 { // duplicates: n originals plus Binomial(n, p-1) copies
				p -= 1
				got -= n
			}
			lo, hi := binomial99(n, p)
			if float64(got) < lo || float64(got) > hi {
				t.Errorf("%d arrivals beyond the %d originals' share, want %.0f..%.0f (99 %% interval)", got, n, lo, hi)
			}
			// The forwarder counted the same events: the link carries nothing but these datagrams.
			events := tt.counter(l.Stats().Up)
			want := uint64(n) - uint64(got)
			if tt.arrivals > 1 {
				want = uint64(got)
			}
			if events != want {
				t.Errorf("forwarder counted %d events, the receiver saw %d", events, want)
			}
			t.Logf("%s: %d of %d; forwarder %+v", tt.name, got, n, l.Stats().Up)
		})
	}
}

// testReorder delays packets 10 ms but sends 25 % at once: that share must arrive without the
// delay, in its 99 % interval, and overtake delayed ones.
func testReorder(t *testing.T) {
	t.Parallel()
	const n = 2000
	retryWhenBusy(t, func(a *attempt) {
		l := a.link(t, netem.Link{Up: netem.Impairment{Delay: 10 * ms, Reorder: 250_000_000}}, Options{Seed: 2})
		delays, outOfOrder := oneWayDelays(t, l, n, 500*time.Microsecond)
		if len(delays) != n {
			t.Fatalf("received %d of %d", len(delays), n)
		}
		// Undelayed ones take microseconds, delayed ones at least 10 ms; half-way tells them apart.
		fast := 0
		for _, d := range delays {
			if d < 5*ms {
				fast++
			}
		}
		lo, hi := binomial99(n, 0.25)
		if float64(fast) < lo || float64(fast) > hi {
			a.Errorf("%d datagrams skipped the delay, want %.0f..%.0f", fast, lo, hi)
		}
		if outOfOrder == 0 {
			t.Errorf("no datagram arrived out of order")
		}
		if r := l.Stats().Up.Reordered; r < uint64(fast) {
			t.Errorf("forwarder counted %d reordered, the receiver saw %d undelayed", r, fast)
		}
		t.Logf("%d of %d undelayed, %d out of order", fast, n, outOfOrder)
	})
}

// countArrivals sends n numbered datagrams from the device side and returns how many arrived at
// the server side. Nothing but the impairment may drop one: the sender waits for the forwarder
// to take each batch (the TUN queue holds 500), and the receiver's socket buffer holds them all.
func countArrivals(t *testing.T, l *Link, n int) int {
	t.Helper()
	ctx := context.Background()
	addr := serverAddr(t, l, false, 5001)
	pc, err := l.Server().ListenPacket(ctx, "udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	setReceiveBuffer(t, pc.(*net.UDPConn), 16<<20)
	got := make(chan int)
	go func() {
		count := 0
		buf := make([]byte, 2048)
		for {
			_ = pc.SetReadDeadline(time.Now().Add(500 * ms))
			if _, _, err := pc.ReadFrom(buf); err != nil {
				got <- count
				return
			}
			count++
		}
	}()
	c, err := l.Device().DialContext(ctx, "udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	payload := make([]byte, 200)
	base := l.Stats().Up.Packets
	for i := range n {
		binary.BigEndian.PutUint64(payload, uint64(i))
		if _, err := c.Write(payload); err != nil {
			t.Fatal(err)
		}
		if i%100 == 99 {
			deadline := time.Now().Add(5 * time.Second)
			for l.Stats().Up.Packets < base+uint64(i+1) {
				if time.Now().After(deadline) {
					t.Fatalf("the forwarder read %d of %d datagrams", l.Stats().Up.Packets-base, i+1)
				}
				time.Sleep(50 * time.Microsecond)
			}
		}
	}
	return <-got
}

// setReceiveBuffer sets SO_RCVBUFFORCE (root may exceed net.core.rmem_max).
func setReceiveBuffer(t testing.TB, c *net.UDPConn, bytes int) {
	t.Helper()
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, bytes)
	}); err != nil || serr != nil {
		t.Fatal(err, serr)
	}
}
