//go:build linux

package emulator

import (
	"context"
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/msgbench/msgbench/netem"
)

// TestRate runs a TCP bulk transfer up a rate-limited link and compares the throughput after
// slow start, at the receiver (payload) and at the link (IP bytes), with the configured rate:
// within 5 %.
func TestRate(t *testing.T) {
	tests := []struct {
		name  string
		rate  int64
		delay time.Duration
	}{
		{"8 Mbit/s", 8_000_000, 5 * ms},
		{"1 Mbit/s", 1_000_000, 20 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			retryWhenBusy(t, func(a *attempt) { measureRate(t, a, tt.rate, tt.delay) })
		})
	}
}

// measureRate is one measurement of TestRate.
func measureRate(t *testing.T, a *attempt, rate int64, delay time.Duration) {
	l := a.link(t, each(netem.Impairment{Delay: delay, RateBitsPerSecond: rate}), Options{})
	ln, err := l.Server().Listen(context.Background(), "tcp", serverAddr(t, l, false, 5201))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()

	const warmup, window = 1 * time.Second, 2 * time.Second
	type mark struct {
		bytes int64
		link  uint64
	}
	marks := make(chan mark, 2)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer func() { _ = c.Close() }()
		buf := make([]byte, 64<<10)
		var total int64
		start := time.Now()
		next := start.Add(warmup)
		for len(marks) < 2 {
			n, err := c.Read(buf)
			total += int64(n)
			if err != nil {
				return
			}
			if time.Now().After(next) {
				marks <- mark{total, l.Stats().Up.DeliveredBytes}
				next = next.Add(window)
			}
		}
	}()
	c, err := l.Device().DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	go func() {
		buf := make([]byte, 64<<10)
		for {
			if _, err := c.Write(buf); err != nil {
				return
			}
		}
	}()
	m1 := <-marks
	t1 := time.Now()
	m2 := <-marks
	elapsed := time.Since(t1).Seconds()
	mss := tcpInfo(t, c).Snd_mss
	// Each full segment is an IP packet of mss + 52 bytes (IPv4, TCP with timestamps).
	wantPayload := float64(rate) / 8 * float64(mss) / float64(mss+52)
	payload := float64(m2.bytes-m1.bytes) / elapsed
	link := float64(m2.link-m1.link) * 8 / elapsed
	t.Logf("payload %.0f B/s (want %.0f), link %.0f bit/s (want %d), MSS %d", payload, wantPayload, link, rate, mss)
	if payload < wantPayload*0.95 || payload > wantPayload*1.05 {
		a.Errorf("TCP payload throughput %.0f B/s, want %.0f ± 5 %%", payload, wantPayload)
	}
	if link < float64(rate)*0.95 || link > float64(rate)*1.05 {
		a.Errorf("link throughput %.0f bit/s, want %d ± 5 %%", link, rate)
	}
}

// TestTCPRetransmitsLoss sends 2 MB over TCP on a link that loses 2 % each way: every byte
// arrives, and the kernel's own count of retransmissions (TCP_INFO) covers every data packet
// the link dropped.
func TestTCPRetransmitsLoss(t *testing.T) {
	l := startLink(t, each(netem.Impairment{Delay: 5 * ms, Loss: 20_000_000}), Options{Seed: 3})
	ln, err := l.Server().Listen(context.Background(), "tcp", serverAddr(t, l, true, 5202))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	sums := make(chan [32]byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer func() { _ = c.Close() }()
		h := sha256.New()
		_, _ = io.Copy(h, c)
		var s [32]byte
		copy(s[:], h.Sum(nil))
		sums <- s
	}()
	data := make([]byte, 2<<20)
	r := rand.NewChaCha8([32]byte{1})
	_, _ = r.Read(data)
	c, err := l.Device().DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(data); err != nil {
		t.Fatal(err)
	}
	_ = c.(*net.TCPConn).CloseWrite()
	select {
	case got := <-sums:
		if got != sha256.Sum256(data) {
			t.Fatal("the data arrived corrupted")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the transfer did not finish")
	}
	info := tcpInfo(t, c)
	_ = c.Close()
	lost := l.Stats().Up.Lost
	t.Logf("link lost %d packets up, %d down; sender retransmitted %d", lost, l.Stats().Down.Lost, info.Total_retrans)
	if lost == 0 {
		t.Fatal("the link lost nothing at 2 %")
	}
	// Every lost data packet was sent again (a few of the lost up packets may be pure ACKs or
	// the FIN).
	if uint64(info.Total_retrans)+3 < lost {
		t.Errorf("TCP retransmitted %d segments, the link dropped %d up", info.Total_retrans, lost)
	}
}

func tcpInfo(t *testing.T, c net.Conn) *unix.TCPInfo {
	t.Helper()
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var info *unix.TCPInfo
	var ierr error
	if err := raw.Control(func(fd uintptr) { info, ierr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) }); err != nil || ierr != nil {
		t.Fatal(err, ierr)
	}
	return info
}
