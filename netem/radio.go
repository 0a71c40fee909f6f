package netem

import (
	"fmt"
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// Radio is a cellular device's radio power states as spec.network.radio resolves them: after
// InactivityTimer without a packet either way the radio is idle; an uplink packet then waits
// PromotionDelay (connection setup), a downlink packet waits for the device's next paging
// occasion (one every PagingCycle) and then PromotionDelay. With PSMAfter, a device idle that
// long sleeps (power saving mode) and hears no paging: downlink waits for its next uplink.
type Radio struct {
	InactivityTimer time.Duration
	PromotionDelay  time.Duration
	// PagingCycle 0: a downlink packet pages the device at once.
	PagingCycle time.Duration
	// PSMAfter 0: no power saving mode.
	PSMAfter time.Duration
}

// Never is the release time of a packet that waits for an event, not for a time: a downlink
// packet for a sleeping device (PSM) waits for the device's next uplink.
const Never = time.Duration(math.MaxInt64)

// ResolveRadio is spec.network.radio on top of the profile's radio numbers, nil when the spec
// asks for none. Errors name the field: local runs have no API server to check them first.
func ResolveRadio(spec v1alpha1.NetworkSpec) (*Radio, error) {
	if spec.Radio == nil {
		return nil, nil
	}
	var r Radio
	preset := false
	if p, ok := LookupProfile(spec.Profile); ok && p.Radio != nil {
		r, preset = *p.Radio, true
	}
	s := spec.Radio
	if !preset && (s.InactivityTimer == nil || s.PromotionDelay == nil) {
		return nil, fmt.Errorf("spec.network.radio: only the nb-iot, lte-m, lte and 5g-sa profiles carry radio numbers; with profile %q set radio.inactivityTimer and radio.promotionDelay", spec.Profile)
	}
	for _, f := range []struct {
		value *metav1.Duration
		into  *time.Duration
		name  string
		min   time.Duration
		max   time.Duration
	}{
		{s.InactivityTimer, &r.InactivityTimer, "inactivityTimer", 1, 24 * time.Hour},
		{s.PromotionDelay, &r.PromotionDelay, "promotionDelay", 0, time.Hour},
		{s.PagingCycle, &r.PagingCycle, "pagingCycle", 0, 3 * time.Hour},
		{s.PSMAfter, &r.PSMAfter, "psmAfter", 0, 24 * time.Hour},
	} {
		if f.value == nil {
			continue
		}
		d := f.value.Duration
		if d < f.min || d > f.max {
			return nil, fmt.Errorf("spec.network.radio.%s: %v is outside %v..%v", f.name, d, f.min, FormatDuration(f.max))
		}
		*f.into = d
	}
	return &r, nil
}

// RadioEvents says what deciding one packet did to its device.
type RadioEvents struct {
	// Promotion: the device left idle (or sleep) with this packet.
	Promotion bool
	// Paging: a downlink packet paged the idle device.
	Paging bool
	// PSMWake: an uplink packet woke the device from power saving mode.
	PSMWake bool
	// Moved: the device's release time moved earlier (an uplink cut a wait for paging or for
	// the device's wake-up short), so its packets already held in the other direction leave
	// earlier too.
	Moved bool
}

// RadioDevice is one device's radio state. The zero value is a device not seen yet: idle (its
// radio comes up with its first packet, as after power-on), not asleep.
type RadioDevice struct {
	// Seen: the device has had a packet.
	Seen bool
	// LastActive is when the device last sent or received (or finishes its promotion): it goes
	// idle InactivityTimer after.
	LastActive time.Duration
	// Until: packets before it wait until then (a promotion in progress, or a wait for a
	// paging occasion; Never while a downlink packet waits for a sleeping device to send).
	Until time.Duration
	// Waiting: Until is a wait for a paging occasion or a wake-up, which the device's own
	// uplink can cut short; false while the promotion itself runs.
	Waiting bool
	// Phase places the device's paging occasions: at Phase + k·PagingCycle.
	Phase time.Duration
}

// NextPaging is the first paging occasion of a device with the given phase at or after now.
func (r Radio) NextPaging(phase, now time.Duration) time.Duration {
	if r.PagingCycle <= 0 {
		return now
	}
	return now + ((phase-now)%r.PagingCycle+r.PagingCycle)%r.PagingCycle
}

// Decide is the radio's verdict on a packet of device d (up: device → network) at now: when it
// may go on (now: at once; Never: when the device next sends), with d updated. The caller keeps
// a device's packets in order and releases those it holds at d.Until.
func (r Radio) Decide(d *RadioDevice, up bool, now time.Duration) (release time.Duration, ev RadioEvents) {
	if d.Until > now {
		if up && d.Waiting {
			// The device sets its connection up itself instead of waiting for the page or
			// sleeping on: the sooner of the two.
			ev.PSMWake = d.Until == Never
			ev.Promotion = ev.PSMWake // a page already counted its promotion
			if t := now + r.PromotionDelay; t < d.Until {
				d.Until, ev.Moved = t, true
			}
			d.Waiting = false
			d.LastActive = d.Until
		}
		return d.Until, ev
	}
	if d.Seen && now-d.LastActive < r.InactivityTimer {
		d.LastActive = now // connected
		return now, ev
	}
	idleSince := now // never seen: idle from its first packet on
	if d.Seen {
		idleSince = d.LastActive + r.InactivityTimer
	}
	d.Seen = true
	asleepAt := Never
	if r.PSMAfter > 0 {
		asleepAt = idleSince + r.PSMAfter
	}
	ev.Promotion = true
	if up {
		ev.PSMWake = now >= asleepAt
		d.Until, d.Waiting = now+r.PromotionDelay, false
		d.LastActive = d.Until
		return d.Until, ev
	}
	page := r.NextPaging(d.Phase, now)
	if page >= asleepAt {
		// Asleep, or asleep before its next paging occasion: unreachable until it sends.
		ev.Promotion = false
		d.Until, d.Waiting = Never, true
		return Never, ev
	}
	ev.Paging = true
	d.Until, d.Waiting = page+r.PromotionDelay, true
	d.LastActive = d.Until
	return d.Until, ev
}

// DescribeRadio is a result's network.radio numbers as durations a manifest takes ("20s",
// "2.56s", "260ms"; psmAfter "0s": no power saving mode).
func DescribeRadio(r Radio) map[string]any {
	return map[string]any{
		"inactivityTimer": r.InactivityTimer.String(), "promotionDelay": r.PromotionDelay.String(),
		"pagingCycle": r.PagingCycle.String(), "psmAfter": r.PSMAfter.String(),
	}
}
