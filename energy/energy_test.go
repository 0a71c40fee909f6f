package energy

import (
	"math"
	"testing"
	"time"
)

// model is round numbers, so every case below is a hand calculation.
var model = Model{Name: "test", VoltageV: 3.6, TxMW: 500, RxMW: 100, ConnectedMW: 50, PromotionMW: 200,
	IdleMW: 3, PagingMW: 80, PagingOnDuration: 10 * time.Millisecond, PSMMW: 0.01}

var link = Link{UpBitsPerSecond: 60000, DownBitsPerSecond: 30000, InactivityTimer: 20 * time.Second,
	PromotionDelay: time.Second, PagingCycle: 2560 * time.Millisecond, PSMAfter: 30 * time.Second}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol*math.Abs(want) {
		t.Errorf("%s: %.6g, want %.6g (within %.2g %%)", what, got, want, 100*tol)
	}
}

// One 100-byte report a minute: each period is a promotion (1 s), the report's airtime
// (800 bits at 60 kbit/s), the 20 s connected tail, 30 s idle with a 10 ms paging occasion every
// 2.56 s, and PSM for the rest.
func TestOneReportAMinuteByHand(t *testing.T) {
	var pkts []Packet
	for k := 0; k < 10; k++ {
		pkts = append(pkts, Packet{At: time.Duration(61+60*k) * time.Second, Up: true, Bytes: 100})
	}
	a := Timeline(model, link, pkts, 0, 60*time.Second, 660*time.Second)
	air := 800.0 / 60000
	pagingShare := 0.010 / 2.56
	psm := 60 - 1 - air - 20 - 30
	period := 1*200 + air*500 + 20*50 + 30*(pagingShare*80+(1-pagingShare)*3) + psm*0.01
	near(t, "energy", a.TotalMJ(), 10*period, 1e-6)
	near(t, "promotion", a.EnergyMJ[Promotion], 10*200, 1e-9)
	near(t, "transmit time", a.Time[Tx].Seconds(), 10*air, 1e-6)
	near(t, "connected time", a.Time[Connected].Seconds(), 10*20, 1e-9)
	near(t, "psm time", a.Time[PSM].Seconds(), 10*psm, 1e-6)
	near(t, "time", a.Seconds(), 600, 1e-9)
	if a.Promotions != 10 || a.Packets != 10 {
		t.Errorf("promotions %d, packets %d", a.Promotions, a.Packets)
	}
	// Mean current and battery life follow: 10 periods in 600 s at 3.6 V, a 5000 mAh cell.
	mA := 10 * period / 600 / 3.6
	near(t, "mean current", a.MeanMilliamps(model), mA, 1e-6)
	near(t, "battery", a.BatteryHours(model, 5000), 5000/mA, 1e-6)
}

// A device that never wakes costs PSM power times time; without PSM, idle with paging.
func TestASleepingDevice(t *testing.T) {
	a := Timeline(model, link, nil, 0, 0, time.Hour)
	near(t, "psm", a.TotalMJ(), 0.01*3600, 1e-9)
	if a.Time[PSM] != time.Hour {
		t.Errorf("psm time %v", a.Time[PSM])
	}
	noPSM := link
	noPSM.PSMAfter = 0
	a = Timeline(model, noPSM, nil, 0, 0, time.Hour)
	share := 0.010 / 2.56
	near(t, "idle", a.TotalMJ(), 3600*(share*80+(1-share)*3), 1e-6)
	near(t, "paging time", a.Time[Paging].Seconds(), 3600*share, 1e-6)
}

// Packets within the tail share one promotion; a downlink packet takes its airtime at the
// downlink's rate, and the tail runs from the last packet's airtime.
func TestPacketsWithinTheTail(t *testing.T) {
	pkts := []Packet{
		{At: 10 * time.Second, Up: true, Bytes: 150},         // 20 ms at 60 kbit/s
		{At: 10400 * time.Millisecond, Bytes: 75},            // 20 ms at 30 kbit/s
		{At: 15 * time.Second, Up: true, Bytes: 150},         // within the tail
		{At: 15010 * time.Millisecond, Up: true, Bytes: 150}, // queued behind the previous one
	}
	a := Timeline(model, link, pkts, 0, 0, 100*time.Second)
	if a.Promotions != 1 || a.Packets != 4 {
		t.Errorf("promotions %d, packets %d", a.Promotions, a.Packets)
	}
	near(t, "transmit", a.Time[Tx].Seconds(), 0.060, 1e-6)
	near(t, "receive", a.Time[Rx].Seconds(), 0.020, 1e-6)
	// Connected from 10 s to the last airtime's end (15.04 s) plus 20 s, less the airtimes.
	near(t, "connected", a.Time[Connected].Seconds(), 35.04-10-0.080, 1e-6)
	// PSM from the start until the promotion at 9 s, then idle 30 s, then PSM to 100 s.
	near(t, "psm", a.Time[PSM].Seconds(), 9+(100-35.04-30), 1e-6)
	near(t, "idle and paging", (a.Time[Idle] + a.Time[Paging]).Seconds(), 30, 1e-6)
	near(t, "time", a.Seconds(), 100, 1e-9)
}

