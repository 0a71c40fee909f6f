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
}

// nrUnit is the milliwatts of TR 38.840's power unit: a choice (see the 5g-sa model).
const nrUnit = 3.5

// Lookup returns the named model (nb-iot, lte-m, lte, 5g-sa).
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
