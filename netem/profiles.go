package netem

import (
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// Profile is a preset link: the numbers a MessagingBenchmark's spec.network.profile stands for,
// and where they come from. Values the sources do not give are marked as choices in Source.
type Profile struct {
	// Name is the value of spec.network.profile.
	Name v1alpha1.NetworkProfile
	// Link holds the preset's numbers; loss applies to each direction on its own.
	Link Link
	// Source says where each number comes from and which are choices, for docs and reviews.
	Source string
	// Radio holds the cellular presets' radio states, applied only when spec.network.radio is
	// set (docs/network-profiles.md#radio-states); nil for the other presets.
	Radio *Radio
	// RadioSource says where the radio numbers come from and which are choices.
	RadioSource string
}

const (
	sec  = time.Second
	ms   = time.Millisecond
	kbit = 1_000
	mbit = 1_000_000
)

// symmetric returns an impairment for both directions of a link.
func symmetric(delay, jitter time.Duration, loss Fraction, rate int64) Link {
	d := Impairment{Delay: delay, Jitter: jitter, Loss: loss, RateBitsPerSecond: rate}
	return Link{Up: d, Down: d}
}

// percent is a Fraction literal for the presets: percent(1, 10) is 0.1 %.
func percent(num, den uint32) Fraction { return Fraction(uint32(FractionOne) / 100 * num / den) }

// profiles are the presets of docs/network-profiles.md, in its order. Change a number only with
// its source, here and in the doc.
var profiles = []Profile{
	{
		// NB-IoT emulation setup in a CoAP/MQTT thesis (Table 4): 200 ms up / 400 ms down one-way
		// with 10–20 ms random extra (jitter 15 ms is a choice inside that range), 60 kbit up /
		// 30 kbit down, MTU 296 bytes. Cat-NB1 peak rates are 62.5 kbit up / 26 kbit down (3GPP
		// Rel-13). Loss 0 (the H3-vs-MQTT-over-QUIC paper's throughput run used 2 % random drop; set
		// lossPercent: "2" to reproduce it).
		Name: "nb-iot",
		Link: Link{
			Up:   Impairment{Delay: 200 * ms, Jitter: 15 * ms, RateBitsPerSecond: 60 * kbit},
			Down: Impairment{Delay: 400 * ms, Jitter: 15 * ms, RateBitsPerSecond: 30 * kbit},
			MTU:  296,
		},
		Source: "NB-IoT emulation setup of a CoAP/MQTT thesis (Table 4): 200 ms up / 400 ms down one-way (+10–20 ms random), 60 kbit up / 30 kbit down, MTU 296 B; Cat-NB1 peak rates are 62.5 kbit up / 26 kbit down (3GPP Rel-13). Jitter 15 ms is a choice within the 10–20 ms random part. Loss 0 (the H3-vs-MQTT-over-QUIC paper's throughput run used 2 %).",
		// The operator sets the inactivity timer (the device cannot); 20 s is a choice. The
		// paging cycle is NB-IoT's rf256 of the 1.28–10.24 s that TS 36.331 allows
		// (PCCH-Config-NB), a choice; eDRX goes 20.48–10485.76 s (TS 24.008 10.5.5.32). Connection
		// setup of 1 s (random access and RRC setup with NB-IoT's repetitions) is a choice.
		Radio:       &Radio{InactivityTimer: 20 * sec, PromotionDelay: 1 * sec, PagingCycle: 2560 * ms},
		RadioSource: "Inactivity timer 20 s is a choice (operator-set). Paging cycle 2.56 s is a choice: rf256 of NB-IoT's 1.28–10.24 s default paging cycles (TS 36.331 PCCH-Config-NB); eDRX allows 20.48–10485.76 s (TS 24.008 §10.5.5.32). Promotion 1 s is a choice (random access + RRC setup with repetitions).",
	},
	{
		// LTE Cat-M1 spec rates, 1 Mbit each way. The spec's 10–15 ms latency is rarely seen in
		// deployed networks, so 50 ms one-way is a choice; so is the 10 ms jitter.
		Name:   "lte-m",
		Link:   symmetric(50*ms, 10*ms, 0, 1*mbit),
		Source: "LTE Cat-M1 spec rates, 1 Mbit up and down. Delay 50 ms one-way is a choice (the spec's 10–15 ms is rarely seen); jitter 10 ms is a choice. Loss 0.",
		// Inactivity 10 s and promotion 500 ms (LTE's 260 ms measured by Huang et al., with
		// LTE-M's repetitions on top) are choices; 2.56 s is rf256, the longest of LTE's default
		// paging cycles (TS 36.331 PCCH-Config: 0.32–2.56 s), a choice; eDRX goes 5.12–2621.44 s.
		Radio:       &Radio{InactivityTimer: 10 * sec, PromotionDelay: 500 * ms, PagingCycle: 2560 * ms},
		RadioSource: "Inactivity timer 10 s and promotion 500 ms are choices (LTE's measured 260 ms plus LTE-M's repetitions). Paging cycle 2.56 s is a choice: rf256, the longest LTE default paging cycle (TS 36.331 PCCH-Config, 0.32–2.56 s); eDRX allows 5.12–2621.44 s (TS 24.008 §10.5.5.32).",
	},
	{
		// 5G SA vs LTE study (studies.md #4), Raspberry Pi on LTE, Tables 4–6: ping average
		// 46.4 ms (23 ms one-way), mdev 30.6 ms (jitter 15 ms one-way), 0 of 50 pings lost,
		// 15 Mbit up / 43 Mbit down (iperf3 sender 12.1 Mbit).
		Name: "lte",
		Link: Link{
			Up:   Impairment{Delay: 23 * ms, Jitter: 15 * ms, RateBitsPerSecond: 15 * mbit},
			Down: Impairment{Delay: 23 * ms, Jitter: 15 * ms, RateBitsPerSecond: 43 * mbit},
		},
		Source: "5G SA vs LTE study (studies.md #4), Raspberry Pi on LTE, Tables 4–6: ping avg 46.4 ms (23 ms one-way), mdev 30.6 ms (15 ms jitter), 0 of 50 pings lost, 15 Mbit up / 43 Mbit down (iperf3 sender 12.1 Mbit).",
		// Huang et al., "A Close Examination of Performance and Power Characteristics of 4G LTE
		// Networks", MobiSys 2012: promotion (RRC_IDLE → RRC_CONNECTED) about 260 ms, tail
		// (inactivity) timer about 11.6 s, paging cycle 1.28 s in a commercial LTE network.
		Radio:       &Radio{InactivityTimer: 11600 * ms, PromotionDelay: 260 * ms, PagingCycle: 1280 * ms},
		RadioSource: "Huang et al., MobiSys 2012 (commercial LTE, 4GTest): promotion ≈ 260 ms, tail (inactivity) timer ≈ 11.6 s, idle paging cycle 1.28 s (rf128 of TS 36.331 PCCH-Config's 0.32–2.56 s).",
	},
	{
		// Same study on 5G standalone: ping average 56.4 ms (28 ms one-way), mdev 8.0 ms (jitter
		// 4 ms), no loss, 88 Mbit up / 98 Mbit down (iperf3 89.3 Mbit).
		Name: "5g-sa",
		Link: Link{
			Up:   Impairment{Delay: 28 * ms, Jitter: 4 * ms, RateBitsPerSecond: 88 * mbit},
			Down: Impairment{Delay: 28 * ms, Jitter: 4 * ms, RateBitsPerSecond: 98 * mbit},
		},
		Source: "5G SA vs LTE study (studies.md #4), 5G SA, Tables 4–6: ping avg 56.4 ms (28 ms one-way), mdev 8.0 ms (4 ms jitter), no loss, 88 Mbit up / 98 Mbit down (iperf3 89.3 Mbit).",
		// Promotion 20 ms is IMT-2020's control-plane latency requirement (ITU-R M.2410-0), a
		// bound rather than a measurement; inactivity 10 s and the paging cycle 1.28 s (rf128 of
		// TS 38.331 PCCH-Config's 0.32–2.56 s) are choices.
		Radio:       &Radio{InactivityTimer: 10 * sec, PromotionDelay: 20 * ms, PagingCycle: 1280 * ms},
		RadioSource: "Promotion 20 ms: IMT-2020's control-plane latency requirement (ITU-R M.2410-0), a bound, not a measurement. Inactivity timer 10 s is a choice; paging cycle 1.28 s is a choice (rf128 of TS 38.331 PCCH-Config, 0.32–2.56 s).",
	},
	{
		// 3GPP SA4 contribution S4-260113 (Qualcomm), urban profile: 20 ms RTT, 0.1 % loss,
		// 100 Mbit each way. Jitter 2 ms is a choice.
		Name:   "5g-urban",
		Link:   symmetric(10*ms, 2*ms, percent(1, 10), 100*mbit),
		Source: "3GPP SA4 contribution S4-260113 (Qualcomm), urban profile: 20 ms RTT (10 ms one-way), 0.1 % loss, 100 Mbit each way. Jitter 2 ms is a choice.",
	},
	{
		// S4-260113 cell-edge profile: 120 ms RTT, 1 % loss, 5 Mbit each way. Jitter 10 ms is a
		// choice.
		Name:   "cell-edge",
		Link:   symmetric(60*ms, 10*ms, percent(1, 1), 5*mbit),
		Source: "3GPP SA4 contribution S4-260113, cell-edge profile: 120 ms RTT (60 ms one-way), 1 % loss, 5 Mbit each way. Jitter 10 ms is a choice.",
	},
	{
		// S4-260113 congested profile: 200 ms RTT, 3 % loss, 1 Mbit each way. Jitter 20 ms is a
		// choice.
		Name:   "congested",
		Link:   symmetric(100*ms, 20*ms, percent(3, 1), 1*mbit),
		Source: "3GPP SA4 contribution S4-260113, congested profile: 200 ms RTT (100 ms one-way), 3 % loss, 1 Mbit each way. Jitter 20 ms is a choice.",
	},
	{
		// Lighthouse's mobileRegular3G throttling preset: 300 ms RTT, 700 kbit each way. Jitter
		// 20 ms is a choice; no loss.
		Name:   "3g",
		Link:   symmetric(150*ms, 20*ms, 0, 700*kbit),
		Source: "Lighthouse throttling preset mobileRegular3G: 300 ms RTT (150 ms one-way), 700 kbit each way, no loss. Jitter 20 ms is a choice.",
	},
	{
		// 802.11g as in the MQTT/MQTTS throughput study (studies.md #5): 54 Mbit PHY, about
		// 20–31 Mbit usable, emulated as 25 Mbit. Delay 2 ms and jitter 1 ms are choices.
		Name:   "wifi",
		Link:   symmetric(2*ms, 1*ms, 0, 25*mbit),
		Source: "802.11g as in the MQTT/MQTTS throughput study (studies.md #5): 54 Mbit PHY, ~20–31 Mbit usable, emulated as 25 Mbit each way. Delay 2 ms one-way and jitter 1 ms are choices. No loss.",
	},
	{
		// S4-260113 GEO satellite profile: 600 ms RTT, 0.5 % loss, 10 Mbit each way; within the
		// 1100 ms delay budget of QCI 10 (3GPP TS 23.203). Jitter 10 ms is a choice.
		Name:   "satellite",
		Link:   symmetric(300*ms, 10*ms, percent(5, 10), 10*mbit),
		Source: "3GPP SA4 contribution S4-260113, GEO satellite: 600 ms RTT (300 ms one-way), 0.5 % loss, 10 Mbit each way; 3GPP TS 23.203 QCI 10 delay budget 1100 ms. Jitter 10 ms is a choice.",
	},
	{
		Name:   v1alpha1.ProfileNone,
		Source: "No impairment: the link passes every packet at once.",
	},
}

// Profiles returns the presets in the order of docs/network-profiles.md. The slice is a copy.
func Profiles() []Profile { return append([]Profile(nil), profiles...) }

// LookupProfile returns the preset called name. "custom" is not a preset (it starts from an
// unimpaired link), so it is not found here.
func LookupProfile(name v1alpha1.NetworkProfile) (Profile, bool) {
	for _, p := range profiles {
		if p.Name == name {
			return p, true
		}
	}
	return Profile{}, false
}