// The window cuts a device's time where it lies: a tail that began before it counts from the
// window's start.
func TestTheWindowCuts(t *testing.T) {
	pkts := []Packet{{At: 5 * time.Second, Up: true, Bytes: 0}}
	a := Timeline(model, link, pkts, 0, 10*time.Second, 20*time.Second)
	if a.Promotions != 0 || a.Packets != 0 || a.Time[Connected] != 10*time.Second || a.Seconds() != 10 {
		t.Errorf("%+v", a)
	}
}

func TestValidate(t *testing.T) {
	always := model // an on-duration as long as the cycle: always listening
	always.PagingOnDuration = 3 * time.Second
	noPSM := link
	noPSM.PSMAfter = 0
	if a := Timeline(always, noPSM, nil, 0, 0, time.Minute); a.Time[Paging] != time.Minute {
		t.Errorf("always listening: %+v", a.Time)
	}
	bad := model
	bad.TxMW = -1
	if err := bad.Validate(link); err == nil {
		t.Error("a negative power")
	}
	if err := model.Validate(link); err != nil {
		t.Error(err)
	}
}

// A keep-alive exchange a minute, as the emulator records it: the PINGREQ (54 bytes) on the air
// after its promotion, the PINGRESP (54 bytes) recorded as it enters the downlink 200 ms after
// the PINGREQ's airtime — before the link's 400 ms downlink delay, which DownlinkDelay adds back —
// and the device's TCP ACK (52 bytes) 40 ms after the PINGRESP arrived. The connected tail runs
// 20 s from the ACK's airtime.
func TestKeepAliveExchangeByHand(t *testing.T) {
	l := link
	l.DownlinkDelay = 400 * time.Millisecond
	a1, a2, a3 := 54*8/60000.0, 54*8/30000.0, 52*8/60000.0 // airtimes: PINGREQ up, PINGRESP down, ACK up
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	var pkts []Packet
	for k := 0; k < 10; k++ {
		s := float64(61 + 60*k)
		r := s + a1 + 0.2 // the PINGRESP enters the downlink
		pkts = append(pkts, Packet{At: sec(s), Up: true, Bytes: 54}, Packet{At: sec(r), Bytes: 54},
			Packet{At: sec(r + 0.4 + a2 + 0.04), Up: true, Bytes: 52})
	}
	a := Timeline(model, l, pkts, 0, 60*time.Second, 660*time.Second)
	span := a1 + 0.2 + 0.4 + a2 + 0.04 + a3 // first airtime's start to the last one's end
	pagingShare := 0.010 / 2.56
	psm := 60 - 1 - span - 20 - 30
	period := 1*200 + (a1+a3)*500 + a2*100 + (span-a1-a2-a3+20)*50 + 30*(pagingShare*80+(1-pagingShare)*3) + psm*0.01
	near(t, "energy", a.TotalMJ(), 10*period, 1e-6)
	near(t, "connected time", a.Time[Connected].Seconds(), 10*(span-a1-a2-a3+20), 1e-6)
	near(t, "receive time", a.Time[Rx].Seconds(), 10*a2, 1e-6)
	if a.Promotions != 10 || a.Packets != 30 {
		t.Errorf("promotions %d, packets %d; want 10, 30", a.Promotions, a.Packets)
	}
	// Over UDP (MQTT-SN) nothing follows the PINGRESP: without DownlinkDelay its tail would start
	// 400 ms sooner than it does, 10 × 0.4 s more in PSM instead of connected.
	var udp []Packet
	for _, p := range pkts {
		if p.Bytes != 52 {
			udp = append(udp, p)
		}
	}
	arrived, recorded := Timeline(model, l, udp, 0, 60*time.Second, 660*time.Second), Timeline(model, link, udp, 0, 60*time.Second, 660*time.Second)
	near(t, "UDP, delay applied", arrived.TotalMJ()-recorded.TotalMJ(), 10*0.4*(50-0.01), 1e-6)
}
