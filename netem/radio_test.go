package netem

import (
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// step is one packet through the state machine on a fake clock.
type step struct {
	at      time.Duration
	up      bool
	release time.Duration
	ev      RadioEvents
}

func run(t *testing.T, r Radio, d *RadioDevice, steps []step) {
	t.Helper()
	for i, st := range steps {
		release, ev := r.Decide(d, st.up, st.at)
		if release != st.release || ev != st.ev {
			t.Fatalf("step %d (at %v, up %v): release %v %+v, want %v %+v", i, st.at, st.up, release, ev, st.release, st.ev)
		}
	}
}

func TestRadioUplinkAfterIdlePaysPromotion(t *testing.T) {
	r := Radio{InactivityTimer: 10 * sec, PromotionDelay: 300 * ms, PagingCycle: 1280 * ms}
	run(t, r, &RadioDevice{}, []step{
		// A device not seen yet is idle: its first packet brings the radio up.
		{at: 100 * sec, up: true, release: 100*sec + 300*ms, ev: RadioEvents{Promotion: true}},
		// A packet during the promotion waits with it, either way, and starts nothing.
		{at: 100*sec + 100*ms, up: true, release: 100*sec + 300*ms},
		{at: 100*sec + 200*ms, up: false, release: 100*sec + 300*ms},
		// Connected: packets pass, and each one restarts the inactivity timer.
		{at: 105 * sec, up: false, release: 105 * sec},
		{at: 114*sec + 999*ms, up: true, release: 114*sec + 999*ms},
		// Exactly the timer after the last packet the radio is idle again.
		{at: 124*sec + 999*ms, up: true, release: 125*sec + 299*ms, ev: RadioEvents{Promotion: true}},
	})
}

func TestRadioDownlinkWaitsForPaging(t *testing.T) {
	r := Radio{InactivityTimer: 10 * sec, PromotionDelay: 300 * ms, PagingCycle: 2 * sec}
	d := &RadioDevice{Phase: 500 * ms}
	run(t, r, d, []step{
		// Occasions at 0.5 s + k·2 s: a downlink packet at 101 s waits for 102.5 s, then the
		// promotion.
		{at: 101 * sec, up: false, release: 102*sec + 800*ms, ev: RadioEvents{Promotion: true, Paging: true}},
		{at: 102 * sec, up: false, release: 102*sec + 800*ms},
		// Connected from 102.8 s; idle at 112.8 s. The next occasion at or after 120.5 s is 120.5 s.
		{at: 120*sec + 500*ms, up: false, release: 120*sec + 800*ms, ev: RadioEvents{Promotion: true, Paging: true}},
	})
}

func TestRadioUplinkCutsPagingWaitShort(t *testing.T) {
	r := Radio{InactivityTimer: 10 * sec, PromotionDelay: 300 * ms, PagingCycle: 10 * sec}
	d := &RadioDevice{Phase: 9 * sec}
	run(t, r, d, []step{
		{at: 100 * sec, up: false, release: 109*sec + 300*ms, ev: RadioEvents{Promotion: true, Paging: true}},
		// The device sends before its occasion: it connects itself, and the held downlink
		// packet leaves with it.
		{at: 101 * sec, up: true, release: 101*sec + 300*ms, ev: RadioEvents{Moved: true}},
		{at: 101*sec + 100*ms, up: false, release: 101*sec + 300*ms},
		// Connected from 101.3 s, not from the paging time it no longer waits for.
		{at: 111*sec + 299*ms, up: true, release: 111*sec + 299*ms},
	})
	// An uplink after the paging occasion cannot beat the promotion already running.
	d = &RadioDevice{Phase: 0}
	run(t, r, d, []step{
		{at: 99*sec + 900*ms, up: false, release: 100*sec + 300*ms, ev: RadioEvents{Promotion: true, Paging: true}},
		{at: 100*sec + 100*ms, up: true, release: 100*sec + 300*ms},
	})
}

func TestRadioPowerSavingMode(t *testing.T) {
	r := Radio{InactivityTimer: 10 * sec, PromotionDelay: 1 * sec, PagingCycle: 2 * sec, PSMAfter: 30 * sec}
	d := &RadioDevice{}
	run(t, r, d, []step{
		{at: 0, up: true, release: 1 * sec, ev: RadioEvents{Promotion: true}},
		// Idle at 11 s, asleep at 41 s. At 40 s the next occasion (40 s, phase 0) is still
		// before sleep: paged.
		{at: 40 * sec, up: false, release: 41 * sec, ev: RadioEvents{Promotion: true, Paging: true}},
		// Idle at 51 s, asleep at 81 s. A downlink packet at 80.5 s finds its next occasion
		// (82 s) after sleep: it waits for the device to send.
		{at: 80*sec + 500*ms, up: false, release: Never},
		{at: 200 * sec, up: false, release: Never},
		// The device sends at 300 s: awake, promoted, and the held packets go with it.
		{at: 300 * sec, up: true, release: 301 * sec, ev: RadioEvents{Promotion: true, PSMWake: true, Moved: true}},
		{at: 300*sec + 500*ms, up: false, release: 301 * sec},
		// Idle at 311 s, asleep at 341 s: an uplink from sleep wakes it.
		{at: 400 * sec, up: true, release: 401 * sec, ev: RadioEvents{Promotion: true, PSMWake: true}},
	})
}

func TestRadioZeroPagingCyclePagesAtOnce(t *testing.T) {
	r := Radio{InactivityTimer: time.Second, PromotionDelay: 50 * ms}
	run(t, r, &RadioDevice{Phase: 123 * ms}, []step{
		{at: 7 * sec, up: false, release: 7*sec + 50*ms, ev: RadioEvents{Promotion: true, Paging: true}},
	})
}

func TestNextPaging(t *testing.T) {
	r := Radio{PagingCycle: 1280 * ms}
	for _, c := range []struct{ phase, now, want time.Duration }{
		{0, 0, 0},
		{0, 1, 1280 * ms},
		{100 * ms, 0, 100 * ms},
		{100 * ms, 100 * ms, 100 * ms},
		{100 * ms, 101 * ms, 1380 * ms},
		{1279 * ms, 10 * sec, 10*sec + 239*ms}, // 1279 + 7·1280 = 10239
	} {
		if got := r.NextPaging(c.phase, c.now); got != c.want {
			t.Errorf("NextPaging(%v, %v) = %v, want %v", c.phase, c.now, got, c.want)
		}
	}
}

// TestRadioProfileNumbers restates docs/network-profiles.md's radio table number by number.
func TestRadioProfileNumbers(t *testing.T) {
	want := map[v1alpha1.NetworkProfile]Radio{
		"nb-iot": {InactivityTimer: 20 * sec, PromotionDelay: 1 * sec, PagingCycle: 2560 * ms},
		"lte-m":  {InactivityTimer: 10 * sec, PromotionDelay: 500 * ms, PagingCycle: 2560 * ms},
		"lte":    {InactivityTimer: 11600 * ms, PromotionDelay: 260 * ms, PagingCycle: 1280 * ms},
		"5g-sa":  {InactivityTimer: 10 * sec, PromotionDelay: 20 * ms, PagingCycle: 1280 * ms},
	}
	for _, p := range Profiles() {
		w, ok := want[p.Name]
		switch {
		case !ok && p.Radio != nil:
			t.Errorf("%s: radio numbers %+v, want none", p.Name, *p.Radio)
		case ok && (p.Radio == nil || *p.Radio != w):
			t.Errorf("%s: radio %+v, want %+v", p.Name, p.Radio, w)
		case ok && (p.RadioSource == "" || p.Radio.PSMAfter != 0):
			t.Errorf("%s: a radio preset needs its source and has PSM off", p.Name)
		}
	}
}

func TestResolveRadio(t *testing.T) {
	got, err := ResolveRadio(v1alpha1.NetworkSpec{Profile: "lte"})
	if err != nil || got != nil {
		t.Fatalf("no radio: %v, %v", got, err)
	}
	got, err = ResolveRadio(v1alpha1.NetworkSpec{Profile: "nb-iot", Radio: &v1alpha1.RadioSpec{
		PagingCycle: dur(20480 * ms), PSMAfter: dur(time.Minute)}})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Radio{InactivityTimer: 20 * sec, PromotionDelay: 1 * sec, PagingCycle: 20480 * ms, PSMAfter: time.Minute}); *got != want {
		t.Errorf("nb-iot with eDRX and PSM: %+v, want %+v", *got, want)
	}
	got, err = ResolveRadio(v1alpha1.NetworkSpec{Profile: "custom", Radio: &v1alpha1.RadioSpec{
		InactivityTimer: dur(5 * sec), PromotionDelay: dur(100 * ms)}})
	if err != nil || *got != (Radio{InactivityTimer: 5 * sec, PromotionDelay: 100 * ms}) {
		t.Errorf("custom: %+v, %v", got, err)
	}
	for _, c := range []struct {
		spec v1alpha1.NetworkSpec
		want string
	}{
		{v1alpha1.NetworkSpec{Profile: "satellite", Radio: &v1alpha1.RadioSpec{InactivityTimer: dur(sec)}}, "spec.network.radio: only the nb-iot"},
		{v1alpha1.NetworkSpec{Profile: "lte", Radio: &v1alpha1.RadioSpec{InactivityTimer: dur(0)}}, "spec.network.radio.inactivityTimer"},
		{v1alpha1.NetworkSpec{Profile: "lte", Radio: &v1alpha1.RadioSpec{PromotionDelay: dur(-ms)}}, "spec.network.radio.promotionDelay"},
		{v1alpha1.NetworkSpec{Profile: "lte", Radio: &v1alpha1.RadioSpec{PagingCycle: dur(4 * time.Hour)}}, "spec.network.radio.pagingCycle"},
		{v1alpha1.NetworkSpec{Profile: "lte", Radio: &v1alpha1.RadioSpec{PSMAfter: dur(25 * time.Hour)}}, "spec.network.radio.psmAfter"},
	} {
		if _, err := ResolveRadio(c.spec); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one starting %q", c.spec.Radio, err, c.want)
		}
	}
}

func TestDescribeRadio(t *testing.T) {
	got := DescribeRadio(Radio{InactivityTimer: 11600 * ms, PromotionDelay: 260 * ms, PagingCycle: 2560 * ms})
	want := map[string]any{"inactivityTimer": "11.6s", "promotionDelay": "260ms", "pagingCycle": "2.56s", "psmAfter": "0s"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}
