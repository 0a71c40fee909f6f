//go:build linux

package emulator

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/ipv4"

	"github.com/msgbench/msgbench/netem"
)

// BenchmarkForwarderThroughput pushes 64-byte UDP datagrams through an unimpaired link as fast
// as the forwarder takes them (sendmmsg/recvmmsg batches of 64, and at most 896 datagrams ahead
// of the forwarder, so none is dropped in the TUN queue and no CPU is spent on packets that die
// there) and reports packets per second, and the whole process's CPU time per packet: sender,
// forwarder and receiver, kernel included. Only the middle third is the forwarder's own
// (see docs/benchmarks-netem.md for the profile).
// Run: go test -run '^$' -bench Forwarder -benchtime 2000000x ./netem/emulator/
func BenchmarkForwarderThroughput(b *testing.B) {
	l := startLink(b, netem.Link{}, Options{})
	received, p, msgs := udpBenchPair(b, l, 9999)
	const window = 896 // below the TUN queue's 1000
	base := l.Stats().Up.Packets
	cpu0 := cpuTime()
	b.ResetTimer()
	start := time.Now()
	for sent := 0; sent < b.N; {
		if sent-int(l.Stats().Up.Packets-base) > window-len(msgs) {
			time.Sleep(100 * time.Microsecond)
			continue
		}
		n, err := p.WriteBatch(msgs[:min(len(msgs), b.N-sent)], 0)
		if err != nil {
			b.Fatal(err)
		}
		sent += n
	}
	for deadline := time.Now().Add(5 * time.Second); received.Load() < int64(b.N) && time.Now().Before(deadline); {
		time.Sleep(100 * time.Microsecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	cpu := cpuTime() - cpu0
	st := l.Stats().Up
	b.ReportMetric(float64(received.Load())/elapsed.Seconds(), "pkt/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/pkt")
	b.ReportMetric(float64(int64(b.N)-received.Load()), "lost")
	if st.QueueDrops+st.WriteErrors > 0 {
		b.Errorf("the forwarder dropped %d and failed %d writes", st.QueueDrops, st.WriteErrors)
	}
}

// udpBenchPair is a UDP receiver on the link's server side, counting what it gets, and a sender
// on the device side with a batch of 64-byte IP packets (36-byte payloads) to write; both close
// when the benchmark ends.
func udpBenchPair(b *testing.B, l *Link, port int) (received *atomic.Int64, p *ipv4.PacketConn, msgs []ipv4.Message) {
	ctx := context.Background()
	addr := serverAddr(b, l, false, port)
	pc, err := l.Server().ListenPacket(ctx, "udp", addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = pc.Close() })
	setReceiveBuffer(b, pc.(*net.UDPConn), 16<<20)
	received = new(atomic.Int64)
	go func() {
		p := ipv4.NewPacketConn(pc)
		in := make([]ipv4.Message, 64)
		for i := range in {
			in[i].Buffers = [][]byte{make([]byte, 2048)}
		}
		for {
			n, err := p.ReadBatch(in, 0)
			if err != nil {
				return
			}
			received.Add(int64(n))
		}
	}()
	c, err := l.Device().DialContext(ctx, "udp", addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	msgs = make([]ipv4.Message, 64)
	for i := range msgs {
		msgs[i].Buffers = [][]byte{make([]byte, 64-28)} // 64-byte IP packets
	}
	return received, ipv4.NewPacketConn(c.(*net.UDPConn)), msgs
}

// cpuTime is this process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAddedLatency measures UDP round trips of 64-byte datagrams, one at a time, through an
// unimpaired link, through a veth pair between two namespaces (the kernel's own path, when the
// ip command is there) and over loopback, and reports their p50 and p99; the link's added
// latency per direction is half the difference to veth.
// Run: go test -run '^$' -bench AddedLatency -benchtime 20000x ./netem/emulator/
func BenchmarkAddedLatency(b *testing.B) {
	paths := []struct {
		name  string
		setup func(b *testing.B) (dial func() (net.Conn, error))
	}{
		{"emulated-link", func(b *testing.B) func() (net.Conn, error) {
			l := startLink(b, netem.Link{}, Options{})
			addr := serverAddr(b, l, false, 7)
			udpEcho(b, l, addr)
			return func() (net.Conn, error) { return l.Device().DialContext(context.Background(), "udp", addr) }
		}},
		{"veth", vethPath},
		{"loopback", func(b *testing.B) func() (net.Conn, error) {
			l := startLink(b, netem.Link{}, Options{}) // its device namespace's lo, for a quiet host
			pc, err := l.Device().ListenPacket(context.Background(), "udp", "127.0.0.1:7")
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = pc.Close() })
			go echo(pc)
			return func() (net.Conn, error) {
				return l.Device().DialContext(context.Background(), "udp", "127.0.0.1:7")
			}
		}},
	}
	for _, path := range paths {
		b.Run(path.name, func(b *testing.B) {
			dial := path.setup(b)
			c, err := dial()
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = c.Close() }()
			buf := make([]byte, 64-28)
			rtts := make([]time.Duration, 0, b.N)
			for range 1000 { // warm up caches and the scheduler
				_, _ = c.Write(buf)
				_, _ = c.Read(buf)
			}
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				if _, err := c.Write(buf); err != nil {
					b.Fatal(err)
				}
				if _, err := c.Read(buf); err != nil {
					b.Fatal(err)
				}
				rtts = append(rtts, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(rtts)
			us := func(q float64) float64 { return float64(rtts[int(q*float64(len(rtts)-1))]) / 1e3 }
			b.ReportMetric(us(0.50), "p50-µs")
			b.ReportMetric(us(0.99), "p99-µs")
			b.ReportMetric(us(0.999), "p99.9-µs")
		})
	}
}

// vethPath joins a link's two namespaces with a veth pair as well (addresses 198.19.0.1/30 and
// .2/30) and serves UDP echo on the server end.
func vethPath(b *testing.B) func() (net.Conn, error) {
	ipCmd, err := exec.LookPath("ip")
	if err != nil {
		b.Skip("no ip command to create a veth pair")
	}
	l := startLink(b, netem.Link{}, Options{})
	// A process in the server namespace gives ip a PID to move the peer to.
	anchor := exec.Command("sleep", "3600")
	if err := l.Server().Start(anchor); err != nil {
		b.Fatal(err)
	}
	run := func(ns *Namespace, args ...string) {
		var out []byte
		if err := ns.Do(func() error {
			var err error
			out, err = exec.Command(ipCmd, args...).CombinedOutput()
			return err
		}); err != nil {
			b.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	run(l.Device(), "link", "add", "vb-dev", "type", "veth", "peer", "name", "vb-srv", "netns", fmt.Sprint(anchor.Process.Pid))
	run(l.Device(), "addr", "add", "198.19.0.1/30", "dev", "vb-dev")
	run(l.Device(), "link", "set", "vb-dev", "up")
	run(l.Server(), "addr", "add", "198.19.0.2/30", "dev", "vb-srv")
	run(l.Server(), "link", "set", "vb-srv", "up")
	pc, err := l.Server().ListenPacket(context.Background(), "udp", "198.19.0.2:7")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = pc.Close() })
	go echo(pc)
	return func() (net.Conn, error) {
		return l.Device().DialContext(context.Background(), "udp", "198.19.0.2:7")
	}
}

func echo(pc net.PacketConn) {
	buf := make([]byte, 2048)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		_, _ = pc.WriteTo(buf[:n], from)
	}
}
