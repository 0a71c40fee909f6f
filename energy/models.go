package energy

import (
	"slices"
	"time"
)

// The radio power models (docs/energy.md gives every number with its source, and marks those that
// were chosen). Currents from datasheets are converted at the model's voltage.

const ms = time.Millisecond

// mw is a current in milliamps at volts, in milliwatts.
func mw(mA, volts float64) float64 { return mA * volts }

var models = map[string]Model{
	// NB-IoT module at 3.6 V. TX 165 mA at 23 dBm (Quectel BG96 Cat-NB1 155–171 mA; China Mobile
	// M5311 167 mA); RX 50 mA (Quectel BC95-G 50 mA; M5311 54 mA); connected with C-DRX 50 mA
	// (measured on live networks with a 20 s inactivity timer: Robinson, Stellenbosch 2020);
	// idle 0.4 mA, an average at DRX 1.28 s that includes its paging occasions (M5311), so no
	// separate on-duration; PSM 3 µA (M5311). Promotion at the RX current is a choice.
	"nb-iot": {Name: "nb-iot", VoltageV: 3.6,
		TxMW: mw(165, 3.6), RxMW: mw(50, 3.6), ConnectedMW: mw(50, 3.6), PromotionMW: mw(50, 3.6),
		IdleMW: mw(0.4, 3.6), PagingMW: mw(0.4, 3.6), PSMMW: mw(0.003, 3.6),
		Source: "TX 165 mA (Quectel BG96 Cat-NB1 data transfer 155–171 mA at 23 dBm; China Mobile M5311 167 mA at 23 dBm); RX 50 mA (Quectel BC95-G 50 mA; M5311 54 mA); connected (C-DRX) 50 mA (Robinson, 'LTE Cat-NB performance evaluation', Stellenbosch 2020, measured); idle 0.4 mA at DRX 1.28 s, paging included (M5311); PSM 3 µA (M5311); 3.6 V; promotion at the RX current is a choice"},
	// LTE-M (Cat-M1) module at 3.7 V. TX 220 mA at 23 dBm (Quectel BG96, band 1); connected
	// 8.5 mA (Nordic's nRF9160 measured 93.82 mC over an 11 s RRC inactivity period with C-DRX);
	// idle 1.5 mA at DRX 1.28 s (BG96 sleep state, paging included); PSM 3.44 µA (nRF9160,
	// Nordic's measurement). RX 50 mA and promotion at the RX current are choices (no published
	// LTE-M RX current was found; NB-IoT modules draw 50–54 mA).
	"lte-m": {Name: "lte-m", VoltageV: 3.7,
		TxMW: mw(220, 3.7), RxMW: mw(50, 3.7), ConnectedMW: mw(8.5, 3.7), PromotionMW: mw(50, 3.7),
		IdleMW: mw(1.5, 3.7), PagingMW: mw(1.5, 3.7), PSMMW: mw(0.00344, 3.7),
		Source: "TX 220 mA (Quectel BG96 Cat-M1 data transfer, band 1 at 23.31 dBm); connected 8.5 mA (nRF Connect SDK 'Power optimization for nRF91 Series': 93.82 mC over an 11 s RRC inactivity period); idle 1.5 mA at DRX 1.28 s (BG96 sleep state); PSM 3.44 µA (same Nordic document); 3.7 V; RX 50 mA and promotion at the RX current are choices"},
	// LTE smartphone (Huang et al., MobiSys 2012, as AT&T's ARO ships it): promotion 1210 mW,
	// connected tail 1060 mW, transfer 1200 mW + 438.39 mW per Mbit/s up and 51.97 per Mbit/s
	// down, idle paging 594 mW for 43 ms every 1.28 s over an idle base of 0 (ARO); no PSM.
	// 3.7 V (a phone battery's nominal voltage) is a choice: the paper measured power.
	"lte": {Name: "lte", VoltageV: 3.7,
		TxMW: 1200, TxPerMbps: 438.39, RxMW: 1200, RxPerMbps: 51.97, ConnectedMW: 1060, PromotionMW: 1210,
		IdleMW: 0, PagingMW: 594, PagingOnDuration: 43 * ms, PSMMW: 0,
		Source: "Huang et al., 'A Close Examination of Performance and Power Characteristics of 4G LTE Networks', MobiSys 2012, as AT&T's ARO/Video Optimizer ships it (lte.conf): promotion 1.21 W, tail 1.06 W, transfer β 1.2 W + α_u 438.39 mW/Mbps, α_d 51.97 mW/Mbps, idle paging 0.594 W for 0.043 s every 1.28 s, idle base 0 W; no PSM (a phone); 3.7 V is a choice"},
	// 5G SA: 3GPP TR 38.840's relative UE power model (FR1, 30 kHz SCS, 100 MHz, 4 Rx), with
	// 1 unit = 3.5 mW — a choice (the TR gives no absolute scale) that puts PDCCH+PDSCH (300) at
	// LTE's measured connected power. TX at 23 dBm 700, RX (PDCCH+PDSCH) 300, connected C-DRX
	// 56 (a choice: 20 % PDCCH-only 100, 80 % micro sleep 45), promotion 300 (a choice), idle
	// deep sleep 1, paging 170 (PDCCH + 2 SSB) for 10 ms per cycle (a choice), no PSM.
	"5g-sa": {Name: "5g-sa", VoltageV: 3.7,
		TxMW: 700 * nrUnit, RxMW: 300 * nrUnit, ConnectedMW: 56 * nrUnit, PromotionMW: 300 * nrUnit,
		IdleMW: 1 * nrUnit, PagingMW: 170 * nrUnit, PagingOnDuration: 10 * ms, PSMMW: 1 * nrUnit,
		Source: "3GPP TR 38.840 §8.1 relative UE power (FR1): UL at 23 dBm 700, PDCCH+PDSCH 300, PDCCH-only 100, micro sleep 45, deep sleep 1, PDCCH + 2 SSB 170 (as the 5G-LENA NR energy model cites them); 1 unit = 3.5 mW is a choice (the TR gives no absolute scale), as are connected C-DRX 56 (20 % PDCCH-only, 80 % micro sleep), promotion 300, a 10 ms paging on-duration and 3.7 V"},
	// Wi-Fi station: an Espressif ESP32 associated with an access point, in Wi-Fi power save
	// (WIFI_PS_MIN_MODEM, ESP-IDF's default) with auto light-sleep between beacons, at 3.3 V.
	// The package's states for it:
	//   - transmit: a frame on the air, 190 mA (ESP32 Series Datasheet §5.4 Table 5-4, 802.11g
	//     OFDM 54 Mbps at +16 dBm: the wifi profile is 802.11g); receive 100 mA (Table 5-4's
	//     receive 802.11b/g/n is 95~100 mA: its top).
	//   - connected (the tail): the station awake after traffic, listening, before it returns to
	//     modem sleep. It stays awake ESP-IDF's minimum active time, 50 ms by default, restarted by
	//     every frame sent or received (CONFIG_ESP_WIFI_SLP_DEFAULT_MIN_ACTIVE_TIME): the
	//     inactivity timer. Listening draws the receive current (Table 4-2 puts "Wi-Fi Rx and
	//     listening" in Table 5-4's receive row).
	//   - promotion: the RF woken from modem sleep to transmit; the station stays associated, so
	//     no connection is set up. Its power at the receive current and its 1 ms are choices.
	//   - idle with paging: modem sleep, waking for each DTIM beacon (the paging occasion, one
	//     every pagingCycle = DTIM × 102.4 ms) to read the TIM: the access point holds frames for
	//     the station until then. Between beacons the chip is in auto light-sleep at 1.35 mA (the
	//     floor ESP-IDF measured at DTIM 1); each beacon listens at the receive current for 2.066 ms,
	//     derived so that the mean at DTIM 1 is ESP-IDF's measured 3.34 mA:
	//     (3.34 − 1.35) / (100 − 1.35) × 102.4 ms = 2.0656 ms.
	//   - PSM: none fits. Light sleep still wakes for every DTIM beacon (it is the idle floor
	//     above); what hears no beacon is deep sleep, which drops the association (ESP-IDF: Wi-Fi
	//     connection "Disconnect") and wakes through a reboot and a reconnection, not a
	//     promotion. PSMMW is deep sleep's 10 µA (Table 4-2, RTC timer + RTC memory) for a
	//     psmAfter a user sets; the recommended timers leave psmAfter unset.
	"wifi": {Name: "wifi", VoltageV: 3.3,
		TxMW: mw(190, 3.3), RxMW: mw(100, 3.3), ConnectedMW: mw(100, 3.3), PromotionMW: mw(100, 3.3),
		IdleMW: mw(1.35, 3.3), PagingMW: mw(100, 3.3), PagingOnDuration: 2066 * time.Microsecond, PSMMW: mw(0.010, 3.3),
		Source: "Espressif ESP32 station in Wi-Fi power save (WIFI_PS_MIN_MODEM, ESP-IDF's default) with auto light-sleep. TX 190 mA (ESP32 Series Datasheet v4.9–v5.2 §5.4 Table 5-4: 802.11g OFDM 54 Mbps at +16 dBm; 802.11b 1 Mbps at +19.5 dBm 240 mA, 802.11n MCS7 at +14 dBm 180 mA; 3.3 V, 25 °C, transmitters at a 50 % duty cycle: applying 190 mA over the whole airtime is a choice); RX 100 mA (Table 5-4: 802.11b/g/n 95~100 mA, its top); connected 100 mA (Table 4-2: 'Wi-Fi/BT Rx and listening' at Table 5-4's RX current); idle 1.35 mA (ESP-IDF 'Introduction to Low Power Mode in Wi-Fi Scenarios', Auto Light-sleep, ESP32 at 160 MHz, DTIM 1: min 1.35 mA, average 3.34 mA); paging at the RX current (a choice) for 2.066 ms per beacon, derived so the mean at DTIM 1 (102.4 ms) is that 3.34 mA average ((3.34 − 1.35) / (100 − 1.35) × 102.4 ms); PSM 10 µA (Table 4-2 Deep-sleep, RTC timer + RTC memory), a floor without the association; 3.3 V (the datasheet's supply); promotion at the RX current is a choice"},
}

// nrUnit is the milliwatts of TR 38.840's power unit: a choice (see the 5g-sa model).
const nrUnit = 3.5

// Lookup returns the named model (nb-iot, lte-m, lte, 5g-sa, wifi).
func Lookup(name string) (Model, bool) {
	m, ok := models[name]
	return m, ok
}

// ModelNames lists the models.
func ModelNames() []string {
	names := make([]string, 0, len(models))
	for n := range models {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
