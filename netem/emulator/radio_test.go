//go:build linux

package emulator

import (
	"context"
	"encoding/binary"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/msgbench/msgbench/netem"
)

// The radio tests put 5 ms each way on the link and radio numbers far above it, and bound what
// they measure by tens of milliseconds: a busy machine delays packets by a few milliseconds at
// most, a missing promotion or paging wait by hundreds.

var radioLink = each(netem.Impairment{Delay: 5 * ms})

// rtt sends one datagram on c (connected to a UDP echo) and waits for its echo.
func rtt(t *testing.T, c net.Conn, seq uint64) time.Duration {
	t.Helper()
	buf := make([]byte, 16)
	binary.BigEndian.PutUint64(buf, seq)
	start := time.Now()
	if _, err := c.Write(buf); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("echo %d: %v", seq, err)
		}
		if n == 16 && binary.BigEndian.Uint64(buf) == seq {
			return time.Since(start)
		}
	}
}

func dialEcho(t *testing.T, l *Link, addr string) net.Conn {
	t.Helper()
	c, err := l.Device().DialContext(context.Background(), "udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestRadioFirstPacketAfterIdlePaysPromotion: a round trip after the inactivity timer pays the
// promotion delay once; round trips while connected do not.
func TestRadioFirstPacketAfterIdlePaysPromotion(t *testing.T) {
	radio := &netem.Radio{InactivityTimer: 300 * ms, PromotionDelay: 200 * ms, PagingCycle: time.Second}
	retryWhenBusy(t, func(a *attempt) {
		l := a.link(t, radioLink, Options{Radio: radio, Timelines: true})
		addr := serverAddr(t, l, false, 7)
		udpEcho(t, l, addr)
		c := dialEcho(t, l, addr)

		sent := time.Now()
		first := rtt(t, c, 0) // a device not seen yet is idle
		var connected []time.Duration
		for i := range 5 {
			connected = append(connected, rtt(t, c, uint64(1+i)))
		}
		time.Sleep(radio.InactivityTimer + 200*ms)
		afterIdle := rtt(t, c, 10)
		again := rtt(t, c, 11)
		t.Logf("first %v, connected %v, after idle %v, then %v; %+v", first, connected, afterIdle, again, l.Stats().Radio)

		for _, d := range []time.Duration{first, afterIdle} {
			if d < 210*ms || d > 260*ms {
				a.Errorf("a round trip from idle took %v, want the 200 ms promotion + 10 ms (up to 260 ms)", d)
			}
		}
		for _, d := range append(connected, again) {
			if d > 50*ms {
				a.Errorf("a round trip while connected took %v, want about 10 ms", d)
			}
		}
		st := l.Stats().Radio
		if st.Devices != 1 || st.Promotions != 2 || st.Pagings != 0 || st.HeldPackets != 2 {
			a.Errorf("radio stats %+v, want 1 device, 2 promotions, no paging, 2 held packets", st)
		}
		if st.HoldTime < 400*ms || st.HoldTime > 420*ms || st.MaxHold < 200*ms {
			a.Errorf("hold time %v (max %v), want 2 × 200 ms", st.HoldTime, st.MaxHold)
		}
		// The device's timeline (Options.Timelines): every packet, each way, as it went on the
		// air — the two after idle 200 ms after they were sent.
		epoch, tls := l.Timelines()
		if len(tls) != 1 || len(tls[0].Packets) != 16 || !strings.HasPrefix(tls[0].Device, "udp/") {
			a.Errorf("timelines %+v, want one UDP device with 8 round trips", tls)
			return
		}
		ps := tls[0].Packets
		for i, p := range ps {
			if p.Up != (i%2 == 0) || p.Bytes != 20+8+16 {
				a.Errorf("packet %d: %+v, want %s of 44 bytes", i, p, map[bool]string{true: "up", false: "down"}[i%2 == 0])
			}
		}
		if at := epoch.Add(ps[0].At); at.Sub(sent) < 200*ms || at.Sub(sent) > 250*ms {
			a.Errorf("the first packet went on the air %v after it was sent, want the 200 ms promotion", at.Sub(sent))
		}
		if gap := ps[12].At - ps[11].At; gap < radio.InactivityTimer+radio.PromotionDelay {
			a.Errorf("the packet after idle went on the air %v after the last one, want at least the %v idle and the %v promotion", gap, radio.InactivityTimer, radio.PromotionDelay)
		}
	})
}

// TestRadioOtherDevicesDoNotWait: while one device is being promoted, a connected device's
// packets pass at once, and the promoted device's packets leave in order after the promotion.
func TestRadioOtherDevicesDoNotWait(t *testing.T) {
	radio := &netem.Radio{InactivityTimer: 10 * time.Second, PromotionDelay: 800 * ms}
	retryWhenBusy(t, func(a *attempt) {
		l := a.link(t, radioLink, Options{Radio: radio})
		addr := serverAddr(t, l, false, 7)
		udpEcho(t, l, addr)
		connected := dialEcho(t, l, addr)
		rtt(t, connected, 0) // promoted once, then connected for 10 s

		idle := dialEcho(t, l, addr)
		start := time.Now()
		for i := range 5 {
			var b [16]byte
			binary.BigEndian.PutUint64(b[:], uint64(100+i))
			if _, err := idle.Write(b[:]); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 10 {
			if d := rtt(t, connected, uint64(1+i)); d > 50*ms {
				a.Errorf("a connected device's round trip took %v during another device's promotion", d)
			}
		}
		_ = idle.SetReadDeadline(time.Now().Add(5 * time.Second))
		for i := range 5 {
			var b [16]byte
			if _, err := idle.Read(b[:]); err != nil {
				t.Fatal(err)
			}
			if got := binary.BigEndian.Uint64(b[:]); got != uint64(100+i) {
				a.Errorf("echo %d of the promoted device is %d: out of order", i, got)
			}
			if i == 0 {
				if d := time.Since(start); d < 810*ms || d > 880*ms {
					a.Errorf("the promoted device's first echo after %v, want the 800 ms promotion + 10 ms", d)
				}
			}
		}
	})
}

// monotonic is CLOCK_MONOTONIC, the emulator's clock, where paging occasions fall.
func monotonic() time.Duration {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return time.Duration(ts.Nano())
}

// TestRadioDownlinkWaitsForPaging: a packet for an idle device arrives at its paging occasion
// plus the promotion delay: every such arrival falls at the same phase of the paging cycle, and
// each waited less than a cycle plus the promotion.
func TestRadioDownlinkWaitsForPaging(t *testing.T) {
	const cycle, promotion, delay = 1000 * ms, 100 * ms, 5 * ms
	radio := &netem.Radio{InactivityTimer: 150 * ms, PromotionDelay: promotion, PagingCycle: cycle}
	retryWhenBusy(t, func(a *attempt) {
		l := a.link(t, radioLink, Options{Radio: radio, Seed: 42})
		devAddr := net.JoinHostPort(l.Device().Addrs()[0].String(), "4000")
		device, err := l.Device().ListenPacket(context.Background(), "udp", devAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = device.Close() }()
		server, err := l.Server().DialContext(context.Background(), "udp", devAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = server.Close() }()

		var phases []time.Duration
		gaps := []time.Duration{0, 370 * ms, 610 * ms, 230 * ms} // sent at different phases
		for i, gap := range gaps {
			time.Sleep(gap)
			sent := monotonic()
			if _, err := server.Write([]byte{byte(i)}); err != nil {
				t.Fatal(err)
			}
			_ = device.SetReadDeadline(time.Now().Add(3 * time.Second))
			var b [1]byte
			if _, _, err := device.ReadFrom(b[:]); err != nil {
				t.Fatalf("downlink %d: %v", i, err)
			}
			got := monotonic()
			wait := got - sent - delay
			if wait < promotion || wait > promotion+cycle+30*ms {
				a.Errorf("downlink %d waited %v, want the promotion (%v) after the next paging occasion (within %v)", i, wait, promotion, cycle)
			}
			phases = append(phases, (got-delay-promotion)%cycle)
			time.Sleep(radio.InactivityTimer + 50*ms) // idle again
		}
		t.Logf("paging phases %v; %+v", phases, l.Stats().Radio)
		for i, p := range phases[1:] {
			d := (p - phases[0] + cycle) % cycle
			if d > 30*ms && d < cycle-30*ms {
				a.Errorf("downlink %d arrived at phase %v, the first at %v: paging occasions are one per cycle at the device's phase", i+1, p, phases[0])
			}
		}
		if st := l.Stats().Radio; st.Pagings != uint64(len(gaps)) || st.Promotions != uint64(len(gaps)) {
			a.Errorf("radio stats %+v, want %d pagings and promotions", st, len(gaps))
		}
	})
}

// TestRadioPowerSavingMode: a downlink packet for a sleeping device waits for the device's next
// uplink, however long, then for the promotion.
func TestRadioPowerSavingMode(t *testing.T) {
	radio := &netem.Radio{InactivityTimer: 100 * ms, PromotionDelay: 50 * ms, PagingCycle: 200 * ms, PSMAfter: 200 * ms}
	retryWhenBusy(t, func(a *attempt) {
		l := a.link(t, radioLink, Options{Radio: radio})
		echoAddr := serverAddr(t, l, false, 7)
		udpEcho(t, l, echoAddr)
		to, err := net.ResolveUDPAddr("udp", echoAddr)
		if err != nil {
			t.Fatal(err)
		}
		devAddr := net.JoinHostPort(l.Device().Addrs()[0].String(), "4001")
		device, err := l.Device().ListenPacket(context.Background(), "udp", devAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = device.Close() }()
		send := func(seq uint64) {
			msg := make([]byte, 16)
			binary.BigEndian.PutUint64(msg, seq)
			if _, err := device.WriteTo(msg, to); err != nil {
				t.Fatal(err)
			}
		}
		receive := func(deadline time.Duration) (uint64, error) {
			_ = device.SetReadDeadline(time.Now().Add(deadline))
			var b [16]byte
			_, _, err := device.ReadFrom(b[:])
			return binary.BigEndian.Uint64(b[:]), err
		}
		send(0)
		if _, err := receive(3 * time.Second); err != nil {
			t.Fatal(err)
		}
		time.Sleep(600 * ms) // idle about 160 ms after the echo, asleep 200 ms later

		server, err := l.Server().DialContext(context.Background(), "udp", devAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = server.Close() }()
		msg := make([]byte, 16)
		binary.BigEndian.PutUint64(msg, 999)
		if _, err := server.Write(msg); err != nil {
			t.Fatal(err)
		}
		if seq, err := receive(1500 * ms); err == nil {
			t.Fatalf("a sleeping device received %d", seq)
		}
		// It sends: it wakes, and both its echo and the held packet arrive after the promotion.
		start := time.Now()
		send(1)
		seen := map[uint64]time.Duration{}
		for len(seen) < 2 {
			seq, err := receive(3 * time.Second)
			if err != nil {
				t.Fatalf("after the wake-up, got %v: %v", seen, err)
			}
			seen[seq] = time.Since(start)
		}
		t.Logf("after the uplink: %v; %+v", seen, l.Stats().Radio)
		if d := seen[999]; d < 50*ms || d > 100*ms {
			a.Errorf("the held downlink packet arrived %v after the uplink, want the 50 ms promotion + 5 ms", d)
		}
		if d := seen[1]; d < 60*ms || d > 110*ms {
			a.Errorf("the echo took %v, want the 50 ms promotion + 10 ms", d)
		}
		if st := l.Stats().Radio; st.PSMWakeups != 1 || st.Pagings != 0 {
			a.Errorf("radio stats %+v, want one PSM wake-up and no paging", st)
		}
	})
}

func TestDeviceOf(t *testing.T) {
	udp4 := []byte{0x45, 0, 0, 28, 0, 0, 0x40, 0, 64, 17, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2,
		0x30, 0x39, 0x07, 0x5b, 0, 8, 0, 0} // 12345 → 1883, DF set
	frag4 := append([]byte(nil), udp4...)
	frag4[6] = 0x20 // more fragments
	tcp6 := make([]byte, 40+8+20)
	tcp6[0], tcp6[6] = 0x60, 60 // destination options first
	tcp6[40], tcp6[41] = 6, 0   // then TCP
	tcp6[48], tcp6[49], tcp6[50], tcp6[51] = 0x04, 0xd2, 0x22, 0xb3
	for _, c := range []struct {
		name string
		b    []byte
		up   bool
		want deviceKey
		ok   bool
	}{
		{"udp4 up: source port", udp4, true, deviceKey{proto: 17, port: 12345}, true},
		{"udp4 down: destination port", udp4, false, deviceKey{proto: 17, port: 1883}, true},
		{"ipv4 fragment: port 0", frag4, true, deviceKey{proto: 17}, true},
		{"tcp6 after an extension header", tcp6, true, deviceKey{v6: true, proto: 6, port: 1234}, true},
		{"tcp6 down", tcp6, false, deviceKey{v6: true, proto: 6, port: 8883}, true},
		{"short", udp4[:10], true, deviceKey{}, false},
		{"not IP", make([]byte, 40), true, deviceKey{}, false},
	} {
		got, ok := deviceOf(c.b, c.up)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: %+v %v, want %+v %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// BenchmarkRadioAddedLatency is BenchmarkAddedLatency's emulated-link round trip with radio
// states on and every device connected (a timer of an hour): what keying each packet on its
// device and passing the hold stage costs.
// Run: go test -run '^$' -bench AddedLatency -benchtime 20000x ./netem/emulator/ (all paths, this one last)
func BenchmarkRadioAddedLatency(b *testing.B) {
	l := startLink(b, netem.Link{}, Options{Radio: &netem.Radio{InactivityTimer: time.Hour}})
	addr := serverAddr(b, l, false, 7)
	udpEcho(b, l, addr)
	c, err := l.Device().DialContext(context.Background(), "udp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	buf := make([]byte, 64-28)
	for range 1000 {
		_, _ = c.Write(buf)
		_, _ = c.Read(buf)
	}
	rtts := make([]time.Duration, 0, b.N)
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
}

// TestRadioSweepForgetsOnlyWhatANewDeviceStandsFor: idle devices go; connected ones, those
// holding packets or being promoted, and (with PSM) those not asleep for long stay.
func TestRadioSweepForgetsOnlyWhatANewDeviceStandsFor(t *testing.T) {
	now := 100 * time.Hour
	dev := func(lastActive, until time.Duration, held bool) *radioDevice {
		d := &radioDevice{RadioDevice: netem.RadioDevice{Seen: true, LastActive: lastActive, Until: until}}
		if held {
			d.held[1] = []heldPacket{{}}
		}
		return d
	}
	for _, c := range []struct {
		psm  time.Duration
		devs map[string]*radioDevice
		kept []string
	}{
		{0, map[string]*radioDevice{
			"idle":      dev(now-11*time.Second, 0, false),
			"connected": dev(now-9*time.Second, 0, false),
			"promoting": dev(now-time.Minute, now+time.Second, false),
			"holding":   dev(now-time.Minute, netem.Never, true),
		}, []string{"connected", "holding", "promoting"}},
		{time.Minute, map[string]*radioDevice{
			"asleep an hour":  dev(now-10*time.Second-time.Minute-time.Hour, 0, false),
			"asleep a minute": dev(now-2*time.Minute, 0, false),
			"idle":            dev(now-11*time.Second, 0, false),
		}, []string{"asleep a minute", "idle"}},
	} {
		r := &radio{cfg: netem.Radio{InactivityTimer: 10 * time.Second, PSMAfter: c.psm}, devices: map[deviceKey]*radioDevice{}}
		names := map[deviceKey]string{}
		port := uint16(1)
		for name, d := range c.devs {
			r.devices[deviceKey{port: port}], names[deviceKey{port: port}] = d, name
			port++
		}
		r.sweep(now)
		var kept []string
		for k := range r.devices {
			kept = append(kept, names[k])
		}
		slices.Sort(kept)
		if !slices.Equal(kept, c.kept) || r.swept != len(c.kept) {
			t.Errorf("psmAfter %v: kept %v (swept %d), want %v", c.psm, kept, r.swept, c.kept)
		}
	}
}
