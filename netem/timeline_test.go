package netem

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

func at(d time.Duration) metav1.Duration    { return metav1.Duration{Duration: d} }
func durp(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }
func strp(s string) *string                 { return &s }

// TestResolveTimeline: each step is spec.network's link with the step's changes (not the
// previous step's), sorted by at; an outage loses everything both ways; for adds a return to
// the base link unless the next step starts right then.
func TestResolveTimeline(t *testing.T) {
	spec := v1alpha1.NetworkSpec{
		Profile:   v1alpha1.ProfileCustom,
		LinkSpec:  v1alpha1.LinkSpec{Delay: &metav1.Duration{Duration: 50 * time.Millisecond}},
		Direction: v1alpha1.DirectionBoth,
		Timeline: []v1alpha1.NetworkStep{
			{At: at(10 * time.Second), LinkSpec: v1alpha1.LinkSpec{LossPercent: strp("5")}, Up: &v1alpha1.LinkSpec{Bandwidth: strp("50kbit")}},
			{At: at(time.Second), For: durp(2 * time.Second), Outage: true},
			{At: at(3 * time.Second), For: durp(time.Second), Profile: "satellite", LinkSpec: v1alpha1.LinkSpec{Jitter: durp(0)}},
		},
	}
	steps, err := ResolveTimeline(spec)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		at    time.Duration
		index int
		desc  string
	}{
		{time.Second, 1, "outage"},
		{3 * time.Second, 2, "profile satellite, jitter 0s"},
		{4 * time.Second, -1, "end of timeline[2]: back to spec.network"},
		{10 * time.Second, 0, "lossPercent 5, up: bandwidth 50kbit"},
	}
	if len(steps) != len(want) {
		t.Fatalf("got %d steps, want %d: %+v", len(steps), len(want), steps)
	}
	for i, w := range want {
		if s := steps[i]; s.At != w.at || s.Index != w.index || s.Description != w.desc {
			t.Errorf("step %d = at %v index %d %q, want at %v index %d %q", i, s.At, s.Index, s.Description, w.at, w.index, w.desc)
		}
	}
	// Outage: everything lost both ways, nothing else.
	if o := steps[0].Link; o.Up != (Impairment{Loss: FractionOne}) || o.Down != (Impairment{Loss: FractionOne}) {
		t.Errorf("outage link = %v", o)
	}
	// Satellite replaces the base link (its 300 ms, not the base's 50 ms), jitter overridden.
	sat, _ := LookupProfile("satellite")
	if s := steps[1].Link.Up; s.Delay != sat.Link.Up.Delay || s.Jitter != 0 || s.Loss != sat.Link.Up.Loss {
		t.Errorf("satellite step up = %+v", s)
	}
	// The return is the base link.
	if b := steps[2].Link; b.Up.Delay != 50*time.Millisecond || b.Up.Loss != 0 {
		t.Errorf("return step = %v", b)
	}
	// The last step builds on spec.network, not on satellite: 50 ms, 5 % loss, 50 kbit up only.
	l := steps[3].Link
	if l.Up.Delay != 50*time.Millisecond || l.Up.Loss != percent(5, 1) || l.Up.RateBitsPerSecond != 50_000 ||
		l.Down.RateBitsPerSecond != 0 || l.Down.Loss != percent(5, 1) {
		t.Errorf("loss step = %v", l)
	}
}

