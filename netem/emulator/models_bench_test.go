//go:build linux

package emulator

import (
	"runtime"
	"testing"
	"time"

	"github.com/msgbench/msgbench/netem"
)

// impairedBenchConfigs are the impairments BenchmarkForwarderImpaired pushes traffic through: the
// independent draws every link had, and the loss models with every correlation.
var impairedBenchConfigs = []struct {
	name string
	imp  netem.Impairment
}{
	{"bernoulli", netem.Impairment{Delay: 200 * time.Microsecond, Jitter: 50 * time.Microsecond,
		Loss: 10_000_000, Duplicate: 1_000_000, Reorder: 10_000_000}},
	{"gilbert-elliott-correlated", netem.Impairment{Delay: 200 * time.Microsecond, Jitter: 50 * time.Microsecond,
		GilbertElliott: netem.GilbertElliott{P: 10_000_000, R: 250_000_000, LossInBad: netem.FractionOne},
		Duplicate:      1_000_000, Reorder: 10_000_000,
		Correlation: netem.Correlation{Delay: 500_000_000, Duplicate: 250_000_000, Reorder: 500_000_000}}},
}

// BenchmarkForwarderImpaired pushes 64-byte UDP datagrams through a link that delays, jitters,
// loses, duplicates and reorders them, as BenchmarkForwarderThroughput does through an unimpaired
// one, and reports the packets the forwarder took per second, the process's CPU time and heap
// allocations per packet (sender and receiver included: the forwarder's own share is 0, see
// TestSteadyStateAllocatesNothing).
// Run: go test -run '^$' -bench ForwarderImpaired -benchtime 1000000x ./netem/emulator/
func BenchmarkForwarderImpaired(b *testing.B) {
	for _, c := range impairedBenchConfigs {
		b.Run(c.name, func(b *testing.B) {
			l := startLink(b, netem.Link{Up: c.imp}, Options{Seed: 1})
			received, p, msgs := udpBenchPair(b, l, 9998)
			const window = 896
			base := l.Stats().Up.Packets // 0 but for the kernel's own packets, which settled ignores
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			cpu0 := cpuTime()
			b.ResetTimer()
			start := time.Now()
			// The window counts datagrams not yet received or lost, so that neither the TUN queue
			// nor the forwarder's delay queue overflows.
			settled := func() int {
				st := l.Stats().Up
				return int(received.Load()) + int(st.Lost) - int(st.Duplicated)
			}
			for sent := 0; sent < b.N; {
				if sent-settled() > window-len(msgs) {
					time.Sleep(100 * time.Microsecond)
					continue
				}
				n, err := p.WriteBatch(msgs[:min(len(msgs), b.N-sent)], 0)
				if err != nil {
					b.Fatal(err)
				}
				sent += n
			}
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
				st := l.Stats().Up
				if st.Packets-base >= uint64(b.N) && received.Load() >= int64(st.Delivered) {
					break
				}
				time.Sleep(100 * time.Microsecond)
			}
			elapsed := time.Since(start)
			b.StopTimer()
			cpu := cpuTime() - cpu0
			runtime.ReadMemStats(&m1)
			st := l.Stats().Up
			b.ReportMetric(float64(st.Packets-base)/elapsed.Seconds(), "pkt/s")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/pkt")
			b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(b.N), "allocs/pkt")
			if st.QueueDrops+st.WriteErrors > 0 {
				b.Errorf("the forwarder dropped %d and failed %d writes", st.QueueDrops, st.WriteErrors)
			}
		})
	}
}

// TestSteadyStateAllocatesNothing runs the reader's decision path (enqueue, with every model and
// correlation) and the writer against /dev/null: once the free list has grown to the packets in
// flight, a packet costs no heap allocation.
func TestSteadyStateAllocatesNothing(t *testing.T) {
	for _, c := range impairedBenchConfigs {
		t.Run(c.name, func(t *testing.T) {
			imp := c.imp
			imp.Corrupt = 10_000_000
			imp.RateBitsPerSecond = 1_000_000_000
			imp.Correlation.Corrupt = 100_000_000
			p := devNullPipe(t, imp, 1)
			done := make(chan struct{})
			go func() { defer close(done); p.writeLoop() }()
			t.Cleanup(func() { _ = p.close(); <-done })
			cfg := p.load()
			cur := p.get()
			send := func() {
				cur.n = 200
				if p.enqueue(cur, cfg, p.clock.now(), true) {
					cur = p.get()
				}
			}
			for range 20000 {
				send()
			}
			if allocs := testing.AllocsPerRun(20000, send); allocs != 0 {
				t.Errorf("%v allocations per packet", allocs)
			}
			// The writer delivers what the link delays later, on its own goroutine: wait for it
			// (CI once took the snapshot before it had written anything).
			st := p.snapshot()
			for deadline := time.Now().Add(5 * time.Second); st.Delivered == 0 && time.Now().Before(deadline); st = p.snapshot() {
				time.Sleep(10 * time.Millisecond)
			}
			if st.Delivered == 0 || st.Lost == 0 {
				t.Errorf("the path was not exercised: %+v", st)
			}
		})
	}
}

// BenchmarkDecisions times the random decisions alone for one packet (duplication, loss,
// corruption, reordering, jitter), without queues or system calls.
// Run: go test -run '^$' -bench Decisions ./netem/emulator/
func BenchmarkDecisions(b *testing.B) {
	for _, c := range impairedBenchConfigs {
		b.Run(c.name, func(b *testing.B) {
			m := newModel(c.imp, 1)
			b.ReportAllocs()
			var sink int64
			for range b.N {
				_ = m.duplicate()
				_, _ = m.lose()
				_ = m.corrupt()
				if !m.reorder() {
					sink += m.jitter()
				}
			}
			_ = sink
		})
	}
}
