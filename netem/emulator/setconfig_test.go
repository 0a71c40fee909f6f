//go:build linux

package emulator

import (
	"context"
	"encoding/binary"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/msgbench/msgbench/netem"
)

// TestSetConfig changes a running link's impairment between round trips: each phase's traffic
// obeys the numbers in force (a delay raises the round trip, an outage drops every packet and the
// forwarder counts each, lifting it restores the link), and an MTU change is refused.
func TestSetConfig(t *testing.T) {
	l := startLink(t, netem.Link{}, Options{Seed: 1})
	addr := serverAddr(t, l, false, 7001)
	udpEcho(t, l, addr)

	if m := median(udpRTTs(t, l, addr, 20)); m >= 40*ms {
		t.Errorf("unimpaired round trip %v, want under 40ms (the delayed phase takes 80ms)", m)
	}

	delayed := each(netem.Impairment{Delay: 40 * ms})
	if err := l.SetConfig(delayed); err != nil {
		t.Fatal(err)
	}
	if got := l.Config(); got != delayed {
		t.Errorf("Config() = %+v after SetConfig(%+v)", got, delayed)
	}
	// A lower bound only: a busy machine makes packets late, never early.
	if m := median(udpRTTs(t, l, addr, 10)); m < 80*ms {
		t.Errorf("round trip %v with 40ms each way, want at least 80ms", m)
	}

	if err := l.SetConfig(each(netem.Impairment{Loss: netem.FractionOne})); err != nil {
		t.Fatal(err)
	}
	before := l.Stats()
	c, err := l.Device().DialContext(context.Background(), "udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	const n = 50
	for range n {
		if _, err := c.Write(make([]byte, 16)); err != nil {
			t.Fatal(err)
		}
	}
	_ = c.SetReadDeadline(time.Now().Add(300 * ms))
	if _, err := c.Read(make([]byte, 64)); err == nil {
		t.Error("a reply came back through an outage")
	}
	after := l.Stats()
	if lost := after.Up.Lost - before.Up.Lost; lost != n {
		t.Errorf("the forwarder dropped %d of the %d datagrams sent during the outage", lost, n)
	}
	if d := after.Up.Delivered - before.Up.Delivered; d != 0 {
		t.Errorf("%d datagrams delivered during the outage", d)
	}

	if err := l.SetConfig(netem.Link{}); err != nil {
		t.Fatal(err)
	}
	if m := median(udpRTTs(t, l, addr, 20)); m >= 40*ms {
		t.Errorf("round trip %v after lifting the outage, want under 40ms (the delayed phase takes 80ms)", m)
	}

	if err := l.SetConfig(netem.Link{MTU: 1280}); err == nil {
		t.Error("SetConfig accepted an MTU change")
	}
	if err := l.SetConfig(netem.Link{MTU: netem.DefaultMTU}); err != nil {
		t.Errorf("SetConfig refused the link's own MTU written out: %v", err)
	}
	if got := l.Config(); got.EffectiveMTU() != netem.DefaultMTU {
		t.Errorf("MTU now %d", got.EffectiveMTU())
	}
}

// TestSetConfigKeepsOrder lifts a 100 ms delay while packets are queued behind it: the packets
// sent after the change must not overtake them (the forwarder writes without the queue only once
// it is empty), and every packet arrives.
func TestSetConfigKeepsOrder(t *testing.T) {
	l := startLink(t, netem.Link{Up: netem.Impairment{Delay: 100 * ms}}, Options{Seed: 1})
	ctx := context.Background()
	addr := serverAddr(t, l, false, 7002)
	pc, err := l.Server().ListenPacket(ctx, "udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pc.Close() }()
	setReceiveBuffer(t, pc.(*net.UDPConn), 4<<20)
	c, err := l.Device().DialContext(ctx, "udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()

	const n = 200
	send := func(from, to int) {
		buf := make([]byte, 16)
		for i := from; i < to; i++ {
			binary.BigEndian.PutUint64(buf, uint64(i))
			if _, err := c.Write(buf); err != nil {
				t.Fatal(err)
			}
		}
	}
	send(0, n/2)
	// The forwarder has read the first half (queued under the delay) before the change.
	for deadline := time.Now().Add(5 * time.Second); l.Stats().Up.Packets < n/2; {
		if time.Now().After(deadline) {
			t.Fatalf("the forwarder read %d of %d", l.Stats().Up.Packets, n/2)
		}
		time.Sleep(100 * time.Microsecond)
	}
	if err := l.SetConfig(netem.Link{}); err != nil {
		t.Fatal(err)
	}
	send(n/2, n)

	buf := make([]byte, 64)
	for want := range n {
		_ = pc.SetReadDeadline(time.Now().Add(5 * time.Second))
		m, _, err := pc.ReadFrom(buf)
		if err != nil {
			t.Fatalf("datagram %d: %v", want, err)
		}
		if got := binary.BigEndian.Uint64(buf[:m]); got != uint64(want) {
			t.Fatalf("datagram %d arrived where %d was due: the change let it overtake", got, want)
		}
	}
}

// TestSetConfigWhileFlowing swaps the impairment from another goroutine while a sender keeps the
// link busy (run with -race): every packet read is accounted for as delivered, lost or dropped.
func TestSetConfigWhileFlowing(t *testing.T) {
	l := startLink(t, netem.Link{}, Options{Seed: 3})
	ctx := context.Background()
	addr := serverAddr(t, l, false, 7003)
	pc, err := l.Server().ListenPacket(ctx, "udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pc.Close() }()
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	c, err := l.Device().DialContext(ctx, "udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()

	configs := []netem.Link{
		{},
		each(netem.Impairment{Loss: 500_000_000}),
		each(netem.Impairment{Delay: 2 * ms, Jitter: ms, Reorder: 100_000_000}),
		each(netem.Impairment{Loss: netem.FractionOne}),
		each(netem.Impairment{Duplicate: 200_000_000, RateBitsPerSecond: 50_000_000}),
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			if err := l.SetConfig(configs[i%len(configs)]); err != nil {
				t.Error(err)
				return
			}
		}
	})
	const n = 5000
	for i := range n {
		if _, err := c.Write(make([]byte, 64)); err != nil {
			t.Fatal(err)
		}
		if i%100 == 99 {
			time.Sleep(200 * time.Microsecond)
		}
	}
	close(stop)
	wg.Wait()
	if err := l.SetConfig(netem.Link{}); err != nil {
		t.Fatal(err)
	}
	// Everything queued leaves within the last delay and rate.
	var st, prev DirectionStats
	for deadline := time.Now().Add(5 * time.Second); ; prev = st {
		st = l.Stats().Up
		if st.Packets == prev.Packets && st.Delivered+st.WriteErrors+st.Lost+st.QueueDrops == st.Packets+st.Duplicated {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not every packet accounted for: %+v", st)
		}
		time.Sleep(10 * ms)
	}
	if st.Packets < n/2 || st.Lost == 0 || st.Delivered == 0 {
		t.Errorf("the changes were not applied: %+v", st)
	}
	t.Logf("%+v", st)
}