// TestResolveTimelineBaseNone: spec.network may be unimpaired while steps impair it, and the
// step right after a for takes over without a return step in between.
func TestResolveTimelineBaseNone(t *testing.T) {
	spec := v1alpha1.NetworkSpec{Profile: v1alpha1.ProfileNone, Timeline: []v1alpha1.NetworkStep{
		{At: at(time.Second), For: durp(time.Second), Profile: "lte"},
		{At: at(2 * time.Second), Outage: true},
	}}
	steps, err := ResolveTimeline(spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 || steps[1].Index != 1 {
		t.Fatalf("steps = %+v", steps)
	}
	lte, _ := LookupProfile("lte")
	if steps[0].Link.Up.Delay != lte.Link.Up.Delay || steps[0].Link.MTU != 0 {
		t.Errorf("lte step = %v", steps[0].Link)
	}
}

// TestResolveTimelineErrors: each refusal names the step's field.
func TestResolveTimelineErrors(t *testing.T) {
	base := v1alpha1.NetworkSpec{Profile: "lte"}
	for _, c := range []struct {
		name  string
		steps []v1alpha1.NetworkStep
		want  string
	}{
		{"same at", []v1alpha1.NetworkStep{{At: at(time.Second), Outage: true}, {At: at(time.Second), Profile: "3g"}},
			"spec.network.timeline[1].at: 1s is also spec.network.timeline[0]'s at"},
		{"overlap", []v1alpha1.NetworkStep{{At: at(5 * time.Second), Profile: "3g"}, {At: at(time.Second), For: durp(5 * time.Second), Outage: true}},
			"spec.network.timeline[0].at: 5s is before spec.network.timeline[1] has ended"},
		{"negative at", []v1alpha1.NetworkStep{{At: at(-time.Second), Outage: true}},
			"spec.network.timeline[0].at: -1s is outside"},
		{"zero for", []v1alpha1.NetworkStep{{At: at(time.Second), For: durp(0), Outage: true}},
			"spec.network.timeline[0].for:"},
		{"outage with fields", []v1alpha1.NetworkStep{{At: at(time.Second), Outage: true, LinkSpec: v1alpha1.LinkSpec{LossPercent: strp("1")}}},
			"spec.network.timeline[0].outage:"},
		{"unknown profile", []v1alpha1.NetworkStep{{At: at(time.Second), Profile: "5g-mars"}},
			"spec.network.timeline[0].profile: unknown profile"},
		{"bad percent", []v1alpha1.NetworkStep{{At: at(time.Second), Down: &v1alpha1.LinkSpec{LossPercent: strp("200")}}},
			"spec.network.timeline[0].down.lossPercent:"},
		{"reorder without delay", []v1alpha1.NetworkStep{{At: at(time.Second), Profile: "custom", LinkSpec: v1alpha1.LinkSpec{ReorderPercent: strp("1")}}},
			"spec.network.timeline[0].up.reorderPercent:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := base
			spec.Timeline = c.steps
			_, err := ResolveTimeline(spec)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

// TestCheckTimelineWithin: a step at or after the end of workload.duration is refused; the
// return at the end is not; messages mode (0) refuses nothing.
func TestCheckTimelineWithin(t *testing.T) {
	steps, err := ResolveTimeline(v1alpha1.NetworkSpec{Profile: v1alpha1.ProfileNone, Timeline: []v1alpha1.NetworkStep{
		{At: at(time.Second), For: durp(time.Hour), Outage: true},
		{At: at(2 * time.Hour), Profile: "lte"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckTimelineWithin(steps[:2], 2*time.Second); err != nil {
		t.Errorf("return after the end refused: %v", err)
	}
	err = CheckTimelineWithin(steps, time.Hour)
	if err == nil || !strings.HasPrefix(err.Error(), "spec.network.timeline[1].at: 2h0m0s is not before the end") {
		t.Errorf("err = %v", err)
	}
	if err := CheckTimelineWithin(steps, 0); err != nil {
		t.Errorf("messages mode: %v", err)
	}
}

// TestCheckOutagesWithinKeepAlive: a step that cuts the uplink off for longer than 1.5 × the
// keep-alive is refused, naming the step and the limit; one that ends in time, a downlink-only
// cut, a protocol without keep-alive and keep-alive off pass.
func TestCheckOutagesWithinKeepAlive(t *testing.T) {
	resolve := func(steps ...v1alpha1.NetworkStep) []Step {
		t.Helper()
		s, err := ResolveTimeline(v1alpha1.NetworkSpec{Profile: v1alpha1.ProfileNone, Timeline: steps})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	hundred := "100"
	for _, c := range []struct {
		name      string
		steps     []Step
		window    time.Duration
		keepAlive time.Duration
		want      string
	}{
		{"a 5 s outage against a 2 s keep-alive", resolve(v1alpha1.NetworkStep{At: at(time.Second), For: durp(5 * time.Second), Outage: true}),
			time.Minute, 2 * time.Second, "spec.network.timeline[0]: the uplink is cut off for 5s, longer than 1.5 × spec.mqtt.keepAliveSeconds (1.5 × 2s = 3s)"},
		{"an outage to the end of the run", resolve(v1alpha1.NetworkStep{At: at(time.Second), Outage: true}),
			time.Minute, 10 * time.Second, "cut off for 59s"},
		{"an outage to the end of a messages-mode run", resolve(v1alpha1.NetworkStep{At: at(time.Second), Outage: true}),
			0, 10 * time.Second, "cut off until the end of the run"},
		{"100 % uplink loss", resolve(v1alpha1.NetworkStep{At: at(time.Second), Up: &v1alpha1.LinkSpec{LossPercent: &hundred}}),
			time.Minute, 10 * time.Second, "spec.network.timeline[0]: the uplink is cut off"},
		{"an outage within the keep-alive", resolve(v1alpha1.NetworkStep{At: at(time.Second), For: durp(3 * time.Second), Outage: true}),
			time.Minute, 2 * time.Second, ""},
		{"the downlink alone", resolve(v1alpha1.NetworkStep{At: at(time.Second), Down: &v1alpha1.LinkSpec{LossPercent: &hundred}}),
			time.Minute, 2 * time.Second, ""},
		{"no keep-alive (HTTP, Kafka, or 0)", resolve(v1alpha1.NetworkStep{At: at(time.Second), Outage: true}),
			time.Minute, 0, ""},
	} {
		err := CheckOutagesWithinKeepAlive(c.steps, c.window, c.keepAlive)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
