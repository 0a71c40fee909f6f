package netem

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
)

// MaxStepAt bounds a step's at and for, as the API does.
const MaxStepAt = 24 * time.Hour

// Step is one change of the link during a run: from At on (counted from the start of the
// measured window) the link is Link.
type Step struct {
	// At is when the step begins, since the measured window began.
	At time.Duration
	// Link is the whole link from At on (not a difference to the step before).
	Link Link
	// Index is the step's place in spec.network.timeline; -1 for the return to spec.network's
	// link when a step's for ends.
	Index int
	// Description says what the step does, in the manifest's words: "outage", "profile lte,
	// delay 300ms", "end of timeline[0]: back to spec.network".
	Description string
}

// Path names the step in errors and results: spec.network.timeline[i], or the step it ends.
func (s Step) Path() string {
	if s.Index < 0 {
		return "spec.network"
	}
	return fmt.Sprintf("spec.network.timeline[%d]", s.Index)
}

// ResolveTimeline resolves spec.network.timeline into the link of each step, sorted by At. Each
// step's link is spec.network's with the step's profile and fields applied — steps do not build
// on each other; an outage loses every packet both ways; a step with for is followed by a step
// back to spec.network's link (Index -1), unless the next step begins right then. Steps keep
// spec.network's MTU and direction: the emulated interfaces cannot change their MTU mid-run, and
// direction says which way is impaired at all. Errors name the field
// (spec.network.timeline[2].at: …), as the API server's rules would, because local runs parse
// manifests without one.
func ResolveTimeline(spec v1alpha1.NetworkSpec) ([]Step, error) {
	if len(spec.Timeline) == 0 {
		return nil, nil
	}
	if len(spec.Timeline) > 32 {
		return nil, fmt.Errorf("spec.network.timeline: %d steps, at most 32", len(spec.Timeline))
	}
	base, err := Resolve(spec)
	if err != nil {
		return nil, err
	}
	order := make([]int, len(spec.Timeline))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		return spec.Timeline[order[a]].At.Duration < spec.Timeline[order[b]].At.Duration
	})
	var steps []Step
	for k, i := range order {
		s := spec.Timeline[i]
		path := fmt.Sprintf("spec.network.timeline[%d]", i)
		if s.At.Duration < 0 || s.At.Duration > MaxStepAt {
			return nil, fmt.Errorf("%s.at: %v is outside 0s..24h", path, s.At.Duration)
		}
		if s.For != nil && (s.For.Duration <= 0 || s.For.Duration > MaxStepAt) {
			return nil, fmt.Errorf("%s.for: %v must be above 0s and at most 24h", path, s.For.Duration)
		}
		if k > 0 {
			j := order[k-1]
			prev := spec.Timeline[j]
			if prev.At.Duration == s.At.Duration {
				return nil, fmt.Errorf("%s.at: %v is also spec.network.timeline[%d]'s at; two steps cannot start at once", path, s.At.Duration, j)
			}
			if prev.For != nil && prev.At.Duration+prev.For.Duration > s.At.Duration {
				return nil, fmt.Errorf("%s.at: %v is before spec.network.timeline[%d] has ended (at %v + for %v)", path, s.At.Duration, j, prev.At.Duration, prev.For.Duration)
			}
		}
		link, err := stepLink(spec, base, s, path)
		if err != nil {
			return nil, err
		}
		steps = append(steps, Step{At: s.At.Duration, Link: link, Index: i, Description: describeStep(s)})
		if s.For != nil {
			end := s.At.Duration + s.For.Duration
			if k+1 < len(order) && spec.Timeline[order[k+1]].At.Duration == end {
				continue // the next step takes over right then
			}
			steps = append(steps, Step{At: end, Link: base, Index: -1, Description: fmt.Sprintf("end of timeline[%d]: back to spec.network", i)})
		}
	}
	return steps, nil
}

// CheckOutagesWithinKeepAlive refuses a step that cuts the uplink off (an outage, or 100 % loss
// up) for longer than the broker waits before it closes a silent client: 1.5 × the keep-alive
// interval (MQTT 3.1.1 §3.1.2.10, MQTT 5 §3.1.2.11). The broker would drop every client, and
// msgbench's clients do not reconnect, so the run could only fail. A step lasts until the next
// one begins, or the end of the window (window 0: unknown, the step is taken to last for ever).
// keepAlive 0 (keep-alive off, or a protocol without it) checks nothing.
func CheckOutagesWithinKeepAlive(steps []Step, window, keepAlive time.Duration) error {
	if keepAlive <= 0 {
		return nil
	}
	limit := keepAlive * 3 / 2
	for i, s := range steps {
		if s.Link.Up.Loss != FractionOne {
			continue
		}
		end := time.Duration(math.MaxInt64)
		if i+1 < len(steps) {
			end = steps[i+1].At
		} else if window > 0 {
			end = window
		}
		if end-s.At <= limit {
			continue
		}
		long := "until the end of the run"
		if end != time.Duration(math.MaxInt64) {
			long = "for " + (end - s.At).String()
		}
		return fmt.Errorf("%s: the uplink is cut off %s, longer than 1.5 × spec.mqtt.keepAliveSeconds (1.5 × %v = %v): the broker "+
			"closes every client it hears nothing from for that long, and msgbench's clients do not reconnect, so the run "+
			"could only fail; shorten the step, or raise spec.mqtt.keepAliveSeconds (0 turns keep-alive off)", s.Path(), long, keepAlive, limit)
	}
	return nil
}

