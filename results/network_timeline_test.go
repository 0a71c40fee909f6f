package results

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestNetworkTimelineMerge: the merged network.timeline has each step once, at the latest time a
// part saw it take effect, sorted by plan; it survives a JSON round trip next to the link's
// description, and the parts' shared network map is not changed.
func TestNetworkTimelineMerge(t *testing.T) {
	zero, one := 0, 1
	shared := map[string]any{"profile": "none"}
	points := func() []TimelinePoint { return []TimelinePoint{{T: 1}, {T: 2}, {T: 3}, {T: 4}} }
	a := &Result{Name: "b", Phase: "Succeeded", Network: shared, Timeline: points()}
	a.SetNetworkTimeline([]NetworkStepMark{
		{At: 3.01, Planned: 3, Step: &one, Description: "profile lte"},
		{At: 1.002, Planned: 1, Step: &zero, Description: "outage"},
	})
	b := &Result{Name: "b", Phase: "Succeeded", Network: shared, Timeline: points()}
	b.SetNetworkTimeline([]NetworkStepMark{{At: 1.004, Planned: 1, Step: &zero, Description: "outage"}})
	c := &Result{Name: "b", Phase: "Succeeded", Network: shared, Timeline: points()}
	if _, ok := shared["timeline"]; ok {
		t.Fatal("SetNetworkTimeline changed the shared network map")
	}
	m, err := Merge([]*Result{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	want := []NetworkStepMark{
		{At: 1.004, Planned: 1, Step: &zero, Description: "outage"},
		{At: 3.01, Planned: 3, Step: &one, Description: "profile lte"},
	}
	if got := m.NetworkTimeline(); !reflect.DeepEqual(got, want) {
		t.Fatalf("merged timeline = %+v, want %+v", got, want)
	}
	// Each step marks the interval it took effect in: (1, 2] and (3, 4].
	var marked []string
	for _, p := range m.Timeline {
		marked = append(marked, p.Network)
	}
	if !reflect.DeepEqual(marked, []string{"", "outage", "", "profile lte"}) {
		t.Errorf("timeline marks %q", marked)
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.NetworkTimeline(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after JSON: %+v", got)
	}
	if back.Network.(map[string]any)["profile"] != "none" {
		t.Errorf("network lost its profile: %v", back.Network)
	}
	if (&Result{}).NetworkTimeline() != nil {
		t.Error("a result without network has a timeline")
	}
}