// CheckTimelineWithin refuses explicit steps that would begin at or after the end of a
// measured window of length window (workload.duration); 0 means the length is not known in
// advance (workload.messages), and nothing is refused. A return to spec.network's link at or
// after the end is no error: that step simply lasts until the end.
func CheckTimelineWithin(steps []Step, window time.Duration) error {
	if window <= 0 {
		return nil
	}
	for _, s := range steps {
		if s.Index >= 0 && s.At >= window {
			return fmt.Errorf("%s.at: %v is not before the end of the measured window (spec.workload.duration %v), so the step would never apply", s.Path(), s.At, window)
		}
	}
	return nil
}

// stepLink is the link during step s: spec.network's (or s.profile's preset) with s's fields
// applied, then spec.network's direction and MTU.
func stepLink(spec v1alpha1.NetworkSpec, base Link, s v1alpha1.NetworkStep, path string) (Link, error) {
	if s.Outage {
		if s.Profile != "" || s.LinkSpec != (v1alpha1.LinkSpec{}) || s.Up != nil || s.Down != nil {
			return Link{}, fmt.Errorf("%s.outage: outage drops every packet both ways, so the step takes no other link field", path)
		}
		// Both ways, whatever spec.network.direction says: an outage is the link gone.
		out := Link{MTU: base.MTU}
		out.Up.Loss, out.Down.Loss = FractionOne, FractionOne
		return out, nil
	}
	link := base
	switch s.Profile {
	case "":
	case v1alpha1.ProfileCustom:
		link = Link{MTU: base.MTU}
	case v1alpha1.ProfileNone:
		if s.LinkSpec != (v1alpha1.LinkSpec{}) || s.Up != nil || s.Down != nil {
			return Link{}, fmt.Errorf("%s.profile: none applies no impairment, so the step takes no other link field", path)
		}
		link = Link{MTU: base.MTU}
	default:
		p, ok := LookupProfile(s.Profile)
		if !ok {
			return Link{}, fmt.Errorf("%s.profile: unknown profile %q; use one of %s, or custom", path, s.Profile, profileNames())
		}
		link = p.Link
		link.MTU = base.MTU // the interfaces keep theirs (docs/netem.md)
	}
	var err error
	if link.Up, err = override(link.Up, s.LinkSpec, path); err != nil {
		return Link{}, err
	}
	if link.Down, err = override(link.Down, s.LinkSpec, path); err != nil {
		return Link{}, err
	}
	if s.Up != nil {
		if link.Up, err = override(link.Up, *s.Up, path+".up"); err != nil {
			return Link{}, err
		}
	}
	if s.Down != nil {
		if link.Down, err = override(link.Down, *s.Down, path+".down"); err != nil {
			return Link{}, err
		}
	}
	switch spec.Direction {
	case v1alpha1.DirectionTo:
		link.Down = Impairment{}
	case v1alpha1.DirectionFrom:
		link.Up = Impairment{}
	}
	for _, d := range []struct {
		imp  Impairment
		path string
	}{{link.Up, path + ".up"}, {link.Down, path + ".down"}} {
		if d.imp.Reorder > 0 && d.imp.Delay == 0 {
			return Link{}, fmt.Errorf("%s.reorderPercent: reordering needs a delay (reordered packets overtake delayed ones); set delay too", d.path)
		}
		if d.imp.Jitter > 0 && d.imp.Delay == 0 {
			return Link{}, fmt.Errorf("%s.jitter: jitter varies the delay, so it needs a delay; set delay too", d.path)
		}
	}
	return link, nil
}

// describeStep says what s does in the manifest's own words: "outage", or its profile and the
// fields it sets ("profile lte, delay 300ms, up: bandwidth 50kbit").
func describeStep(s v1alpha1.NetworkStep) string {
	if s.Outage {
		return "outage"
	}
	var parts []string
	if s.Profile != "" {
		parts = append(parts, "profile "+string(s.Profile))
	}
	if f := linkFields(s.LinkSpec); f != "" {
		parts = append(parts, f)
	}
	for _, d := range []struct {
		name string
		l    *v1alpha1.LinkSpec
	}{{"up", s.Up}, {"down", s.Down}} {
		if d.l != nil {
			if f := linkFields(*d.l); f != "" {
				parts = append(parts, d.name+": "+f)
			}
		}
	}
	if len(parts) == 0 {
		return "back to spec.network"
	}
	return strings.Join(parts, ", ")
}

// linkFields lists the fields set in l as "name value", in the API's JSON names and order, so
// that fields added to LinkSpec show up without a change here.
func linkFields(l v1alpha1.LinkSpec) string {
	data, err := json.Marshal(l)
	if err != nil {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // {
		return ""
	}
	var parts []string
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return strings.Join(parts, ", ")
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return strings.Join(parts, ", ")
		}
		v := string(raw)
		var str string
		if json.Unmarshal(raw, &str) == nil {
			v = str
		}
		parts = append(parts, fmt.Sprint(key)+" "+v)
	}
	return strings.Join(parts, ", ")
}

// CurrentStep is the index in steps of the step in force at elapsed since the measured window
// began: the last one whose At has come; -1 before the first (spec.network's link).
func CurrentStep(steps []Step, elapsed time.Duration) int {
	cur := -1
	for k, s := range steps {
		if s.At <= elapsed {
			cur = k
		}
	}
	return cur
}
